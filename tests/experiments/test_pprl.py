"""The pprl experiment: Hydra composition, rows per trial or episode, refusals."""

import dataclasses

import pytest

from tests.protocols.pprl.cuts import Cut

from ppml.experiments import pprl as experiment
from ppml.experiments.config import RunConfig, load_config
from ppml.experiments.pprl import pprl
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.shares import SharedTable
from tests.runtime.bars import complete


def test_composes_with_task_overrides(compose_run_config):
    config = load_config(compose_run_config("experiment=pprl", "pprl.task=load_balancing",
                                            "pprl.partition=observation",
                                            "pprl.selection=epsilon_greedy"))
    assert (config.pprl.task, config.pprl.partition, config.parties) == (
        "load_balancing", "observation", 2)


def test_random_walk_rows_one_per_method_and_trial():
    out = pprl(RunConfig(experiment="pprl", progress=False,
                         pprl=PPRLOptions(trials=3, steps_per_agent=2000)))
    assert [(r["method"], r["trial"]) for r in out.rows] == [
        (m, t) for m in ("crl", "crl_fixed", "idrl") for t in range(3)]
    assert all(r["episode"] is None and isinstance(r["reached_goal"], bool) for r in out.rows)
    assert "mean_steps_to_goal" in out.table and "reached_goal" in out.table


def test_load_balancing_rows_per_episode_with_a_factory_per_party():
    options = PPRLOptions(task="load_balancing", partition="observation", methods=["rdrl"],
                          trials=2, episodes=5, episode_steps=20)
    out = pprl(RunConfig(experiment="pprl", progress=False, pprl=options))
    assert [(r["trial"], r["episode"]) for r in out.rows] == [
        (t, e) for t in range(2) for e in range(5)]
    assert "final_reward_per_step" in out.table
    three = pprl(RunConfig(experiment="pprl", parties=3, progress=False, pprl=options))
    assert len(three.rows) == 10 and three.rows != out.rows


def test_pprl_rows_carry_the_comparison_with_the_reference():
    options = PPRLOptions(task="CliffWalking-v1", reward_bound=100, steps_per_agent=30,
                          trials=2, methods=["crl_fixed", "pprl"])
    out = pprl(RunConfig(experiment="pprl", progress=False, key_bits=512,
                         insecure_key_bits_ok=True, seed=3, pprl=options))
    rows = [r for r in out.rows if r["method"] == "pprl"]
    assert len(rows) == 2 and all(r["q_equal_reference"] for r in rows)
    assert "2/2" in out.table


def test_record_views_writes_each_agents_view(compose_run_config, tmp_path):
    from jobs.run import run
    from ppml.experiments.results import views_dir
    path = run(compose_run_config(
        "experiment=pprl", "pprl.task=CliffWalking-v1", "pprl.reward_bound=100",
        "pprl.steps_per_agent=20", "pprl.trials=2", "pprl.methods=[pprl]", "key_bits=512",
        "insecure_key_bits_ok=true", "seed=1", "record_views=true", "progress=false",
        f"results_dir={tmp_path}"))
    assert sorted(p.name for p in views_dir(tmp_path, path.stem).iterdir()) == [
        "agent-0.parquet", "agent-1.parquet"]


def test_pprl_by_observation_reports_the_comparison_on_each_trials_last_episode():
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=10, trials=2, methods=["crl_fixed", "pprl"])
    out = pprl(RunConfig(experiment="pprl", progress=False, key_bits=512,
                         insecure_key_bits_ok=True, seed=3, pprl=options))
    rows = [r for r in out.rows if r["method"] == "pprl"]
    assert [r.get("q_equal_reference") for r in rows] == [None, True, None, True]
    assert "2/2" in out.table


@pytest.mark.ray
def test_trials_spread_over_workers_and_together_give_the_rows_of_one_by_one(ray_cluster):
    """workers=2 runs half the trial groups in a Ray task; trials_together=2 runs two trials
    on one engine: every row but the timings and the shared engine costs is the same."""
    def rows(workers, together):
        options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                              episode_steps=10, trials=4, selection="epsilon_greedy",
                              methods=["crl", "pprl"], backend="shares", scale_bits=30,
                              trials_together=together)
        out = pprl(RunConfig(experiment="pprl", progress=False, seed=3, workers=workers,
                             pprl=options))
        kept = ("method", "trial", "episode", "episode_reward", "q_equal_reference",
                "action_agreement", "comparisons")
        return [{k: r.get(k) for k in kept} for r in out.rows]

    assert rows(2, 2) == rows(1, 1)


