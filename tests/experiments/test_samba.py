"""The samba experiment: Hydra composition, Parquet columns, agreement, refusals, resume."""

import pytest

from ppml.experiments.config import RunConfig, load_config
from ppml.experiments.samba import samba
from ppml.protocols.samba.config import SambaOptions
from tests.experiments.summaries import fits
from tests.runtime.bars import final


def test_composes_with_algorithm_overrides(compose_run_config):
    config = load_config(compose_run_config("experiment=samba", "samba.algorithm=softmax",
                                            "samba.softmax_tau=0.2", "dataset=synthetic"))
    assert (config.samba.algorithm, config.samba.softmax_tau, config.key_bits) == (
        "softmax", 0.2, 2048)


def test_run_reports_both_rewards_times_and_counts():
    out = samba(RunConfig(experiment="samba", dataset="synthetic", arms=4, horizon=40, seed=2,
                          key_bits=512, insecure_key_bits_ok=True, progress=False,
                          samba=SambaOptions(algorithm="pursuit")))
    s = out.summary
    assert s["secure_cumulative_reward"] == s["plaintext_cumulative_reward"]
    assert s["arm_agreement"] == 1.0
    assert s["aes_gcm_ops"] == s["theorem4_aes_gcm_ops"] == 4 * 4 * 36 * 2
    assert s["paillier_encryptions"] == 4 and s["paillier_decryptions"] == 1
    for key in ("plaintext_wall_s", "distributed_wall_s", "wall_s", "comp_s", "controller_s",
                "owner_mean_s", "dc_s", "keygen_s", "offline_s", "setup_s", "steps_s", "end_s",
                "step_ms", "distributed_step_ms"):
        assert s[key] >= 0
    assert 0 < s["slowdown_online"] < s["slowdown_total"]
    assert s["slowdown_online"] == (s["wall_s"] - s["setup_s"]) / s["plaintext_wall_s"]
    assert s["slowdown_total"] == s["wall_s"] / s["plaintext_wall_s"]
    assert [r["arm"] for r in out.rows] == [r["plaintext_arm"] for r in out.rows]
    header, _, line = out.table.splitlines()                         # the compact summary
    assert header.split()[:5] == ["dataset", "algorithm", "mask", "K", "N"]
    assert fits(header) and line.split()[:5] == ["synthetic", "pursuit", "mpc", "4", "40"]
    assert header.split()[-1] == "slowdown"


@pytest.mark.parametrize("overrides, message", [
    ({"key_bits": 1024}, "key_bits must be >= 2048"),
    ({"samba.algorithm": "greedy"}, "algorithm must be one of"),
    ({"samba.pursuit_beta": 2.0}, "pursuit_beta must be in"),
    ({"samba.denominator": "items"}, "denominator must be one of")])
def test_bad_keys_are_refused(overrides, message):
    with pytest.raises(ValueError, match=message):
        RunConfig.from_columns({"experiment": "samba", **overrides})


def test_recorded_views_are_written_beside_the_run(compose_run_config, tmp_path):
    from jobs.run import run
    from ppml.experiments.results import views_dir
    import pyarrow.parquet as pq
    path = run(compose_run_config("experiment=samba", "dataset=synthetic", "arms=3", "horizon=9",
                                  "key_bits=512", "insecure_key_bits_ok=true", "seed=1",
                                  "record_views=true", f"results_dir={tmp_path}"))
    folder = views_dir(tmp_path, path.stem)
    assert sorted(p.name for p in folder.iterdir()) == [
        "Comp.parquet", "Controller.parquet", "DC.parquet", "DO_group_0-2.parquet"]
    bits = pq.read_table(folder / "DO_group_0-2.parquet").to_pylist()
    assert {r["position"] for r in bits} == {0, 1, 2}                  # each DO, its own bit
    assert all(sum(r["value"] for r in bits if r["t"] == t) == 1 for t in range(4, 10))
    (dc,) = pq.read_table(folder / "DC.parquet").to_pylist()
    assert dc["value"] == pq.read_table(path).column("secure_cumulative_reward")[0].as_py()
    comp = pq.read_table(folder / "Comp.parquet")
    assert comp.column_names == ["t", "l", "position", "value", "exact"]
    steps = {}
    for r in comp.to_pylist():               # its 3 shares, then what the Controller sent it
        steps.setdefault(r["t"], []).append(r["position"])
    assert sorted(steps) == list(range(4, 10))
    assert all(p == list(range(len(p))) and len(p) > 3 for p in steps.values())


def test_a_cut_run_resumes_by_its_run_id(compose_run_config, tmp_path, monkeypatch):
    """runtime=local: a run whose DO group is lost after step 17 ends with the error; the same
    run_id with resume= goes on from its checkpoint of step 15 to the reference's arms, its
    rows saying that steps 16-17 ran twice, and its checkpoints are deleted once it is written."""
    from jobs.run import run
    from ppml.protocols.samba import protocol
    from tests.protocols.samba.test_checkpoints import CUT, LostGroup
    import pyarrow.parquet as pq
    keys = ["experiment=samba", "dataset=synthetic", "arms=4", "horizon=30", "key_bits=512",
            "insecure_key_bits_ok=true", "seed=3", "samba.algorithm=thompson",
            "checkpoint_every=5", "run_id=cut", f"results_dir={tmp_path}"]
    with monkeypatch.context() as patch:
        patch.setattr(protocol, "DataOwnerGroup", LostGroup)
        with pytest.raises(ConnectionError, match=f"step {CUT + 1}"):
            run(compose_run_config(*keys))
    rows = pq.read_table(run(compose_run_config(*keys, "resume=cut"))).to_pylist()
    assert [r["step"] for r in rows if r["replayed"]] == [16, 17]
    assert [r["arm"] for r in rows] == [r["plaintext_arm"] for r in rows]
    assert not (tmp_path / "checkpoints" / "cut").exists()


def test_progress_draws_a_bar_per_phase_and_false_draws_none(capfd):
    config = RunConfig(experiment="samba", dataset="synthetic", arms=3, horizon=8, seed=2,
                       key_bits=512, insecure_key_bits_ok=True)
    samba(config)
    shown = capfd.readouterr().err
    assert "1/1" in final(shown, "samba key generation")     # DC's key pair made
    assert "1/1" in final(shown, "samba set-up") and "8/8" in final(shown, "samba steps")
    samba(RunConfig.from_columns({**config.columns(), "progress": False}))
    assert "samba" not in capfd.readouterr().err


@pytest.mark.ray
@pytest.mark.slow
def test_under_ray_the_key_generation_bar_ends_when_dc_s_actor_has_its_pair(ray_cluster, capfd):
    samba(RunConfig(experiment="samba", dataset="synthetic", arms=3, horizon=8, key_bits=512,
                    insecure_key_bits_ok=True, runtime="ray"))          # unseeded: no warning
    out, err = capfd.readouterr()
    assert "1/1" in final(err, "samba key generation") and "8/8" in final(err, "samba steps")
    assert "pid=" not in out + err
