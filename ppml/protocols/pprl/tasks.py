"""The paper's two tasks as Gymnasium environments (Sakuma et al., section 6), and any discrete
Gymnasium environment by name.

* `RandomWalk` (section 6.1, partitioned by time): states s_1 ... s_n (observations 0 ... n-1,
  n = 40), actions a_1 (0: right) and a_2 (1: left; no move at s_1), start s_1, reward 1 only
  for a_1 at s_{n-1}; the episode ends at s_n (terminated) or after 1,000 steps (truncated).
* `LoadBalancing` (section 6.2, partitioned by observation): two factories with backlogs 0-5.
  Observation (s^A, s^B), action (a^A, a^B), 1 = pass the arriving job to the other factory.
  The reward is the global one, r^A + r^B; ``info["rewards"]`` has each factory's own.  With
  m >= 3 factories (the paper's extension to m agents) a factory passes to the next one in a
  ring.

`make` builds either by name, or any Gymnasium environment with discrete observation and action
spaces (FrozenLake-v1, CliffWalking-v1, Taxi-v3, ...) for the partitioned-by-time runs.
Every step's randomness comes from the environment's own generator (``reset(seed=...)``).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ppml.checks import check_int

RANDOM_WALK_STATES = 40
MAX_EPISODE_STEPS = 1000
"""Section 6.1: an episode ends at s_n or after 1,000 steps."""
BACKLOG = 5
"""Section 6.2: each factory's backlog is in {0, ..., 5}."""
ARRIVAL, PROCESSING = 0.4, 0.48
"""Section 6.2: a job arrives, and one is processed, with these probabilities each step."""
PASS_COST = 2
"""Section 6.2: passing a job costs the passing factory 2 of its reward."""
DRAWS_AHEAD = 1024
"""`LoadBalancing` takes its uniforms from its generator this many steps at a time: the same
numbers in the same order as one call a step (a generator's ``random(n)`` is n of its
``random()``), without a call's overhead every step."""


class RandomWalk(gym.Env):
    """Section 6.1's chain of ``states`` states; see the module docstring."""

    metadata = {"render_modes": []}

    def __init__(self, states: int = RANDOM_WALK_STATES):
        self.states = check_int("states", states, 2)
        self.observation_space = spaces.Discrete(self.states)
        self.action_space = spaces.Discrete(2)
        self._at = self._steps = 0

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        self._at = self._steps = 0
        return self._at, {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action must be 0 (a_1, right) or 1 (a_2, left), got {action!r}")
        goal = self.states - 1
        reward = 1.0 if action == 0 and self._at == goal - 1 else 0.0
        self._at = min(self._at + 1, goal) if action == 0 else max(self._at - 1, 0)
        self._steps += 1
        terminated = self._at == goal
        return self._at, reward, terminated, not terminated and \
            self._steps >= MAX_EPISODE_STEPS, {}


class LoadBalancing(gym.Env):
    """Section 6.2's two factories (``factories``: m of them, each passing to the next in a
    ring).  One step, in this order (the paper gives the parts, not
    their order; docs/pprl.md): a job arrives at each factory with probability 0.4; a factory
    that passes (action 1) sends its arriving job to the other and pays 2; each factory adds the
    jobs it receives, and a job that would take its backlog past 5 is lost (overflow: the
    factory's reward is 0 this step); then each factory with a backlog finishes one job with
    probability 0.48.  A factory's reward is 50 - s^2 on its backlog s after the step, less 2
    if it passed, or 0 on overflow."""

    metadata = {"render_modes": []}

    def __init__(self, factories: int = 2):
        self.factories = check_int("factories", factories, 2)
        self.observation_space = spaces.MultiDiscrete([BACKLOG + 1] * factories)
        self.action_space = spaces.MultiDiscrete([2] * factories)
        self._backlog = [0] * factories
        self._uniforms, self._used, self._source = [], 0, None

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        self._backlog = [0] * self.factories
        return np.array(self._backlog, dtype=np.int64), {}

    def _draws(self) -> list:
        """This step's 2m uniforms from the generator: m for the arrivals, then m for the
        processing (`DRAWS_AHEAD`; a new generator, as ``reset(seed=...)`` makes, voids the
        draws taken ahead from the old one)."""
        count, generator = 2 * self.factories, self.np_random
        if self._used == len(self._uniforms) or generator is not self._source:
            self._uniforms = generator.random(count * DRAWS_AHEAD).tolist()
            self._used, self._source = 0, generator
        self._used += count
        return self._uniforms[self._used - count:self._used]

    def step(self, action):
        m = self.factories
        passing = np.asarray(action).tolist()
        if not (isinstance(passing, list) and len(passing) == m
                and all(type(a) in (int, bool) and a in (0, 1) for a in passing)):
            raise ValueError(f"action must be one of 0 (keep) or 1 (pass) for each of the {m} "
                             f"factories, got {action!r}")
        draws = self._draws()
        arrived = [u < ARRIVAL for u in draws[:m]]
        processed = [u < PROCESSING for u in draws[m:]]
        passed = [a and p == 1 for a, p in zip(arrived, passing)]
        backlog, own = self._backlog, []
        for i in range(m):                        # factory i - 1 passes to factory i (a ring)
            incoming = (arrived[i] and not passed[i]) + passed[i - 1]
            overflow = backlog[i] + incoming > BACKLOG
            backlog[i] = min(backlog[i] + incoming, BACKLOG)
            backlog[i] -= processed[i] and backlog[i] > 0
            own.append(0 if overflow else 50 - backlog[i] ** 2 - PASS_COST * passed[i])
        return np.array(backlog, dtype=np.int64), float(sum(own)), False, False, \
            {"rewards": tuple(own)}


TASKS = {"random_walk": RandomWalk, "load_balancing": LoadBalancing}


def make(name: str, agents: int | None = None) -> gym.Env:
    """The paper's task ``name`` (`TASKS`; load balancing with ``agents`` factories, 2 by
    default), or a Gymnasium environment id with discrete observation and action spaces;
    ValueError naming ``pprl.task`` otherwise."""
    if name == "load_balancing":
        return LoadBalancing(agents or 2)
    if name in TASKS:
        return TASKS[name]()
    try:
        env = gym.make(name)
    except gym.error.Error as exc:
        raise ValueError(f"pprl.task must be one of {', '.join(TASKS)} or a Gymnasium "
                         f"environment id; {name!r}: {exc}") from None
    if not (isinstance(env.observation_space, spaces.Discrete)
            and isinstance(env.action_space, spaces.Discrete)):
        env.close()
        raise ValueError(f"pprl.task {name!r} must have discrete observation and action spaces "
                         f"(a Q-table), got {env.observation_space} and {env.action_space}")
    return env
