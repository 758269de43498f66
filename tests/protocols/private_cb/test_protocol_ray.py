"""Parties, p' and p'' as Ray actors give the local runtime's arms, bit for bit."""

import pytest

from ppml.experiments.config import RunConfig
from ppml.experiments.private_cb import private_cb

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
