"""The plaintext methods of Sakuma et al.'s experiments (section 6): CRL, IDRL and RDRL, and CRL
in the protocol's fixed point, on both partitionings.

* **Partitioned by time** (section 6.1, Table 2): the agents take turns with the environment,
  ``steps_per_agent`` learning steps each (A, then B, ...), each turn starting a new episode
  in the agent's own environment (seeded for that turn, `turn_seed`) and choosing actions from
  the agent's own generator, so that each agent can play its turn in its own trust domain.
  CRL learns one Q-table over every turn (what a designated agent holding all perceptions
  learns, and what PPRL must equal); IDRL has each agent learn alone over its own turns.
  Accuracy: the greedy policy of the last agent to learn, run once from the start state, ties
  broken uniformly: the steps it takes to the goal and whether it arrives within the episode
  limit.
* **Partitioned by observation** (section 6.2, Fig. 5, Table 3): every step each agent
  perceives its own state, takes its own action and gets its own reward.  CRL learns over the
  joint state and joint action with the global reward r^A + r^B; IDRL each agent over its own
  state and action with its own reward; RDRL the same with the global reward.  Each episode's
  row has the mean global reward per step (Fig. 5's normalisation).

Each trial draws from ``np.random.default_rng([seed, trial])``: the environment's dynamics from
one child generator, the agents' action selection from another, the evaluation from a third,
so that every method of a trial meets the same environment seed.  These are public experiment
randomness, not cryptographic; PPRL's fresh runs draw each agent's selection from its own OS
entropy instead (`agent_generators`).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field

import numpy as np

from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ, QTable, ravel, select, select_joint


@dataclass
class TrialResult:
    """One trial of one method: its Parquet rows, its learner's seconds and (partitioned by
    time) the table whose greedy policy was evaluated."""

    rows: list
    seconds: float
    table: QTable | None = None
    taken: list | None = None
    """The actions taken while learning (partitioned by time)."""
    views: dict = field(default_factory=dict)
    """PPRL with record_views: each agent's view (`ppml.privacy.views`)."""
    replays: list = field(default_factory=list)
    """PPRL with checkpoints: the steps a resumed trial ran twice
    (`ppml.runtime.checkpoints.RoleCheckpoints.replays`)."""


def learner(options: PPRLOptions, states: int, actions: int, fixed: bool) -> QTable:
    """A Q-table of the options' learner, in float64 or in the protocol's fixed point."""
    if fixed:
        return FixedPointQ(states, actions, options.alpha, options.gamma, options.learner,
                           options.scale_bits, options.division_bits)
    return QTable(states, actions, options.alpha, options.gamma, options.learner)


def generators(seed: int, trial: int) -> tuple:
    """(environment seed, the agents' selection generator, the evaluation's generator) of a
    trial, from ``np.random.default_rng([seed, trial])``."""
    env, agents, evaluation = np.random.default_rng([seed, trial]).spawn(3)
    return int(env.integers(2**31)), agents, evaluation


def agent_generators(rng: np.random.Generator, count: int,
                     selection: list | None = None) -> list:
    """``count`` selection generators: children of the trial's agents' generator ``rng``
    (child i is the same whatever ``count``), or one per integer of ``selection`` (OS
    entropy: PPRL's fresh runs, `fresh_selection`)."""
    if selection is not None:
        if len(selection) != count:
            raise ValueError(f"selection has {len(selection)} entries, expected {count}")
        return [np.random.default_rng(int(e)) for e in selection]   # a checkpoint's: mpz
    return rng.spawn(count)


def agent_generator(seed: int, trial: int, index: int, entropy: int | None = None):
    """One agent's own selection generator, as that agent makes it: from its own ``entropy``
    (a fresh run), or the trial's child ``index`` of `agent_generators` (the seeded mode)."""
    if entropy is not None:
        return np.random.default_rng(int(entropy))
    return agent_generators(generators(seed, trial)[1], index + 1)[index]


def generator_state(rng: np.random.Generator) -> dict:
    """Where ``rng`` stands, as data (its bit generator's state: a checkpoint keeps it)."""
    return rng.bit_generator.state


