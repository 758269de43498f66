"""The linucb_ds and spectral_ucb_ds experiments: runs, Parquet columns, refused keys, resumes."""

import pyarrow.parquet as pq
import pytest
import yaml

from jobs.run import run
from ppml.experiments.config import RunConfig
from ppml.experiments.linucb_ds import linucb_ds
from ppml.experiments.results import read_results
from ppml.protocols.linucb_ds import protocol
from tests.experiments.summaries import fits
from tests.protocols.linucb_ds.lost import CompKilledAtRound10, CompLostAtRound10
from tests.runtime.bars import final

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
    assert last["plaintext_lean_s"] > 0
    # the lean loop takes the float reference's arms up to float64 rounding on near-ties, which
    # SpectralUCB-DS's eigenbasis (d = K, exact ties in exact arithmetic) has at many steps
    assert last["lean_arm_agreement"] == 1.0 or experiment == "spectral_ucb_ds"
    assert 0 < last["slowdown_online"] < last["slowdown_total"]
    assert last["slowdown_online"] == last["online_s"] / last["plaintext_lean_s"]
    assert last["slowdown_total"] == \
        (last["keygen_s"] + last["wall_s"]) / last["plaintext_lean_s"]


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


RESUMED = [*SMALL, "arms=5", "dims=3", "horizon=12", "seed=3", "checkpoint_every=4"]
REPLAYED = [False] * 8 + [True] * 2 + [False] * 2
"""Cut at step 11 (round 10), resumed from step 8: steps 9 and 10 ran twice."""


def columns(items: list, **keys) -> RunConfig:
    """The config of command-line ``items`` (key=value, values as YAML) and ``keys``."""
    return RunConfig.from_columns({**{key: yaml.safe_load(value) for key, value in
                                      (item.split("=", 1) for item in items)}, **keys})


def arms_and_rewards(rows) -> list:
    return [(row["arm"], row["reward"]) for row in sorted(rows, key=lambda row: row["step"])]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> list:
    out = linucb_ds(columns(RESUMED[:-1], experiment="linucb_ds",
                            results_dir=str(tmp_path_factory.mktemp("uninterrupted"))))
    assert not any(row["replayed"] for row in out.rows)
    assert fits(out.table) and "exact sum" in out.table
    assert "\n\n" not in out.table                       # one block: the columns fit
    return arms_and_rewards(out.rows)


def test_a_cut_run_resumes_by_its_run_id(compose_run_config, tmp_path, monkeypatch,
                                        uninterrupted):
    """runtime=local: a run cut at step 11 goes on with ``resume=<run_id>`` from step 8 to the
    uninterrupted run's arms and rewards, says which steps it replayed, and leaves no
    checkpoint behind."""
    keys = ["experiment=linucb_ds", *RESUMED, f"results_dir={tmp_path}"]
    with monkeypatch.context() as patch:
        patch.setattr(protocol, "Comp", CompLostAtRound10)
        with pytest.raises(ConnectionError, match="round 10"):
            run(compose_run_config(*keys, "run_id=cut"))
    path = run(compose_run_config(*keys, "resume=cut"))
    rows = pq.read_table(path).sort_by("step").to_pylist()
    assert path.stem == "cut" and arms_and_rewards(rows) == uninterrupted
    assert [row["replayed"] for row in rows] == REPLAYED
    assert rows[-1]["sum_exact"] and rows[-1]["arm_agreement"] == 1.0
    assert not (tmp_path / "checkpoints" / "cut").exists()


@pytest.mark.slow
def test_a_killed_comp_actor_restarts_the_run_by_itself(ray_cluster, tmp_path, monkeypatch,
                                                        uninterrupted):
    """runtime=ray: Comp's actor killed (SIGKILL) at step 11; the run starts again from its
    last checkpoints (``restarts``) and ends with the uninterrupted run's arms and rewards."""
    monkeypatch.setattr(protocol, "Comp", CompKilledAtRound10)
    out = linucb_ds(columns(RESUMED, experiment="linucb_ds", runtime="ray", run_id="killed",
                            results_dir=str(tmp_path), party_timeout_s=30))
    assert (tmp_path / "checkpoints" / "killed" / "comp" / "killed").exists()
    assert arms_and_rewards(out.rows) == uninterrupted
    assert [row["replayed"] for row in out.rows] == REPLAYED
    assert out.summary["sum_exact"]


def test_progress_draws_key_generation_pool_and_steps_bars_and_false_none(
        compose_run_config, tmp_path, capfd):
    sizes = ["dataset=synthetic", "key_bits=512", "insecure_key_bits_ok=true", "arms=4",
             "dims=2", "horizon=5", f"results_dir={tmp_path}"]
    run(compose_run_config("experiment=linucb_ds", *sizes, "progress=true"))
    shown = capfd.readouterr().err
    assert "2/2" in final(shown, "linucb_ds key generation")
    assert "5/5" in final(shown, "linucb_ds offline pool")          # 4 rounds' r^n and step 5's
    assert "5/5" in final(shown, "linucb_ds steps")
    run(compose_run_config("experiment=linucb_ds", *sizes, "progress=false"))
    assert "linucb_ds" not in capfd.readouterr().err


@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["local", "ray"])
def test_with_two_workers_the_streamed_pool_shows_its_bar_to_the_end(
        ray_cluster, compose_run_config, tmp_path, capfd, runtime):
    """The pool fills from Ray tasks during the steps: its bar advances as their values arrive
    and is complete when the run returns (under runtime=ray drawn by the driver for P)."""
    run(compose_run_config("experiment=linucb_ds", "dataset=synthetic", "key_bits=512",
                           "insecure_key_bits_ok=true", "arms=4", "dims=2", "horizon=5",
                           "workers=2", f"runtime={runtime}", f"results_dir={tmp_path}"))
    out, err = capfd.readouterr()
    assert "5/5" in final(err, "linucb_ds offline pool")
    assert "2/2" in final(err, "linucb_ds key generation") and "5/5" in final(err,
                                                                              "linucb_ds steps")
    assert "pid=" not in out + err
