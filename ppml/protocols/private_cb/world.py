"""The environment of a bandit run: p' pulls an arm, p'' observes the reward.

Hannun et al.'s Algorithm 1, line 16 (p' pulls the arm) and line 19 (p'' receives r_t).

Nobody else talks to the world: the feature parties never see arms or rewards.  p'' may ask for
the reward of step t before p' has pulled (the parties run concurrently), so :meth:`World.reward`
waits for the pull.  p' and p'' hold it as a role (`ppml.runtime.roles`): the object itself in
the local runtime, a Ray actor in the Ray runtime.
"""

from __future__ import annotations

import threading


class World:
    """Rewards of a contextual dataset (``ppml.data.ContextualData``) for the arms p' pulls."""

    name = "world"

    def __init__(self, data, timeout_s: float = 300.0):
        self.data = data
        self.timeout_s = timeout_s
        self._pulled = {}
        self._ready = threading.Condition()

    def pull(self, t: int, arm: int) -> None:
        with self._ready:
            if t in self._pulled:
                raise RuntimeError(f"step {t} was already pulled (arm {self._pulled[t]})")
            self._pulled[t] = int(arm)
            self._ready.notify_all()

    def reward(self, t: int) -> float:
        arm = self._pulled.get(t)          # a pulled step's arm never changes: no lock needed
        if arm is None:
            with self._ready:
                if not self._ready.wait_for(lambda: t in self._pulled, self.timeout_s):
                    raise TimeoutError(f"no arm was pulled at step {t} within "
                                       f"{self.timeout_s:g} s")
                arm = self._pulled[t]
        return float(self.data.reward(t, arm))

    def pulls(self) -> dict:
        with self._ready:
            return dict(self._pulled)