def restore_generator(rng: np.random.Generator, state: dict) -> None:
    """Put ``rng`` back where `generator_state` found it (its integers as Python ints: a
    checkpoint gives big ones back as gmpy2's)."""
    def plain(value):
        return {k: plain(v) for k, v in value.items()} if isinstance(value, dict) else \
            value if isinstance(value, str) else int(value)
    rng.bit_generator.state = plain(state)


def fresh_selection(count: int) -> list:
    """A fresh run's selection entropy: one integer per generator, from the OS CSPRNG."""
    return [secrets.randbits(128) for _ in range(count)]


def turn_seed(env_seed: int, turn: int) -> int:
    """The environment seed of turn ``turn`` partitioned by time (each agent plays its turn in
    its own environment: `TurnPlayer`); turn = the number of turns seeds the evaluation."""
    return env_seed + turn


def run_time_partitioned(options: PPRLOptions, method: str, agents: int, seed: int,
                         trial: int, selection: list | None = None) -> TrialResult:
    """One trial of ``method`` (crl, crl_fixed, idrl) partitioned by time among ``agents``:
    ``options.rounds`` times round the agents, turn t agent t mod ``agents``'s, which chooses
    from its own generator (`agent_generators`; ``selection``: each agent's entropy)."""
    env = tasks.make(options.task)
    states, actions = env.observation_space.n, env.action_space.n
    env_seed, rng, evaluation = generators(seed, trial)
    rngs = agent_generators(rng, agents, selection)
    shared = method in ("crl", "crl_fixed")
    tables = [learner(options, states, actions, method == "crl_fixed")
              for _ in range(1 if shared else agents)]
    start = time.perf_counter()
    taken, turns = [], agents * options.rounds
    for turn in range(turns):
        agent = turn % agents
        player = TurnPlayer(tasks.make(options.task), turn_seed(env_seed, turn),
                            tables[0 if shared else agent], options, rngs[agent])
        player.play(options.steps_per_agent)
        taken += player.close()
    seconds = time.perf_counter() - start
    result = evaluate(env, tables[-1 if shared else (turns - 1) % agents],
                      turn_seed(env_seed, turns), evaluation, trial, seconds)
    result.taken = taken
    return result


class TurnPlayer:
    """One agent's turn (section 6.1): its own environment from ``env_seed``, a new episode,
    and learning steps on ``table`` (the same table for CRL, the agent's own for IDRL, the
    holder's encrypted view for PPRL), actions from the agent's generator ``rng``; `play`
    runs some steps at a time, `close` returns the actions taken.

    ``taken`` and ``action`` go on with a turn a checkpoint left (`position`): the actions it
    had taken and the next one it had chosen.  The environment is replayed from its seed
    through them (its every draw comes from that seed and the actions: a checkpoint keeps the
    actions, not the environment's internals); nothing is drawn from ``rng`` but, when
    ``action`` is None (a position taken within ``table.update`` as an episode ended), the
    next episode's first action, as the uninterrupted turn draws it after that update."""

    def __init__(self, env, env_seed: int, table, options: PPRLOptions,
                 rng: np.random.Generator, taken: list | None = None, action: int | None = None):
        self.env, self.table, self.options, self.rng = env, table, options, rng
        self.state, _ = env.reset(seed=env_seed)
        for done in taken or ():
            self.state, _, ended = self._step(int(done))
            if ended:
                self.state, _ = env.reset()
        self.taken = [int(a) for a in taken or ()]
        self.action = self._select(self.state) if action is None else int(action)

    def position(self) -> dict:
        """Where the turn stands, as data: the actions taken and the next one chosen (within
        ``table.update``, where the shares backend checkpoints: None if that step ended an
        episode, whose next first action is drawn after the update)."""
        return {"taken": list(self.taken), "action": self.action}

    def _step(self, action: int) -> tuple:
        """(the next state, the reward, whether the episode ended) after ``action``."""
        after, reward, terminated, truncated, _ = self.env.step(action)
        return after, reward, terminated or truncated

    def _select(self, state: int) -> int:
        return select(self.options.selection, self.table.q[state], self.rng,
                      self.options.epsilon)

    def play(self, steps: int) -> None:
        for _ in range(steps):
            action = self.action
            after, reward, ended = self._step(action)
            self.taken.append(action)
            following = self._select(after)
            self.action = None if ended else following             # `position` in the update
            self.table.update(self.state, action, reward, after, following)
            if ended:
                after, _ = self.env.reset()
                following = self._select(after)
            self.state, self.action = after, following

    def close(self) -> list:
        self.env.close()
        return self.taken


