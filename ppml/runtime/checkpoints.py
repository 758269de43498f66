"""Checkpoints: every party writes its own state to its own storage, sealed, atomically.

A run with ``checkpoint_every = k`` has each party (each engine rank, each role) save its state
every k steps: its shares or its ciphertexts, where its random streams stand, the step.  Nothing
of another party's is in it: each party writes only what it holds.  A resumed run
(``resume=<run_id>``) goes on from the last step that every party holds, agreed over the run's
own channels from public numbers (the steps each party holds), so no party reads another's
storage.  docs/reliability.md, "Checkpoints and resume", says what each family keeps.

On disk, ``<checkpoint_dir>/<run_id>/<party>/``:

* ``key``: the party's own 32-byte AES-256-GCM key (mode 0600), made by the party itself the
  first time it saves; it never leaves the party's storage;
* ``step-<n>.ckpt``: the state at step n as data (`ppml.runtime.codec`: numbers, arrays,
  ciphertexts; never pickles), sealed with that key, the party's name, the step and the run's
  settings bound as associated data: a file changed, swapped for another step's or another
  party's, or written by a run with other settings is refused;
* ``progress``: the last step the party finished (a public number, rewritten every step), from
  which a resumed run reports the steps it ran again.

A file is written whole or not at all (a temporary file, fsync, rename, fsync of the folder);
the last `KEEP` are kept, so a party killed while it wrote leaves the one before.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ppml.checks import check_int
from ppml.crypto.rng import KEY_BYTES, fresh_key
from ppml.runtime import codec

KEEP = 2
"""Checkpoints each party keeps: the newest, and the one before for a party that died writing."""

_NONCE_BYTES = 12


class CheckpointError(ValueError):
    """A checkpoint is missing, tampered with, or from a run with other settings."""


@dataclasses.dataclass(frozen=True)
class CheckpointPlan:
    """Where and how often a run's parties checkpoint: public, the same for every party.

    ``folder`` is ``<checkpoint_dir>/<run_id>``; ``names`` names the engine's ranks (the
    folders of their stores); ``settings`` fingerprints what decides the run's results, so that
    a checkpoint resumes only the run that wrote it; ``resume`` asks to go on from the last
    step every party holds.  A plan crosses between parties as data (`codec`): a driver hands
    it to its federated roles.
    """

    folder: str
    every: int
    names: tuple
    settings: str
    resume: bool = False

    def __post_init__(self) -> None:
        check_int("checkpoint_every", self.every, 1, what="a step count")

    def store(self, name: str) -> "CheckpointStore":
        """The store of party ``name`` (a rank's name, or a role's)."""
        return CheckpointStore(Path(self.folder) / name, name, self.settings)

    def due(self, step: int) -> bool:
        """Whether the parties save after ``step`` steps."""
        return step % self.every == 0


def check_plan(plan) -> None:
    """TypeError unless ``plan`` (a protocol config's ``checkpoints``) is a plan or None."""
    if plan is not None and not isinstance(plan, CheckpointPlan):
        raise TypeError(f"checkpoints must be a CheckpointPlan or None, got "
                        f"{type(plan).__name__}")


def fingerprint(settings: dict) -> str:
    """A short digest of the settings that decide a run's results (sorted ``key=value``)."""
    text = "\n".join(f"{key}={settings[key]!r}" for key in sorted(settings))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class CheckpointStore:
    """One party's checkpoints in its own folder.  Only the folder's path is pickled (a store
    may be handed to the party's actor): the key is read or made where the store is used."""

    def __init__(self, folder, party: str, settings: str):
        self.folder, self.party, self.settings = Path(folder), party, settings
        self._key = self._high = None

    def __getstate__(self) -> dict:
        return {"folder": self.folder, "party": self.party, "settings": self.settings}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    # -- the party's key -------------------------------------------------------------------------
    def _aead(self) -> AESGCM:
        if self._key is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / "key"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                key = path.read_bytes()
                if len(key) != KEY_BYTES:
                    raise CheckpointError(f"{path}: the checkpoint key of {self.party} must be "
                                          f"{KEY_BYTES} bytes, found {len(key)}") from None
            else:
                key = fresh_key()
                with os.fdopen(fd, "wb") as out:
                    out.write(key)
                    out.flush()
                    os.fsync(out.fileno())
            self._key = AESGCM(key)
        return self._key

    def _bound(self, step: int) -> bytes:
        return f"ppml-checkpoint/{self.party}/step {step}/settings {self.settings}".encode()

    # -- checkpoints -----------------------------------------------------------------------------
    def _path(self, step: int) -> Path:
        return self.folder / f"step-{step:012d}.ckpt"

    def steps(self) -> list:
        """The steps of the checkpoints held, oldest first."""
        if not self.folder.is_dir():
            return []
        return sorted(int(p.stem.partition("-")[2]) for p in self.folder.glob("step-*.ckpt"))

    def save(self, step: int, state) -> None:
        """Seal ``state`` (data only) as the checkpoint of ``step``, atomically; keep `KEEP`."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = nonce + self._aead().encrypt(nonce, codec.encode(state), self._bound(step))
        path = self._path(step)
        temp = path.with_name(f".{path.name}.tmp")
        with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            out.write(sealed)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
        _sync_folder(self.folder)
        for old in self.steps()[:-KEEP]:
            self._path(old).unlink(missing_ok=True)

    def load(self, step: int):
        """The state saved at ``step``; CheckpointError if it is missing or fails its check."""
        path = self._path(step)
        try:
            sealed = path.read_bytes()
        except FileNotFoundError:
            raise CheckpointError(f"{self.party} holds no checkpoint of step {step} in "
                                  f"{self.folder} (it holds steps {self.steps()})") from None
        try:
            data = self._aead().decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:],
                                        self._bound(step))
        except InvalidTag:
            raise CheckpointError(
                f"{path}: the checkpoint of {self.party} at step {step} fails authentication: "
                f"it was changed, is another step's or another party's, or was written by a run "
                f"with other settings") from None
        return codec.decode(data)

    # -- progress --------------------------------------------------------------------------------
    def reached(self, step: int) -> None:
        """Note that the party finished ``step``, if it is past every step noted before (one
        small write in place, no fsync: a killed process's writes survive it)."""
        if self._high is None:
            self._high = self.progress()
            self.folder.mkdir(parents=True, exist_ok=True)
        if step > self._high:
            fd = os.open(self.folder / "progress", os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                os.pwrite(fd, b"%012d\n" % step, 0)
            finally:
                os.close(fd)
            self._high = step

    def progress(self) -> int:
        """The furthest step the party noted as finished (0 if none)."""
        try:
            text = (self.folder / "progress").read_text().strip()
        except FileNotFoundError:
            return 0
        return int(text) if text.isdigit() else 0


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so that a rename in it survives a crash of the machine."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def common_step(held: list) -> int:
    """The last step every party holds a checkpoint of, from each party's list (0: none)."""
    common = set(held[0]).intersection(*map(set, held[1:])) if held else set()
    return max(common, default=0)


class RankCheckpoints:
    """The checkpoints of the engine ranks one context holds (every rank in the local runtime,
    one in the Ray and the federated runtime): each rank's program state with the engine's
    (`ppml.mpc.context.Context.snapshot`), in the rank's own store.

    ``replays`` lists, per resume so far, (the step it went on from, the last step finished
    before): the steps in between ran twice.  Checkpoints carry it, so a run resumed several
    times reports every replay."""

    def __init__(self, plan: CheckpointPlan, ctx):
        self.plan, self.ctx = plan, ctx
        self.ranks = ctx.comm.held_ranks
        self.stores = [plan.store(plan.names[rank]) for rank in self.ranks]
        self.replays = []

    def start(self, roles: list = ()) -> list:
        """Each held rank's program state to go on from, and the step (0 and empty states for a
        fresh run).

        A resumed run takes the last step every rank holds: each rank announces the steps it
        holds and its progress to all (public numbers, one broadcast per rank), so no rank reads
        another's storage; the engine is then restored as it was after that step.  ``roles``:
        the steps each role the program drives holds (`Checkpointed.checkpoint_steps`, the same
        lists at every rank: one rank asks and broadcasts them), so that the step is one the
        roles hold too."""
        empty = [{} for _ in self.ranks]
        if not self.plan.resume:
            return 0, empty
        mine = {rank: (store.steps(), store.progress())
                for rank, store in zip(self.ranks, self.stores)}
        heard = [self.ctx.comm.broadcast(mine.get(rank), rank, "checkpoints")
                 for rank in range(self.ctx.comm.ranks)]
        step = common_step([steps for steps, _ in heard] + [list(held) for held in roles])
        reached = max(done for _, done in heard)
        states = [store.load(step) for store in self.stores] if step else []
        if states:
            self.ctx.restore([state["engine"] for state in states])
            self.replays = [tuple(replay) for replay in states[0]["replays"]]
        if reached > step:
            self.replays.append((step, reached))
        return step, [state["program"] for state in states] or empty

    def save(self, step: int, states: list) -> None:
        """Save each held rank's program state (in held-rank order) with the engine's."""
        for store, engine, state in zip(self.stores, self.ctx.snapshot(), states):
            store.save(step, {"engine": engine, "program": state, "replays": self.replays})

    def reached(self, step: int) -> None:
        for store in self.stores:
            store.reached(step)


class Checkpointed:
    """Mixed into a role's class (`ppml.runtime.roles`): the role keeps its own checkpoints.

    The class says what its state is: ``checkpoint_state()`` returns it as data (its
    ciphertexts, its own keys, where its streams stand) and ``restore_state(state)`` takes it
    back.  The driver (`RoleCheckpoints`) only names the steps: the state never leaves the
    role's process except into the role's own store."""

    _checkpoints = None

    def use_checkpoints(self, plan: CheckpointPlan, name: str) -> None:
        self._checkpoints = plan.store(name)

    def checkpoint_steps(self) -> list:
        return self._checkpoints.steps()

    def save_checkpoint(self, step: int) -> None:
        self._checkpoints.save(step, self.checkpoint_state())

    def load_checkpoint(self, step: int) -> None:
        self.restore_state(self._checkpoints.load(step))

    def checkpoint_state(self):
        raise NotImplementedError

    def restore_state(self, state) -> None:
        raise NotImplementedError


CHECKPOINT_METHODS = frozenset({"use_checkpoints", "checkpoint_steps", "save_checkpoint",
                                "load_checkpoint"})
"""The methods of `Checkpointed` a driver calls."""

DRIVEN = CHECKPOINT_METHODS - {"use_checkpoints"}
"""What a federated role serves its driver: it takes its plan from its own party's config, so
it never keeps its checkpoints where another party says (`RoleCheckpoints(give_plans=False)`)."""


class RoleCheckpoints:
    """The driver's side for a family whose parties are roles: it tells every role when to save
    and from which step to restore, and keeps its own state (what it alone holds, such as the
    decisions it recorded) in a store of its own.  It sees no role's state.

    ``roles`` maps each role's store name to its `Role` (any object with ``submit`` and the
    `gather` of its runtime).  ``give_plans=False`` where every role took the plan of its own
    config already (``use_checkpoints`` in its own process: a federated party takes no folder
    from another party).  ``replays`` as in `RankCheckpoints`."""

    def __init__(self, plan: CheckpointPlan, roles: dict, gather, driver: str = "driver",
                 give_plans: bool = True):
        self.plan, self.roles, self.gather = plan, dict(roles), gather
        self.own = plan.store(driver)
        self.replays = []
        if give_plans:
            self._each("use_checkpoints", lambda name: (plan, name))

    def _each(self, method: str, args) -> list:
        return self.gather([role.submit(method, *args(name)) for name, role in self.roles.items()])

    def start(self) -> tuple:
        """(the step to go on from, the driver's own state then): 0 and {} for a fresh run; for a
        resumed one the last step every role and the driver hold, every role restored to it."""
        if not self.plan.resume:
            return 0, {}
        held = self._each("checkpoint_steps", lambda name: ()) + [self.own.steps()]
        step, reached = common_step(held), self.own.progress()
        state = {}
        if step:
            self._each("load_checkpoint", lambda name: (step,))
            saved = self.own.load(step)
            state, self.replays = saved["program"], [tuple(r) for r in saved["replays"]]
        if reached > step:
            self.replays.append((step, reached))
        return step, state

    def done(self, step: int, state, last: bool = False) -> None:
        """After ``step`` steps: note the progress and, when due or at the run's ``last`` step
        (so that a finished run resumes at its end), have every role save its state and save
        the driver's own ``state`` (data)."""
        if self.plan.due(step) or last:
            self._each("save_checkpoint", lambda name: (step,))
            self.own.save(step, {"program": state, "replays": self.replays})
        self.own.reached(step)
