"""The plaintext methods on section 6's tasks: CRL learns what IDRL cannot (Table 2, Fig. 5)."""

import numpy as np

from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.reference import run_observation_partitioned, run_time_partitioned


def test_random_walk_crl_reaches_the_goal_on_the_shortest_path_and_idrl_does_worse():
    options = PPRLOptions(trials=4, steps_per_agent=15_000)
    crl = [run_time_partitioned(options, "crl", 2, 0, t).rows[0] for t in range(4)]
    idrl = [run_time_partitioned(options, "idrl", 2, 0, t).rows[0] for t in range(4)]
    assert all(r["reached_goal"] and r["steps_to_goal"] == 39 for r in crl)
    assert sum(r["steps_to_goal"] or 1000 for r in idrl) > 4 * 39


def test_crl_in_fixed_point_matches_float_once_its_scale_resolves_the_values():
    fine = PPRLOptions(trials=2, scale_bits=128, division_bits=64)
    rows = [run_time_partitioned(fine, "crl_fixed", 2, 0, t).rows[0] for t in range(2)]
    assert all(r["steps_to_goal"] == 39 for r in rows)


def test_load_balancing_crl_beats_the_selfish_idrl_agents():
    options = PPRLOptions(task="load_balancing", partition="observation",
                          selection="epsilon_greedy", methods=["crl", "idrl", "rdrl"], trials=2,
                          episodes=150, episode_steps=100)

    def final(method):
        rows = [row for t in range(2)
                for row in run_observation_partitioned(options, method, 0, t).rows]
        assert [r["episode"] for r in rows] == list(range(150)) * 2
        return np.mean([r["episode_reward"] for r in rows if r["episode"] >= 135])

    assert final("crl") > final("idrl")
