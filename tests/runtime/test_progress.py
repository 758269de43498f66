"""ppml.runtime.progress in one process: a bar per phase on stderr, or none.

The Ray relay (a worker's bar drawn by the driver) is tested with a whole run:
tests/experiments/test_private_cb.py."""

from ppml.runtime import progress


def test_a_bar_draws_on_stderr_and_a_disabled_one_draws_nothing(capsys):
    with progress.bar("phase one", 3, unit="key") as phase:
        phase.update(2)
        phase.update()
    shown = capsys.readouterr()
    assert "phase one" in shown.err and "3/3" in shown.err and shown.out == ""
    with progress.bar("phase two", 3, enabled=False) as phase:
        phase.update(3)
    assert capsys.readouterr().err == ""


def test_track_counts_from_initial_to_total(capsys):
    assert list(progress.track(range(2, 5), "steps", 5, initial=2)) == [2, 3, 4]
    assert "5/5" in capsys.readouterr().err


def test_a_stage_reaches_one_of_one_when_its_phase_ends_and_stays_at_zero_if_it_fails(capsys):
    with progress.stage("key generation", unit="key"):
        pass
    err = capsys.readouterr().err
    assert "key generation" in err and "1/1" in err and "key/s" in err
    try:
        with progress.stage("failing set-up"):
            raise KeyError("the phase failed")
    except KeyError:
        pass
    err = capsys.readouterr().err
    assert "failing set-up" in err and "0/1" in err and "1/1" not in err
    with progress.stage("silent", enabled=False):
        pass
    assert capsys.readouterr().err == ""


def test_showing_false_silences_every_bar_and_the_setting_comes_back(capsys):
    with progress.showing(False):
        list(progress.track(range(3), "silenced"))
        with progress.showing(True):
            list(progress.track(range(3), "shown again"))
        list(progress.track(range(3), "silenced too"))
    list(progress.track(range(3), "shown after"))
    err = capsys.readouterr().err
    assert "silenced" not in err and "shown again" in err and "shown after" in err


def test_without_a_relay_flush_and_close_do_nothing():
    progress.flush()
    progress.close()


def test_a_slow_relay_keeps_its_updates_for_the_next_flush_and_a_dead_one_is_forgotten(
        monkeypatch, capsys):
    """A relay that does not answer within the wait (its worker still starting) is asked again
    at the next flush, its bars complete; a relay that died is forgotten."""
    import ray

    class Relay:
        class take:
            @staticmethod
            def remote():
                return "events"
    answers = [ray.exceptions.GetTimeoutError("slow"),
               [("open", "b", "relayed phase", 3, "step", 0), ("close", "b", 3)],
               ray.exceptions.RayActorError()]

    def get(ref, timeout):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "get", get)
    monkeypatch.setattr(progress, "_relay", Relay())
    progress.flush(wait_s=0.1)
    assert progress._relay is not None and capsys.readouterr().err == ""
    progress.flush()
    assert "relayed phase" in capsys.readouterr().err and progress._relay is not None
    progress.flush()
    assert progress._relay is None
