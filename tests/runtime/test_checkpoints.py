"""A party's checkpoint store: its own key, sealed files written whole, the last two kept, and
every changed, swapped or foreign file refused naming the party and the step; roles that save
and restore their own state while the driver names the steps."""

import dataclasses
import os
import pickle
import stat

import numpy as np
import pytest

from ppml.runtime import roles
from ppml.runtime.checkpoints import (KEEP, CheckpointError, Checkpointed, CheckpointPlan,
                                      CheckpointStore, RoleCheckpoints, common_step, fingerprint)
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S


def store(tmp_path, party="party-0", settings="s1"):
    return CheckpointStore(tmp_path / party, party, settings)


def test_saves_load_back_and_only_the_last_two_stay(tmp_path):
    mine = store(tmp_path)
    for step in (5, 10, 15):
        mine.save(step, {"w": np.arange(step, dtype=np.uint64), "arms": [1, 2], "n": 2**70})
    assert KEEP == 2 and mine.steps() == [10, 15]
    back = mine.load(15)
    assert np.array_equal(back["w"], np.arange(15, dtype=np.uint64)) and back["n"] == 2**70
    assert stat.S_IMODE(os.stat(tmp_path / "party-0" / "key").st_mode) == 0o600
    assert not list((tmp_path / "party-0").glob(".*tmp"))          # written whole, renamed


def test_the_file_holds_no_plaintext(tmp_path):
    mine = store(tmp_path)
    marker = b"SECRET-SHARE-MARKER"
    mine.save(1, {"share": marker})
    assert marker not in (tmp_path / "party-0" / "step-000000000001.ckpt").read_bytes()


def test_changed_swapped_or_foreign_checkpoints_are_refused(tmp_path):
    mine, other = store(tmp_path), store(tmp_path, "party-1")
    mine.save(5, {"x": 1})
    mine.save(10, {"x": 2})
    other.save(5, {"x": 3})
    path = tmp_path / "party-0" / "step-000000000010.ckpt"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="party-0 at step 10 fails authentication"):
        mine.load(10)
    os.replace(tmp_path / "party-0" / "step-000000000005.ckpt", path)   # step 5 as step 10
    with pytest.raises(CheckpointError, match="fails authentication"):
        mine.load(10)
    os.replace(tmp_path / "party-1" / "step-000000000005.ckpt",
               tmp_path / "party-0" / "step-000000000005.ckpt")       # another party's file
    with pytest.raises(CheckpointError, match="fails authentication"):
        mine.load(5)
    other.save(7, {"x": 4})
    with pytest.raises(CheckpointError, match="fails authentication"):
        store(tmp_path, "party-1", settings="s2").load(7)               # other settings
    with pytest.raises(CheckpointError, match="holds no checkpoint of step 3"):
        mine.load(3)


def test_a_store_pickles_as_its_path_only(tmp_path):
    """A store handed to a party's actor carries no key: the party reads or makes its own."""
    mine = store(tmp_path)
    mine.save(1, {"x": 1})
    assert mine._key is not None
    copy = pickle.loads(pickle.dumps(mine))
    assert copy._key is None and copy.load(1) == {"x": 1}
    assert (tmp_path / "party-0" / "key").read_bytes() not in pickle.dumps(mine)


def test_progress_keeps_the_furthest_step(tmp_path):
    mine = store(tmp_path)
    assert mine.progress() == 0
    for step in range(1, 18):
        mine.reached(step)
    again = store(tmp_path)                       # a resumed run replays steps 11..17
    for step in range(11, 15):
        again.reached(step)
    assert again.progress() == 17
    again.reached(20)
    assert store(tmp_path).progress() == 20


def test_plan_and_common_step():
    with pytest.raises(ValueError, match="checkpoint_every must be a step count >= 1"):
        CheckpointPlan("f", 0, ("a",), "s")
    plan = CheckpointPlan("f", 5, ("a",), "s")
    assert plan.due(10) and not plan.due(11)
    assert common_step([[5, 10], [10, 15], [10]]) == 10 and common_step([[5], [10]]) == 0
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1}) != fingerprint({"a": 2})


class Counter(Checkpointed):
    """A role whose state is its own running total."""

    def __init__(self):
        self.total = 0

    def add(self, value: int) -> int:
        self.total += value
        return self.total

    def checkpoint_state(self):
        return {"total": self.total}

    def restore_state(self, state) -> None:
        self.total = state["total"]


def drive(plan, counters, stop_at=None) -> tuple:
    """Steps 1..12: each counter adds the step; the driver records the totals."""
    saving = RoleCheckpoints(plan, counters, roles.gather)
    first, state = saving.start()
    seen = state.get("seen", [])
    for step in range(first + 1, 13):
        if step == stop_at:
            raise ConnectionError(f"lost at step {step}")
        seen.append([role.call("add", step) for role in counters.values()])
        saving.done(step, {"seen": seen})
    return seen, saving.replays


def test_roles_save_and_restore_their_own_state(tmp_path):
    plan = CheckpointPlan(str(tmp_path), 5, (), "s")

    def spawn():
        return {f"counter-{k}": roles.spawn(Counter, "local", name=f"counter-{k}",
                                            timeout_s=DEFAULT_TIMEOUT_S)
                for k in range(2)}
    with pytest.raises(ConnectionError):
        drive(plan, spawn(), stop_at=9)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counter-0", "counter-1", "driver"]
    seen, replays = drive(dataclasses.replace(plan, resume=True), spawn())
    assert seen == drive(CheckpointPlan(str(tmp_path / "other"), 5, (), "s"), spawn())[0]
    assert replays == [(5, 8)]


def test_a_role_that_took_its_own_plan_is_given_none(tmp_path):
    """A federated party's role takes the plan of its own config; the driver sends it none."""
    plan = CheckpointPlan(str(tmp_path), 5, (), "s")
    counter = roles.spawn(Counter, "local", name="counter", timeout_s=DEFAULT_TIMEOUT_S)
    counter.call("use_checkpoints", plan, "its-own")
    saving = RoleCheckpoints(plan, {"counter": counter}, roles.gather, give_plans=False)
    counter.call("add", 5)
    saving.done(5, {})
    assert plan.store("its-own").steps() == [5] and not (tmp_path / "counter").exists()
