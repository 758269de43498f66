"""Every role of Algorithm 1 its own OS process, over TLS links on loopback (runtime=federated):
the local runtime's arms and rewards, bit for bit, in the seeded mode; unseeded, the parties'
own keys and the secure run still agree with the reference that replays the dealer's draws."""

import pytest

from ppml.experiments.config import RunConfig
from ppml.experiments.private_cb import private_cb

pytestmark = pytest.mark.slow

BASE = {"experiment": "private_cb", "dataset": "kmeans_digits", "arms": 4, "dims": 6,
        "horizon": 12, "private_cb.epsilon": 0.3, "progress": False, "party_timeout_s": 60}


@pytest.mark.parametrize("parties", [2, 3])
def test_federated_parties_take_the_local_runtime_s_arms_and_rewards(tmp_path, parties):
    base = {**BASE, "parties": parties, "seed": 11, "results_dir": str(tmp_path)}
    local = private_cb(RunConfig.from_columns({"runtime": "local", **base}))
    federated = private_cb(RunConfig.from_columns({"runtime": "federated", **base}))
    assert [r["arm"] for r in local.rows] == [r["arm"] for r in federated.rows]
    assert [r["reward"] for r in local.rows] == [r["reward"] for r in federated.rows]
    assert local.summary["rounds"] == federated.summary["rounds"]
    assert local.summary["bytes_per_party"] == federated.summary["bytes_per_party"]
    run, = (tmp_path / ".federated").iterdir()
    assert not list(run.glob("*.key"))                  # the parties' keys are gone


def test_an_unseeded_federated_run_agrees_with_its_reference(tmp_path):
    out = private_cb(RunConfig.from_columns({**BASE, "parties": 2, "runtime": "federated",
                                             "results_dir": str(tmp_path)}))
    assert out.summary["arm_agreement"] >= 0.9
