"""The linucb_ds and spectral_ucb_ds experiments: runs, Parquet columns, refused keys."""

import pytest

from jobs.run import run
from ppml.experiments.results import read_results

SMALL = ["dataset=synthetic", "key_bits=512", "insecure_key_bits_ok=true", "progress=false"]


@pytest.mark.parametrize("experiment, sizes", [
    ("linucb_ds", ["arms=6", "dims=3", "horizon=12"]),
    ("linucb_ds", ["arms=6", "dims=3", "horizon=12", "linucb_ds.obfuscator=djn"]),
    ("spectral_ucb_ds", ["arms=12", "dims=3", "horizon=6"]),
])
def test_run_writes_secure_and_reference_columns(compose_run_config, tmp_path, experiment, sizes):
    cfg = compose_run_config(f"experiment={experiment}", *SMALL, *sizes,
                             f"results_dir={tmp_path}")
    run(cfg)
    rows = read_results(tmp_path).to_pylist()
    horizon = int(sizes[2].split("=")[1])
    assert len(rows) == horizon and [r["step"] for r in rows] == list(range(horizon))
    last = rows[-1]
    assert last["sum_exact"] and last["arm_agreement"] == 1.0
    assert last["secure_cumulative_reward"] == last["plaintext_cumulative_reward"]
    assert all(r["arm"] == r["plaintext_arm"] for r in rows)
    for column in ("time_3i_s", "time_3ii_s", "time_4i_s", "time_rest_s", "time_P_s",
                   "time_Comp_s", "encryptions", "decryptions", "additions", "multiplications",
                   "fig5_decryptions", "score_error", "first_tie_step", "key_bits"):
        assert column in last
    assert last["decryptions"] < last["fig5_decryptions"]      # packing


def test_small_keys_are_refused_without_the_flag(compose_run_config, tmp_path):
    cfg = compose_run_config("experiment=linucb_ds", "dataset=synthetic", "key_bits=1024",
                             f"results_dir={tmp_path}")
    with pytest.raises(ValueError, match="key_bits must be >= 2048"):
        run(cfg)


def test_an_unknown_obfuscator_is_refused(compose_run_config, tmp_path):
    cfg = compose_run_config("experiment=linucb_ds", *SMALL, "linucb_ds.obfuscator=short",
                             f"results_dir={tmp_path}")
    with pytest.raises(ValueError, match="obfuscator must be one of full, djn, multibase; got 'short'"):
        run(cfg)


def test_comps_view_is_written_beside_the_run(compose_run_config, tmp_path):
    import pyarrow.parquet as pq
    from ppml.experiments.results import views_dir
    path = run(compose_run_config("experiment=linucb_ds", *SMALL, "arms=4", "dims=2",
                                  "horizon=6", "seed=3", "record_views=true",
                                  f"results_dir={tmp_path}"))
    view = pq.read_table(views_dir(tmp_path, path.stem) / "Comp.parquet").to_pylist()
    assert sorted({r["t"] for r in view if r["l"] == 4}) == [1, 2, 3, 4, 5]
    assert [r["t"] for r in view if r["l"] == 6] == [6]


def test_the_engines_precision_is_refused_naming_the_paillier_scale(compose_run_config, tmp_path):
    cfg = compose_run_config("experiment=linucb_ds", *SMALL, "precision_bits=24",
                             f"results_dir={tmp_path}")
    with pytest.raises(ValueError, match="linucb_ds.scale_bits"):
        run(cfg)