def evaluate(env, table: QTable, env_seed: int, evaluation, trial: int, seconds: float,
             **extra) -> TrialResult:
    """The trial's row: ``table``'s greedy episode (`greedy_episode`) and ``extra`` columns."""
    steps, reached = greedy_episode(env, table, env_seed, evaluation)
    env.close()
    return TrialResult([{"trial": trial, "episode": None, "steps_to_goal": steps if reached
                         else None, "reached_goal": reached, "episode_reward": None, **extra}],
                       seconds, table)


def greedy_episode(env, table: QTable, env_seed: int, rng: np.random.Generator) -> tuple:
    """(steps, reached): one episode of ``table``'s greedy policy from the start state, the
    environment seeded ``env_seed``."""
    state, _ = env.reset(seed=env_seed)
    for step in range(1, tasks.MAX_EPISODE_STEPS + 1):
        state, _, terminated, truncated, _ = env.step(select("greedy", table.q[state], rng, 0.0))
        if terminated:
            return step, True
        if truncated:
            break
    return tasks.MAX_EPISODE_STEPS, False


def observation_generators(seed: int, trial: int, agents: int,
                           selection: list | None = None) -> tuple:
    """(environment seed, epsilon-greedy's public coin, each agent's selection generator) of
    a trial partitioned by observation: `agent_generators` for the agents and one more, the
    last, for the coin (``selection``: agents + 1 integers of OS entropy)."""
    env_seed, rng, _ = generators(seed, trial)
    *rngs, coin = agent_generators(rng, agents + 1, selection)
    return env_seed, coin, rngs


def run_observation_partitioned(options: PPRLOptions, method: str, seed: int, trial: int,
                                agents: int = 2, selection: list | None = None) -> TrialResult:
    """One trial of ``method`` (crl, crl_fixed, idrl, rdrl) on a task partitioned by
    observation among ``agents``, each choosing its actions from its own generator
    (`observation_generators`; the joint methods by `learners.select_joint`).  The joint
    methods' result has the table and the joint actions taken."""
    env = tasks.make(options.task, agents)
    sizes = [int(n) for n in env.observation_space.nvec]
    moves = [int(n) for n in env.action_space.nvec]
    env_seed, coin, rngs = observation_generators(seed, trial, agents, selection)
    joint = method in ("crl", "crl_fixed")
    if joint:
        tables = [learner(options, int(np.prod(sizes)), int(np.prod(moves)),
                          method == "crl_fixed")]
    else:
        tables = [learner(options, n, m, False) for n, m in zip(sizes, moves)]
    own_reward = method == "idrl"

    def perceive(observation):
        observation = observation.tolist()
        return [ravel(observation, sizes)] if joint else observation

    def act(perceived):
        if joint:
            actions = select_joint(options.selection, tables[0].q[perceived[0]], moves, rngs,
                                   options.epsilon, coin)
            return [ravel(actions, moves)], actions
        chosen = [select(options.selection, t.q[s], rng, options.epsilon)
                  for t, s, rng in zip(tables, perceived, rngs)]
        return chosen, chosen

    rows, taken, start = [], [], time.perf_counter()
    observation, _ = env.reset(seed=env_seed)
    for episode in range(options.episodes):
        observation, _ = env.reset()
        perceived = perceive(observation)
        chosen, actions = act(perceived)
        total = 0.0
        for _ in range(options.episode_steps):
            observation, reward, _, _, info = env.step(np.array(actions, dtype=np.int64))
            taken.append(tuple(actions))
            total += reward
            after = perceive(observation)
            following, next_actions = act(after)
            rewards = info["rewards"] if own_reward else [reward] * len(tables)
            for t, s, a, r, s2, a2 in zip(tables, perceived, chosen, rewards, after, following):
                t.update(s, a, r, s2, a2)
            perceived, chosen, actions = after, following, next_actions
        rows.append({"trial": trial, "episode": episode, "steps_to_goal": None,
                     "reached_goal": None, "episode_reward": total / options.episode_steps})
    env.close()
    return TrialResult(rows, time.perf_counter() - start, tables[0] if joint else None, taken)
