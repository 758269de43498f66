"""PPRL partitioned by time with each agent and the dealer their own OS process over TLS links
on loopback (runtime=federated): the local runtime's run in the seeded mode; unseeded, each
agent's own keys and choices still give the fixed-point reference's table and actions; a run
resumes from the checkpoints every party holds (by time and by observation)."""

import dataclasses

import pytest

from ppml.experiments.config import RunConfig
from ppml.experiments.pprl import pprl
from ppml.protocols.pprl.config import PPRLOptions

pytestmark = pytest.mark.slow

OPTIONS = dict(task="FrozenLake-v1", reward_bound=1, steps_per_agent=25, methods=["pprl"],
               trials=2, selection="epsilon_greedy", learner="qlearning", epsilon=0.3)
BASE = {"experiment": "pprl", "key_bits": 512, "insecure_key_bits_ok": True,
        "progress": False, "party_timeout_s": 60}
COLUMNS = ("q_equal_reference", "action_agreement", "steps_to_goal", "reached_goal",
           "encryptions", "decryptions", "divisions", "comparisons")


def _run(tmp_path, runtime: str, seed, rounds: int = 1, parties: int = 2, steps: int = 25,
         **extra):
    options = PPRLOptions(rounds=rounds, **{**OPTIONS, "steps_per_agent": steps})
    return pprl(RunConfig(runtime=runtime, seed=seed, parties=parties,
                          results_dir=str(tmp_path), pprl=options, **BASE, **extra))


def test_federated_agents_give_the_local_run(tmp_path):
    """Three agents, two rounds: the key switches twice, over the links."""
    local, federated = (_run(tmp_path, runtime, 4, rounds=2, parties=3, steps=10)
                        for runtime in ("local", "federated"))
    assert [{c: r[c] for c in COLUMNS} for r in local.rows] == \
        [{c: r[c] for c in COLUMNS} for r in federated.rows]
    assert all(r["q_equal_reference"] and r["action_agreement"] == 1.0 for r in federated.rows)


def test_an_unseeded_federated_run_matches_its_reference(tmp_path):
    out = _run(tmp_path, "federated", None)
    assert all(r["q_equal_reference"] and r["action_agreement"] == 1.0 for r in out.rows)


def test_federated_agents_record_their_views_as_in_one_process(tmp_path):
    """Each agent's view of the first trial comes back in its outputs: the same as the local
    runtime's for the same seeds."""
    local, federated = (_run(tmp_path, runtime, 1, record_views=True)
                        for runtime in ("local", "federated"))
    assert set(federated.views) == {"agent-0", "agent-1"}
    for agent in ("agent-0", "agent-1"):
        mine = federated.views[agent].to_pylist()
        assert mine and [(r["t"], r["l"]) for r in mine] == \
            [(r["t"], r["l"]) for r in local.views[agent].to_pylist()]


def test_federated_agents_give_the_local_run_by_observation(tmp_path):
    """Three agents, the world and the dealer each their own process: the local rows."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=1,
                          episode_steps=3, methods=["pprl"], trials=1,
                          selection="epsilon_greedy", learner="qlearning", epsilon=0.3)
    local, federated = (pprl(RunConfig(runtime=runtime, seed=3, parties=3,
                                       results_dir=str(tmp_path), pprl=options, **BASE))
                        for runtime in ("local", "federated"))
    columns = ("episode_reward", "q_equal_reference", "action_agreement", "encryptions",
               "decryptions", "divisions", "comparisons")
    assert [{c: r.get(c) for c in columns} for r in local.rows] == \
        [{c: r.get(c) for c in columns} for r in federated.rows]
    assert federated.rows[-1]["q_equal_reference"]


def test_federated_agents_on_the_shares_backend_give_the_local_run(tmp_path):
    """Three agents and the engine's dealer each their own process: the holder plays its turn,
    the others follow it over the links; the local rows."""
    options = PPRLOptions(task="FrozenLake-v1", reward_bound=1, steps_per_agent=25,
                          methods=["pprl"], trials=2, selection="epsilon_greedy",
                          learner="sarsa", epsilon=0.3, backend="shares", scale_bits=20)
    local, federated = (pprl(RunConfig(runtime=runtime, seed=6, parties=3,
                                       results_dir=str(tmp_path), pprl=options, **BASE))
                        for runtime in ("local", "federated"))
    columns = ("q_equal_reference", "action_agreement", "steps_to_goal", "rounds",
               "bytes_sent", "comparisons")
    assert [{c: r[c] for c in columns} for r in local.rows] == \
        [{c: r[c] for c in columns} for r in federated.rows]
    assert all(r["q_equal_reference"] and r["action_agreement"] == 1.0 for r in federated.rows)


def test_federated_agents_on_the_shares_backend_by_observation_give_the_local_run(tmp_path):
    """Three agents, the world and the engine's dealer each their own process, two trials
    together on one engine and a third alone: the local rows."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=5, methods=["pprl"], trials=3, trials_together=2,
                          selection="epsilon_greedy", learner="qlearning", epsilon=0.3,
                          backend="shares", scale_bits=20)
    local, federated = (pprl(RunConfig(runtime=runtime, seed=3, parties=3,
                                       results_dir=str(tmp_path), pprl=options, **BASE))
                        for runtime in ("local", "federated"))
    untimed = [[{k: v for k, v in r.items() if not k.endswith("_s")} for r in out.rows]
               for out in (local, federated)]
    assert untimed[0] == untimed[1]
    assert sum(bool(r.get("q_equal_reference")) for r in federated.rows) == 3


