"""Comp lost mid-run, for the tests of checkpoints and resume (an importable module: a Ray
actor of these classes imports it by name)."""

import os
import signal

from ppml.protocols.linucb_ds.protocol import Comp

LOST_ROUND = 10


class CompLostAtRound10(Comp):
    """Comp's link lost when P sends round 10 (step 11): a ConnectionError."""

    def argmax(self, message: dict) -> int:
        if self.rounds + 1 == LOST_ROUND:
            raise ConnectionError(f"Comp lost at round {LOST_ROUND}")
        return super().argmax(message)


class CompKilledAtRound10(Comp):
    """Comp's process killed (SIGKILL) when P sends round 10, the first time only (a note in
    Comp's own checkpoint folder says it was)."""

    def argmax(self, message: dict) -> int:
        note = self._checkpoints.folder / "killed"
        if self.rounds + 1 == LOST_ROUND and not note.exists():
            note.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return super().argmax(message)
