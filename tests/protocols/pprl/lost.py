"""A PPRL agent lost mid-run, for the tests of checkpoints and resume (an importable module: a
Ray actor of this class imports it by name)."""

import os
import signal

from ppml.protocols.pprl.observation_agent import ObservationAgent

KILLED_AT = 8


class AgentKilledAtStep8(ObservationAgent):
    """The last agent's process killed (SIGKILL) when its division of step 8 starts (Fig. 3,
    4(b)), the first time only (a note in its own checkpoint folder says it was)."""

    def divide_from(self, step: int, previous: int) -> None:
        note = self._checkpoints.folder / "killed"
        if step == KILLED_AT and not note.exists():
            note.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        super().divide_from(step, previous)