def _untimed(out) -> list:
    return [{k: v for k, v in row.items() if not k.endswith("_s") and k != "replayed"}
            for row in out.rows]


def test_a_federated_run_resumes_from_the_checkpoints_every_agent_holds(tmp_path):
    """Two trials of 2 x 25 steps, checkpoints every 20 (and at each trial's end): with
    agent-1's last checkpoint of the first trial gone, the resumed run goes on with it from
    step 40, within agent-1's encrypted turn (its engine with agent-0 made anew), and with the
    second trial at its end; the first run's rows, the first trial's replayed."""
    first = _run(tmp_path, "federated", 4, checkpoint_every=20, run_id="cut")
    folder = tmp_path / "checkpoints" / "cut"
    assert sorted(p.name for p in (folder / "pprl-trial-0").iterdir()) == \
        ["agent-0", "agent-1", "driver"]
    (folder / "pprl-trial-0" / "agent-1" / f"step-{50:012d}.ckpt").unlink()
    again = _run(tmp_path, "federated", 4, checkpoint_every=20, run_id="cut", resume="cut")
    assert _untimed(again) == _untimed(first)
    assert [row["replayed"] for row in again.rows] == [True, False]


def test_a_federated_run_by_observation_resumes_with_each_agents_own_key_share(tmp_path):
    """Unseeded, two episodes of 3 steps, checkpoints every 2: with the world's last
    checkpoint gone the resumed trial goes on from step 4, within the second episode, each
    agent with its own key share (the table stays decryptable) and generators: the table and
    the actions of the fixed-point reference with the agents' own randomness, the first run's
    rewards; the world keeps its joint actions, the dealer nothing."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=3, methods=["pprl"], trials=1,
                          selection="epsilon_greedy", learner="qlearning", epsilon=0.3)
    config = RunConfig(runtime="federated", seed=None, parties=2, results_dir=str(tmp_path),
                       pprl=options, checkpoint_every=2, run_id="cut", **BASE)
    first = pprl(config)
    folder = tmp_path / "checkpoints" / "cut" / "pprl-trial-0"
    assert sorted(p.name for p in folder.iterdir()) == ["agent-0", "agent-1", "driver", "world"]
    (folder / "world" / f"step-{6:012d}.ckpt").unlink()
    again = pprl(dataclasses.replace(config, resume="cut"))
    assert again.rows[-1]["q_equal_reference"] and again.rows[-1]["action_agreement"] == 1.0
    assert [r["episode_reward"] for r in again.rows] == [r["episode_reward"] for r in first.rows]
    assert all(row["replayed"] for row in again.rows)


@pytest.mark.parametrize("partition", ["time", "observation"])
def test_the_shares_backend_resumes_federated_from_each_partys_own_checkpoints(tmp_path,
                                                                               partition):
    """A finished run's checkpoints resumed (each party its own plan and store; by observation
    the world too): by time two trials of 12 steps on the shares, by observation 3 x 4 steps
    a group, checkpoints every 5: the steps after the last checkpoint run again, to the same
    rows, the rows of the trials they belong to marked replayed."""
    options = PPRLOptions(task="FrozenLake-v1", reward_bound=1, steps_per_agent=12,
                          methods=["pprl"], trials=2, selection="epsilon_greedy",
                          learner="sarsa", epsilon=0.3, backend="shares", scale_bits=20) \
        if partition == "time" else \
        PPRLOptions(task="load_balancing", partition="observation", episodes=3,
                    episode_steps=4, methods=["pprl"], trials=2, trials_together=2,
                    selection="epsilon_greedy", backend="shares", scale_bits=20)
    keys = dict(runtime="federated", seed=6, parties=2, results_dir=str(tmp_path),
                pprl=options, checkpoint_every=5, run_id="shares", **BASE)
    whole = pprl(RunConfig(**keys))
    held = sorted(p.name for p in (tmp_path / "checkpoints" / "shares" / "pprl-trial-0")
                  .iterdir())
    assert held == ["agent-0", "agent-1"] + ["world"] * (partition == "observation")
    resumed = pprl(RunConfig(**keys, resume="shares"))
    replayed = [True, True] if partition == "observation" else [False, True]
    assert [r["replayed"] for r in resumed.rows if "q_equal_reference" in r] == replayed
    assert _untimed(resumed) == _untimed(whole)