def results(out) -> list:
    """The rows but their timings and whether they replayed steps."""
    return [{k: v for k, v in row.items() if not k.endswith("_s") and k != "replayed"}
            for row in out.rows]


def resumed_and_counted(monkeypatch, config, name: str) -> tuple:
    """``config`` resumed, and the trials (or groups) of each call to ``name``."""
    calls, run = [], getattr(experiment, name)

    def counted(*args, **kwargs):
        calls.append(args[3])
        return run(*args, **kwargs)
    with monkeypatch.context() as patch:
        patch.setattr(experiment, name, counted)
        return pprl(dataclasses.replace(config, resume="cut")), calls


def test_a_resumed_run_keeps_its_finished_trials_and_resumes_the_cut_one(tmp_path, monkeypatch):
    """PPRL's second trial cut at its step 35 (checkpoints every 20 steps): ``resume=<run_id>``
    takes the finished trials as they were (PPRL's first is not run again), goes on with the
    second from its step 20, and ends with the uninterrupted run's rows, the second trial's
    marked replayed (its steps 21-30 ran twice)."""
    options = PPRLOptions(task="CliffWalking-v1", reward_bound=100, steps_per_agent=30,
                          trials=2, methods=["crl_fixed", "pprl"])
    config = RunConfig(experiment="pprl", progress=False, key_bits=512,
                       insecure_key_bits_ok=True, seed=3, pprl=options, checkpoint_every=20,
                       results_dir=str(tmp_path), run_id="cut")
    with monkeypatch.context() as patch:
        Cut(patch, 2 * 30 + 35)
        with pytest.raises(ConnectionError):
            pprl(config)
    resumed, trials = resumed_and_counted(monkeypatch, config, "run_time_protocol")
    assert trials == [1]
    assert not (tmp_path / "checkpoints" / "cut" / "pprl-trial-1").exists()
    whole = pprl(dataclasses.replace(config, checkpoint_every=0, run_id=None))
    assert results(resumed) == results(whole)
    assert [row["replayed"] for row in resumed.rows] == [False, False, False, True]


def test_a_resumed_run_keeps_its_finished_group_and_resumes_the_cut_one(tmp_path, monkeypatch):
    """The shares backend by observation, trials 0 and 1 together, then 2 (8 steps a group),
    checkpoints every 3 steps; the second group cut at its step 5: ``resume=<run_id>`` takes
    the first group's trials as they were, goes on with the second from its step 3, and ends
    with the uninterrupted run's rows, the third trial's marked replayed."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=4, trials=3, trials_together=2, methods=["pprl"],
                          selection="epsilon_greedy", backend="shares", scale_bits=20)
    config = RunConfig(experiment="pprl", progress=False, seed=3, pprl=options,
                       checkpoint_every=3, results_dir=str(tmp_path), run_id="cut")
    with monkeypatch.context() as patch:
        Cut(patch, 8 + 5, 0, SharedTable, "learn", each=1)
        with pytest.raises(ConnectionError):
            pprl(config)
    resumed, groups = resumed_and_counted(monkeypatch, config, "run_shares_trials")
    assert groups == [[2]]
    assert not (tmp_path / "checkpoints" / "cut" / "pprl-trial-2").exists()
    whole = pprl(dataclasses.replace(config, checkpoint_every=0, run_id=None))
    assert results(resumed) == results(whole)
    assert [row["replayed"] for row in resumed.rows] == [False] * 4 + [True] * 2



def test_progress_draws_a_bar_per_phase_and_false_draws_none(capfd):
    options = PPRLOptions(task="CliffWalking-v1", reward_bound=100, steps_per_agent=5,
                          trials=1, methods=["crl_fixed", "pprl"])
    config = RunConfig(experiment="pprl", progress=True, key_bits=512,
                       insecure_key_bits_ok=True, seed=3, pprl=options)
    pprl(config)
    shown = capfd.readouterr().err
    for phase in ("pprl crl_fixed", "pprl pprl", "pprl set-up (keys)", "pprl turns"):
        assert complete(shown, phase)
    pprl(RunConfig.from_columns({**config.columns(), "progress": False}))
    assert "pprl" not in capfd.readouterr().err
