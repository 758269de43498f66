from jobs.bench_ops import with_defaults


def test_table1_defaults_fill_only_missing_keys():
    argv = with_defaults(["parties=3"])
    assert argv[0] == "--multirun" and "parties=3" in argv and "parties=2" not in argv
    assert "arms=100" in argv and "runtime=local,ray" in argv


def test_an_explicit_multirun_flag_is_kept_once():
    argv = with_defaults(["-m", "arms=10,100"])
    assert argv.count("-m") == 1 and "--multirun" not in argv and "arms=100" not in argv
