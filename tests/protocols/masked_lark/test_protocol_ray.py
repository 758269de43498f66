"""Masked LARK with the helpers as Ray actors and the roles as Ray actors: the same rows as in
one process for the same seed."""

import pytest

from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.protocol import run_aggregation

pytestmark = pytest.mark.ray


def test_ray_gives_the_local_runs_release(ray_cluster):
    options = MaskedLarkOptions(reports=300, k=3, queries=5, advertisers=4, polluters=4,
                                fake_records=1)
    local = run_aggregation(options, 2, data_seed=2, seed=8)
    on_ray = run_aggregation(options, 2, data_seed=2, seed=8, runtime="ray", workers=2)
    assert on_ray.rows == local.rows
    assert on_ray.summary["release_equal_reference"]
    counts = ("keys_released", "keys_suppressed", "reports_opened", "reports_counted")
    assert [on_ray.summary[c] for c in counts] == [local.summary[c] for c in counts]


def test_ray_trains_the_local_runs_model(ray_cluster):
    from ppml.protocols.masked_lark.training import run_training
    options = MaskedLarkOptions(task="train", epochs=1, batch_size=128)
    local = run_training(options, "breast_cancer", 2, data_seed=0, seed=4)
    on_ray = run_training(options, "breast_cancer", 2, data_seed=0, seed=4, runtime="ray")
    assert on_ray.rows == local.rows
    assert on_ray.summary["gradient_equal_plaintext_steps"] == on_ray.summary["steps"]


def test_helpers_with_two_workers_release_what_one_worker_releases(ray_cluster):
    """Each helper opens with two keys of its own (one in a pinned actor); the same rows."""
    options = MaskedLarkOptions(reports=300, k=3, queries=5, advertisers=4)
    one = run_aggregation(options, 2, data_seed=2, seed=8)
    two = run_aggregation(options, 2, data_seed=2, seed=8, workers=2)
    assert two.rows == one.rows and two.summary["release_equal_reference"]
