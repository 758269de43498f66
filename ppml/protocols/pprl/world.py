"""The environment of a task partitioned by observation as a role of its own (Sakuma et al.,
section 2.2): it steps the joint task once every agent has sent its own action, and tells each
agent its own state and reward only.

It is the world the agents perceive, so it knows the joint state and action, as the
environment does; no agent learns another's perceptions from it.  It keeps, for the evaluation
(EVALUATION ONLY), the joint actions taken and each episode's mean global reward per step (the
rows of Fig. 5).
"""

from __future__ import annotations

import numpy as np

from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.reference import generators
from ppml.runtime.checkpoints import Checkpointed


class World(Checkpointed):
    """The joint task of ``agents`` in trial ``trial`` (its dynamics from the experiment's
    public ``seed``, as the reference's).  With checkpoints it saves the joint actions taken,
    through which a resumed run replays its task (`restore_state`)."""

    name = "world"

    def __init__(self, options: PPRLOptions, agents: int, seed: int, trial: int):
        self.options, self.agents, self.seed, self.trial = options, agents, seed, trial
        self.env = tasks.make(options.task, agents)
        self.env.reset(seed=generators(seed, trial)[0])
        self.reward_bound = options.task_reward_bound(agents)
        self._actions: dict = {}
        self.observation = self.rewards = None
        self.episode, self.total = None, 0.0
        self.rows, self.taken = [], []

    def reset(self, episode: int) -> None:
        """A new episode: each agent's first state."""
        self.observation, _ = self.env.reset()
        self.rewards = [0.0] * self.agents
        self.episode, self.total = episode, 0.0

    def observe(self, index: int) -> tuple:
        """Agent ``index``'s own state and its own reward of the last step."""
        return int(self.observation[index]), float(self.rewards[index])

    def act(self, index: int, action: int) -> None:
        """Agent ``index``'s action for the next step."""
        if index in self._actions:
            raise ValueError(f"agent {index} has already acted in this step")
        self._actions[index] = int(action)

    def advance(self) -> None:
        """One step of the task, once every agent has acted."""
        missing = [i for i in range(self.agents) if i not in self._actions]
        if missing:
            raise RuntimeError(f"agents {missing} have not acted in this step")
        actions = [self._actions[i] for i in range(self.agents)]
        self._actions = {}
        self.observation, reward, _, _, info = self.env.step(np.array(actions, dtype=np.int64))
        if not abs(reward) <= self.reward_bound:
            raise ValueError(f"a global reward of {reward!r} is outside "
                             f"pprl.reward_bound={self.reward_bound}")
        self.rewards = [float(r) for r in info["rewards"]]
        self.taken.append(actions)
        self.total += reward

    def end_episode(self) -> None:
        self.rows.append({"trial": self.trial, "episode": self.episode, "steps_to_goal": None,
                          "reached_goal": None,
                          "episode_reward": self.total / self.options.episode_steps})

    def checkpoint_state(self) -> dict:
        """What it saves after a step: the joint actions taken so far (which it keeps for the
        evaluation anyway).  The task's state is a function of the trial's public seed and
        those actions, so it keeps no state of the environment itself."""
        return {"taken": self.taken}

    def restore_state(self, state: dict) -> None:
        """Go on from `checkpoint_state`'s ``state``: the task replayed from the trial's seed
        through the actions taken, episode after episode, its rows with it."""
        self.env.reset(seed=generators(self.seed, self.trial)[0])
        steps, taken = self.options.episode_steps, state["taken"]
        self.rows, self.taken = [], []
        for step, actions in enumerate(taken):
            if step % steps == 0:
                self.reset(step // steps)
            for index, action in enumerate(actions):
                self.act(index, action)
            self.advance()
            if (step + 1) % steps == 0:
                self.end_episode()

    def report(self) -> dict:
        """EVALUATION ONLY: the per-episode rows and the joint actions taken."""
        self.env.close()
        return {"rows": self.rows, "taken": self.taken}
