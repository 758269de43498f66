"""The environment of a bandit run: p' pulls an arm, p'' observes the reward.

Nobody else talks to the world: the feature parties never see arms or rewards.  p'' may ask for
the reward of step t before p' has pulled (the parties run concurrently), so :meth:`World.reward`
waits for the pull.  In the Ray runtime the world is an actor (:class:`WorldActor`) and p' and
p'' get a :class:`RemoteWorld` handle with the same two methods.
"""

from __future__ import annotations

import threading

import ray


class World:
    """Rewards of a contextual dataset (``ppml.data.ContextualData``) for the arms p' pulls."""

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


WorldActor = ray.remote(max_concurrency=4)(World)


class RemoteWorld:
    """What p' and p'' hold in the Ray runtime: calls on the world actor."""

    def __init__(self, actor):
        self.actor = actor

    def pull(self, t: int, arm: int) -> None:
        ray.get(self.actor.pull.remote(t, arm))

    def reward(self, t: int) -> float:
        return ray.get(self.actor.reward.remote(t))
