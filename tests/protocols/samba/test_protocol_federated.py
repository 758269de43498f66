"""The Controller, Comp, DC and the DO groups each their own OS process over TLS links on
loopback (runtime=federated): the local runtime's arms and cumulative reward, seeded, under
both masks (the selection on shares runs between the Controller's and Comp's processes);
unseeded, the roles' own keys collected after the run replay it exactly."""

import pytest

from ppml.experiments.config import RunConfig
from ppml.experiments.samba import samba
from ppml.experiments.samba_parties import OwnerGroupParty, names

pytestmark = pytest.mark.slow

BASE = {"experiment": "samba", "dataset": "synthetic", "arms": 4, "horizon": 12,
        "key_bits": 1024, "insecure_key_bits_ok": True, "progress": False,
        "party_timeout_s": 60}


@pytest.mark.parametrize("algorithm, mask", [("ucb", "mpc"), ("softmax", "mpc"),
                                             ("thompson", "paper")])
def test_federated_parties_take_the_local_runtime_s_arms_and_reward(tmp_path, algorithm, mask):
    base = {**BASE, "samba.algorithm": algorithm, "samba.mask": mask, "seed": 3,
            "results_dir": str(tmp_path)}
    local = samba(RunConfig.from_columns({"runtime": "local", **base}))
    federated = samba(RunConfig.from_columns({"runtime": "federated", **base}))
    assert [r["arm"] for r in local.rows] == [r["arm"] for r in federated.rows]
    assert local.summary["secure_cumulative_reward"] == \
        federated.summary["secure_cumulative_reward"]
    assert federated.summary["arm_agreement"] == 1.0
    assert federated.summary["selection_rounds"] == local.summary["selection_rounds"]


def test_an_unseeded_federated_run_replays_exactly(tmp_path):
    out = samba(RunConfig.from_columns({**BASE, "runtime": "federated",
                                        "results_dir": str(tmp_path)}))
    assert out.summary["arm_agreement"] == 1.0


def test_the_controller_cannot_send_a_do_group_rewards():
    with pytest.raises(PermissionError, match="holds its own rewards"):
        OwnerGroupParty(RunConfig.from_columns(BASE), 0, []).join(["someone else's rewards"],
                                                                   None)


def test_the_parties_are_named_for_the_roster():
    config = RunConfig.from_columns({**BASE, "arms": 10})
    assert names(config) == ["comp", "dc", "do-0", "do-1", "do-2", "do-3", "controller"]


def test_a_federated_run_resumes_from_the_checkpoints_every_party_holds(tmp_path):
    """Each role keeps its own checkpoints in its own process; with Comp's last one gone the
    resumed run goes back to step 8, which every role holds, and ends as the first did."""
    base = {**BASE, "runtime": "federated", "seed": 5, "results_dir": str(tmp_path),
            "checkpoint_every": 4, "run_id": "cut"}
    first = samba(RunConfig.from_columns(base))
    (tmp_path / "checkpoints" / "cut" / "comp" / f"step-{12:012d}.ckpt").unlink()
    again = samba(RunConfig.from_columns({**base, "resume": "cut"}))
    assert [r["arm"] for r in again.rows] == [r["arm"] for r in first.rows]
    assert [r["step"] for r in again.rows if r["replayed"]] == [9, 10, 11, 12]
    assert again.summary["secure_cumulative_reward"] == first.summary["secure_cumulative_reward"]
