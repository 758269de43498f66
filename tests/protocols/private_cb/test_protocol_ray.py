"""Parties, p' and p'' as Ray actors give the local runtime's arms, bit for bit."""

import functools

import pytest

from ppml.data import load_contextual
from ppml.experiments.config import RunConfig, engine_options
from ppml.experiments.private_cb import bandit_config, private_cb
from ppml.protocols.private_cb.protocol import program
from ppml.protocols.private_cb.world import World
from ppml.runtime import roles, spmd
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S


pytestmark = pytest.mark.ray


@pytest.mark.parametrize("parties", [2, 3])
def test_local_and_ray_take_identical_arms(ray_cluster, parties):
    base = {"experiment": "private_cb", "dataset": "kmeans_digits", "parties": parties,
            "arms": 4, "dims": 6, "horizon": 25, "private_cb.epsilon": 0.3, "seed": 11,
            "progress": False}
    local = private_cb(RunConfig.from_columns({"runtime": "local", **base}))
    remote = private_cb(RunConfig.from_columns({"runtime": "ray", **base}))
    assert [r["arm"] for r in local.rows] == [r["arm"] for r in remote.rows]
    assert [r["reward"] for r in local.rows] == [r["reward"] for r in remote.rows]
    assert local.summary["rounds"] == remote.summary["rounds"]
    assert local.summary["bytes_per_party"] == remote.summary["bytes_per_party"]


def test_options_of_section_7_run_in_the_secure_learner():
    out = private_cb(RunConfig.from_columns({
        "experiment": "private_cb", "dataset": "kmeans_digits", "parties": 2, "arms": 4,
        "dims": 6, "horizon": 40, "private_cb.epsilon": 0.2, "seed": 5, "progress": False,
        "private_cb.regularizer": 0.5, "private_cb.refresh_every": 10}))
    assert out.summary["arm_agreement"] >= 0.95


def test_p_prime_and_p_second_follow_only_their_own_rounds(ray_cluster):
    """Actors that hold only a client take 3 (p': the arm's opening, its one-hot, p''s
    input) and 2 (p'') of a step's rounds, and skip the feature parties' arithmetic."""
    config = RunConfig.from_columns({"experiment": "private_cb", "dataset": "kmeans_digits",
                                     "parties": 2, "arms": 4, "dims": 6, "horizon": 5,
                                     "seed": 3, "progress": False, "runtime": "ray"})
    bandit = bandit_config(config)
    data = load_contextual(config.dataset, arms=4, dims=6, horizon=5, data_seed=0)
    world = roles.spawn(World, "ray", data, concurrency=4, timeout_s=DEFAULT_TIMEOUT_S)
    inputs = {p: {f"features_{p}": data.contexts[:5, cols]}
              for p, cols in enumerate(bandit.feature_blocks)}
    inputs[bandit.puller] = inputs[bandit.rewarder] = {"world": world}
    try:
        outs = spmd.run(functools.partial(program, config=bandit), clients=2, inputs=inputs,
                        **engine_options(config))
    finally:
        roles.teardown([world])
    compute = outs[0]["stats"]["rounds"]
    assert compute > 15 * 5
    assert outs[bandit.puller]["stats"]["rounds"] == 3 * 5
    assert outs[bandit.rewarder]["stats"]["rounds"] == 2 * 5
    assert len(outs[bandit.puller]["arms"]) == len(outs[bandit.rewarder]["rewards"]) == 5
