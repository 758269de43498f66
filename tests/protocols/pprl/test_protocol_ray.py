"""PPRL with the agents, the dealer (and the world) as Ray actors, each engine's seats
over TLS links: the same run as in this process, also after an agent's actor is killed."""

import pytest

from tests.protocols.pprl.lost import AgentKilledAtStep8

from ppml.experiments.config import RunConfig
from ppml.experiments.pprl import pprl
from ppml.protocols.pprl import observation
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.observation import run_observation_protocol
from ppml.protocols.pprl.protocol import run_time_protocol

pytestmark = pytest.mark.ray

COLUMNS = ("q_equal_reference", "action_agreement", "steps_to_goal", "reached_goal",
           "encryptions", "decryptions", "divisions", "comparisons")


def test_ray_actors_give_the_local_run(ray_cluster):
    """Three agents, two rounds (the key switches when the turn comes back to the owner),
    epsilon-greedy Q-learning on FrozenLake: the same actions, table and counts."""
    options = PPRLOptions(task="FrozenLake-v1", reward_bound=1, steps_per_agent=12, rounds=2,
                          methods=["pprl"], trials=1, selection="epsilon_greedy",
                          learner="qlearning", epsilon=0.3)
    runs = [run_time_protocol(options, 3, 0, 1, 512, True, key_seed=5, runtime=runtime)
            for runtime in ("local", "ray")]
    rows = [run.rows[0] for run in runs]
    assert rows[0]["q_equal_reference"] and rows[0]["action_agreement"] == 1.0
    assert {c: rows[0][c] for c in COLUMNS} == {c: rows[1][c] for c in COLUMNS}
    assert (runs[0].table.q == runs[1].table.q).all()


def test_ray_actors_give_the_local_run_by_observation(ray_cluster):
    """Three agents, the world and the dealer as actors, epsilon-greedy Q-learning on load
    balancing: the same rows, table and counts."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=3, methods=["pprl"], trials=1,
                          selection="epsilon_greedy", learner="qlearning", epsilon=0.3)
    runs = [run_observation_protocol(options, 3, 0, 1, 512, True, key_seed=5, runtime=runtime)
            for runtime in ("local", "ray")]
    columns = ("episode_reward", "q_equal_reference", "action_agreement", "encryptions",
               "decryptions", "divisions", "comparisons")
    assert runs[0].rows[-1]["q_equal_reference"] and runs[0].rows[-1]["action_agreement"] == 1
    assert [{c: r.get(c) for c in columns} for r in runs[0].rows] == \
        [{c: r.get(c) for c in columns} for r in runs[1].rows]
    assert (runs[0].table.q == runs[1].table.q).all()


def test_each_agents_bulk_work_on_its_own_actors_gives_the_same_run(ray_cluster):
    """workers=2: each agent's obfuscators as Ray tasks, its bulk decryptions (the key switch,
    by observation every decryption share) on pinned actors of its own: the same tables."""
    by_time = PPRLOptions(task="FrozenLake-v1", reward_bound=1, steps_per_agent=20, rounds=2,
                          methods=["pprl"], trials=1)
    by_observation = PPRLOptions(task="load_balancing", partition="observation", episodes=1,
                                 episode_steps=5, methods=["pprl"], trials=1)
    for run, options in ((run_time_protocol, by_time),
                         (run_observation_protocol, by_observation)):
        rows = [run(options, 2, 0, 1, 512, True, key_seed=5, workers=workers).rows[-1]
                for workers in (1, 2)]
        assert rows[1]["q_equal_reference"] and rows[1]["action_agreement"] == 1.0
        assert rows[0]["decryptions"] == rows[1]["decryptions"]


def test_a_killed_agent_actor_restarts_the_trial_by_observation(ray_cluster, tmp_path,
                                                                 monkeypatch, caplog):
    """The last agent's actor killed (SIGKILL) at step 8, checkpoints every 3 steps: the trial
    starts again by itself from step 6, which every agent and the world hold (each agent's key
    share its own, so the table stays decryptable), and ends with the local run's rows."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=3,
                          episode_steps=4, methods=["pprl"], trials=1,
                          selection="epsilon_greedy", learner="qlearning", epsilon=0.3)
    base = dict(experiment="pprl", parties=2, key_bits=512, insecure_key_bits_ok=True, seed=2,
                pprl=options, progress=False, results_dir=str(tmp_path), party_timeout_s=30)
    local = pprl(RunConfig(runtime="local", **base))
    monkeypatch.setattr(observation, "ObservationAgent", AgentKilledAtStep8)
    killed = pprl(RunConfig(runtime="ray", checkpoint_every=3, run_id="killed", **base))
    assert "agent-1 died during divide_from" in caplog.text
    assert "restarting from its last checkpoints (1 of 2)" in caplog.text

    def untimed(out):
        return [{k: v for k, v in row.items() if not k.endswith("_s") and k != "replayed"}
                for row in out.rows]
    assert untimed(killed) == untimed(local)
    assert all(row["replayed"] for row in killed.rows) and killed.rows[-1]["q_equal_reference"]
