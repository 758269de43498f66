"""The driver's side of checkpoints: settings kept and compared, restarts only for a lost party,
and which steps a resumed run replayed."""

import pytest
import ray.exceptions

from ppml.experiments import checkpointing
from ppml.experiments.config import RunConfig
from ppml.runtime.deadlines import peer_lost
from ppml.runtime.ray_spmd import PartyError
from ppml.runtime.roles import RoleError


def config(tmp_path, **keys):
    base = {"experiment": "private_cb", "results_dir": str(tmp_path), "run_id": "r1",
            "checkpoint_every": 5, "runtime": "ray"}
    return RunConfig.from_columns({**base, **keys})


def test_a_resume_keeps_the_interrupted_runs_settings(tmp_path):
    checkpointing.prepare(config(tmp_path, horizon=50))
    checkpointing.prepare(config(tmp_path, horizon=50, resume="r1", run_id=None,
                                 party_timeout_s=9, progress=False))     # how to run: free
    with pytest.raises(ValueError, match=r"resume=r1 must keep the settings of that run: "
                                         r"arms=10 \(now 4\), horizon=50 \(now 60\)"):
        checkpointing.prepare(config(tmp_path, horizon=60, arms=4, resume="r1"))
    with pytest.raises(ValueError, match="resume=r2: no checkpoints of that run"):
        checkpointing.prepare(config(tmp_path, resume="r2", run_id="r2"))
    with pytest.raises(ValueError, match="needs checkpoint_every > 0"):
        checkpointing.prepare(config(tmp_path, resume="r1", checkpoint_every=0))
    (tmp_path / "r1.parquet").write_bytes(b"")
    with pytest.raises(ValueError, match="that run finished"):
        checkpointing.prepare(config(tmp_path, horizon=50, resume="r1"))


def test_run_ids_are_checked(tmp_path):
    with pytest.raises(ValueError, match="resume must be a run id"):
        config(tmp_path, resume="../x")
    with pytest.raises(ValueError, match="run_id must be unset or the same"):
        config(tmp_path, resume="r2")


def test_restarts_only_when_a_party_was_lost(tmp_path):
    tries = []

    def attempt(seen):
        tries.append(seen.resume)
        if len(tries) == 1:
            raise PartyError(1, "party 1 died", lost=True)
        if len(tries) == 2:
            raise RoleError("world", "world stopped answering")
        return "done"

    assert checkpointing.with_restarts(config(tmp_path), attempt) == "done"
    assert tries == [None, "r1", "r1"]
    for error in (PartyError(0, "party 0 failed: ValueError: bad", lost=False),
                  ValueError("arms must be ...")):
        with pytest.raises(type(error)):
            checkpointing.with_restarts(config(tmp_path), lambda c: (_ for _ in ()).throw(error))
    lost = PartyError(1, "party 1 died", lost=True)
    for keys in ({"restarts": 0}, {"checkpoint_every": 0}, {"runtime": "local"}):
        with pytest.raises(PartyError):
            checkpointing.with_restarts(config(tmp_path, **keys),
                                        lambda c: (_ for _ in ()).throw(lost))


def test_replayed_steps_and_kept_keys(tmp_path):
    assert checkpointing.replayed([(5, 8), (10, 11)], 12) == \
        [False] * 5 + [True] * 3 + [False] * 2 + [True, False]
    fresh = config(tmp_path)
    key = checkpointing.kept_key(fresh, "harness", lambda: b"k" * 32)
    assert checkpointing.kept_key(config(tmp_path, resume="r1"), "harness",
                                  lambda: b"j" * 32) == key
    assert checkpointing.kept_key(config(tmp_path, checkpoint_every=0), "harness",
                                  lambda: b"j" * 32) == b"j" * 32


def test_a_role_lost_behind_another_roles_call_restarts_the_run():
    """On Ray, P's call fails with Ray's error of P's task, which is also the RoleError P got
    when Comp died: a lost role all the same."""
    lost = RoleError("Comp", "Comp died during argmax")
    assert peer_lost(ray.exceptions.RayTaskError("run", "trace", lost).as_instanceof_cause())
    assert not peer_lost(ray.exceptions.RayTaskError("run", "trace",
                                                     ValueError("bad")).as_instanceof_cause())
