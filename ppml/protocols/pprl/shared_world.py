"""The environments of the shares backend by observation as one role (Sakuma et al., section
2.2): the joint tasks of the trials an engine runs together, for agents that each run the SPMD
program (`shares_observation.observation_program`) in this process or a process of their own.

Each call carries the parts of the agents the calling process holds (a list over the agents,
None where it holds none): every agent in one process gives them all at once; each agent in its
own process gives its own, and the call waits until every agent's part of that step has come (a
barrier), then answers each with its own state and reward only.  The world knows the joint
states and actions, as the environment does; no agent learns another's perceptions from it.
It keeps, for the evaluation (EVALUATION ONLY), each trial's joint actions and the mean global
reward per step of each episode (the rows of Fig. 5).

With checkpoints the world saves its own state in its own store (``world``) after every
``every`` steps (each `step` call is one learning step of the agents): the group's trials,
each trial's joint actions and rows, the episode's rewards so far.  Not its environments:
a resumed world replays them from their seeds through the joint actions (`resume`).
"""

from __future__ import annotations

import threading

import numpy as np

from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.reference import generators
from ppml.runtime.checkpoints import CheckpointPlan


class SharedWorlds:
    """The joint tasks of ``agents`` for the trials of each group (`start`), their dynamics from
    the experiment's public ``seed`` as the reference's; a call waits at most ``timeout_s`` for
    the other agents' parts.  ``checkpoints``: the run's plan, whose store ``world`` is its
    own."""

    name = "world"

    def __init__(self, options: PPRLOptions, agents: int, seed: int, timeout_s: float,
                 checkpoints: CheckpointPlan | None = None):
        self.options, self.agents, self.seed, self.timeout_s = options, agents, seed, timeout_s
        self.store = checkpoints and checkpoints.store(self.name)
        self.every, self.steps = checkpoints and checkpoints.every, 0
        self.reward_bound = options.task_reward_bound(agents)
        env = tasks.make(options.task, agents)
        self.moves = [int(n) for n in env.action_space.nvec]
        env.close()
        self.envs, self.trials, self.totals = [], [], []
        self.rows, self.taken = {}, {}
        self._ready = threading.Condition()
        self._parts, self._answer, self._generation = {}, None, 0
        self._call = None
        """The method the agents are meeting in (every agent must call the same)."""

    def start(self, parts: list) -> list:
        """A group of trials begins: each agent gives the group's trials (the same list)."""
        def check(i, trials):
            if not (isinstance(trials, list) and trials and
                    all(isinstance(t, int) and t >= 0 for t in trials)):
                raise ValueError(f"agent {i}: start takes a non-empty list of trial numbers")
            first = next(iter(self._parts.values()), None)
            if first is not None and trials != first:
                raise ValueError(f"agent {i} started other trials than the agents before it")

        def begin(trials):
            self._open([int(t) for t in trials[0]])
            for trial in self.trials:
                self.rows[trial], self.taken[trial] = [], []
            return [None] * self.agents
        return self._meet("start", parts, begin, check)

    def _open(self, trials: list) -> None:
        """The group's environments, each reset from its trial's seed."""
        self._close_envs()
        self.trials = trials
        self.envs = [tasks.make(self.options.task, self.agents) for _ in trials]
        for env, trial in zip(self.envs, trials):
            env.reset(seed=generators(self.seed, trial)[0])

    def checkpoints(self, parts: list) -> list:
        """The steps of the world's checkpoints, to each agent (each gives True)."""
        def held(_):
            return [self.store.steps() if self.store else []] * self.agents
        return self._meet("checkpoints", parts, held, self._flag("checkpoints"))

    def resume(self, parts: list) -> list:
        """Go on from the checkpoint of the step every agent gives (the same: the last step
        all hold; 0: the start): the environments replayed through the joint actions."""
        def load(steps):
            if steps[0]:
                state = self.store.load(steps[0])
                self.steps, self.totals = steps[0], [float(t) for t in state["totals"]]
                self.rows = {int(t): rows for t, rows, _ in state["trials"]}
                self.taken = {int(t): [tuple(a) for a in taken] for t, _, taken in
                              state["trials"]}
                self._open([int(t) for t in state["group"]])
                for env, trial in zip(self.envs, self.trials):
                    for i, joint in enumerate(self.taken[trial]):
                        if i % self.options.episode_steps == 0:
                            env.reset()
                        env.step(np.array(joint, dtype=np.int64))
            return [None] * self.agents

        def check(i, step):
            first = next(iter(self._parts.values()), None)
            if not isinstance(step, int) or step < 0 or (first is not None and step != first):
                raise ValueError(f"agent {i}: resume takes the step to go on from, the same "
                                 f"for every agent")
        return self._meet("resume", parts, load, check)

    def reset(self, parts: list) -> list:
        """A new episode in every trial: each agent's own first state, per trial."""
        def reset(_):
            states = [[int(s) for s in env.reset()[0]] for env in self.envs]
            self.totals = [0.0] * len(self.envs)
            return [[joint[i] for joint in states] for i in range(self.agents)]
        return self._meet("reset", parts, reset, self._flag("reset"))

    def step(self, parts: list) -> list:
        """One step of every trial with each agent's own actions (its part: one per trial);
        answers each agent with its own states and rewards, per trial."""
        def step(actions):
            states, rewards = [], []
            for k, env in enumerate(self.envs):
                joint = [int(actions[i][k]) for i in range(self.agents)]
                observation, reward, _, _, info = env.step(np.array(joint, dtype=np.int64))
                if not abs(reward) <= self.reward_bound:          # the value stays here
                    raise ValueError(f"a global reward outside pprl.reward_bound="
                                     f"{self.reward_bound} in trial {self.trials[k]}")
                self.taken[self.trials[k]].append(tuple(joint))
                self.totals[k] += reward
                states.append([int(s) for s in observation])
                rewards.append([float(r) for r in info["rewards"]])
            self.steps += 1
            if self.store and self.steps % self.every == 0:
                self.store.save(self.steps, {
                    "group": self.trials, "totals": self.totals,
                    "trials": [(t, self.rows[t], [list(a) for a in self.taken[t]])
                               for t in self.rows]})
            return [([s[i] for s in states], [r[i] for r in rewards])
                    for i in range(self.agents)]

        def check(i, actions):
            if not (isinstance(actions, list) and len(actions) == len(self.envs) and
                    all(isinstance(a, int) and 0 <= a < self.moves[i] for a in actions)):
                raise ValueError(f"agent {i}: step takes one action in [0, {self.moves[i]}) "
                                 f"per trial of the group ({len(self.envs)})")
        return self._meet("step", parts, step, check)

    def end_episode(self, parts: list) -> list:
        """Every trial's episode ends: its row (the mean global reward per step)."""
        def end(episodes):
            for k, trial in enumerate(self.trials):
                self.rows[trial].append({
                    "trial": trial, "episode": int(episodes[0]), "steps_to_goal": None,
                    "reached_goal": None,
                    "episode_reward": self.totals[k] / self.options.episode_steps})
            return [None] * self.agents

        def check(i, episode):
            first = next(iter(self._parts.values()), None)
            if not isinstance(episode, int) or (first is not None and episode != first):
                raise ValueError(f"agent {i}: end_episode takes the episode's number, the "
                                 f"same for every agent")
        return self._meet("end_episode", parts, end, check)

    def report(self) -> dict:
        """EVALUATION ONLY: per trial (as a string key), its rows and the joint actions taken."""
        self._close_envs()
        return {str(t): {"rows": self.rows[t], "taken": [list(a) for a in self.taken[t]]}
                for t in self.rows}

    def close(self) -> None:
        self._close_envs()

    def _close_envs(self) -> None:
        for env in self.envs:
            env.close()
        self.envs = []

    @staticmethod
    def _flag(what: str):
        """The check of a call whose every part is True."""
        def check(i, part) -> None:
            if part is not True:
                raise ValueError(f"agent {i}: {what} takes True")
        return check

    def _meet(self, what: str, parts: list, act, check) -> list:
        """Wait until every agent's part of this call has come (each checked on arrival by
        ``check(agent, part)``), then ``act(parts by agent)`` once; returns the answers of the
        agents in ``parts``.  An error of ``act`` reaches every agent; no error repeats another
        agent's part."""
        if len(parts) != self.agents:
            raise ValueError(f"{what} takes a part per agent ({self.agents}), got {len(parts)}")
        mine = [i for i, part in enumerate(parts) if part is not None]
        with self._ready:
            if self._parts and self._call != what:
                raise ValueError(f"agents {mine} called {what} while the others are in "
                                 f"{self._call}")
            generation = self._generation
            for i in mine:
                if i in self._parts:
                    raise ValueError(f"agent {i} has already called {what} in this step")
                check(i, parts[i])
                self._parts[i], self._call = parts[i], what
            if len(self._parts) == self.agents:
                given = [self._parts[i] for i in range(self.agents)]
                self._parts = {}
                try:
                    self._answer = act(given)
                except Exception as exc:              # noqa: BLE001 - every agent gets it
                    self._answer = exc
                self._generation += 1
                self._ready.notify_all()
            elif not self._ready.wait_for(lambda: self._generation != generation,
                                          self.timeout_s):
                missing = sorted(set(range(self.agents)) - set(self._parts))
                raise TimeoutError(f"the world waited {self.timeout_s:g} s for agents "
                                   f"{missing} to call {what}")
            answer = self._answer
        if isinstance(answer, Exception):
            raise answer
        return [answer[i] if i in mine else None for i in range(self.agents)]
