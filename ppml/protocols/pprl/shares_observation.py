"""PPRL's shares backend partitioned by observation (`shares`, Figs. 3-4 on shares), m >= 2
agents: the joint table (joint state x joint action, the reference's layout) as Z/2^64 shares
between them from the start, each agent's perceptions entering as its own private inputs.

A step's one-hot of the joint (s, a) is the outer product of the agents' one-hots of their own
(state, action), one Beaver round an agent after the first; the reward term
is the sum of the agents' own; then the reads, the exact floor division and the update as by
time (`shares.SharedTable.learn`).  Greedy choices (Fig. 4 on shares): the joint state's row
(the outer product of the agents' state one-hots, then one product with the table), put in the
lexicographic order of the agents' permutations by products with each agent's permutation
matrix (its private input: no agent sees another's generator), its first maximum kept shared,
and each agent's marginal of it opened to that agent alone, so each learns its own greedy
action only.  Epsilon-greedy's coin is public here, as with Paillier
(`learners.draw_joint`), so the number of selections says nothing.

Trials together (``pprl.trials_together``): the engine holds the tables of several trials,
each with its own world, generators and coin, and every operation carries all of them along
a leading trials axis, so a step's rounds serve them all; the greedy selections of a step are
made together for the trials whose coin asks for one (the coins are public).  Each trial's
table and actions are the ones it has alone.
"""

from __future__ import annotations

import time

import numpy as np
from tqdm import tqdm

import ppml.mpc as mpc
from ppml.mpc import tensor
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ, draw_joint
from ppml.protocols.pprl.observation import against_reference
from ppml.protocols.pprl.reference import (TrialResult, fresh_selection, learner,
                                           observation_generators)
from ppml.protocols.pprl.shared_division import check_ring
from ppml.protocols.pprl.shares import SharedTable


class SharedJointTables(SharedTable):
    """The joint tables of ``trials`` trials run together, on shares, and one step of them
    (`play_trials` calls ``first_maximum_joint`` and ``update``).

    Each agent's perceptions and choices are its private inputs.  The methods take, per trial,
    every agent's own values; where ``ctx`` does not hold an agent (each agent its own process)
    its entries may be None: only their shapes, which are public, are used.
    """

    def __init__(self, ctx, trials: int, sizes: list, moves: list, rules: FixedPointQ,
                 views: list):
        states, actions = int(np.prod(sizes)), int(np.prod(moves))
        cells = (trials, states * actions)
        super().__init__(ctx, ctx.share(np.zeros(cells, np.int64) if ctx.holds(0) else None,
                                        owner=0, shape=cells, frac_bits=0),
                         states, actions, rules, views)
        self.trials, self.sizes, self.moves = trials, sizes, moves

    def _input(self, agent: int, shape: tuple, make):
        """``agent``'s private integers of the public ``shape``: ``make()`` where this process
        holds the agent, nothing elsewhere (no round: the shape is known)."""
        values = make() if self.ctx.holds(agent) else None
        return self.ctx.share(values, owner=agent, shape=shape, frac_bits=0)

    def _one_hots(self, pairs: list, rows: int):
        """The one-hot rows over the cells of joint pairs, [trials, rows, cells]: the outer
        product (one Beaver round an agent after the first) of each agent's one-hot of its own
        (state, action) in each trial's ``rows`` rows, ``pairs[trial][i]`` (its private
        input), put in the cells' order (joint state, then joint action: the reference's
        layout)."""
        factors = []
        for agent, (size, moves) in enumerate(zip(self.sizes, self.moves)):
            def own(agent=agent, size=size, moves=moves):
                mine = np.array([pair[agent] for pair in pairs], dtype=np.int64)  # [t, r, 2]
                return np.eye(size * moves, dtype=np.int64)[mine[..., 0] * moves + mine[..., 1]]
            factors.append(self._input(agent, (self.trials, rows, size * moves), own))
        grid = _outer(factors).reshape(self.trials, rows,
                                       *[n for pair in zip(self.sizes, self.moves) for n in pair])
        agents = len(self.moves)                                   # [t, r, S_0, A_0, S_1, ...]
        order = (0, 1) + tuple(2 + 2 * i for i in range(agents)) \
            + tuple(3 + 2 * i for i in range(agents))
        return grid.transpose(order).reshape(self.trials, rows, self.states * self.actions)

    def _rows(self, trials: list, states: list):
        """Shares of Q(s, .) at each of ``trials``' joint state (``states``: per trial, each
        agent's own), [len(trials), actions]: the outer product of the agents' one-hots of
        their own states (their inputs), then one product with the tables."""
        n = len(trials)
        factors = [self._input(agent, (n, size), lambda agent=agent, size=size: np.eye(
                       size, dtype=np.int64)[[joint[agent] for joint in states]])
                   for agent, size in enumerate(self.sizes)]
        tables = self.table[trials].reshape(n, self.states, self.actions)
        return (_outer(factors).reshape(n, 1, self.states) @ tables)[:, 0]

    def first_maximum_joint(self, trials: list, states: list, orders: list) -> list:
        """Fig. 4 on shares for ``trials`` together: each agent's greedy action at each trial's
        joint state (``states[k]``), ties broken by the agents' own permutations
        (``orders[k][i]``, `learners.draw_joint`): each agent permutes its own axis of the row
        by a product with its permutation matrix (its input), the first maximum stays shared,
        and each agent's marginals of it are opened to it alone.  Returns per trial each
        agent's action (None for an agent this process does not hold)."""
        n, agents = len(trials), len(self.moves)
        grid = self._rows(trials, states).reshape(n, *self.moves)
        for agent in range(agents):
            size, axis = self.moves[agent], 1 + agent

            def permutations(agent=agent, size=size):      # moves[k, order[i], i] = 1
                moves = np.zeros((n, size, size), dtype=np.int64)
                for k, own in enumerate(orders):
                    moves[k, own[agent], np.arange(size)] = 1
                return moves
            last = tuple(a for a in range(agents + 1) if a != axis) + (axis,)
            moved = grid.transpose(last)                     # this agent's axis last
            shape = moved.shape
            moved = (moved.reshape(n, -1, size) @ self._input(agent, (n, size, size),
                                                              permutations)).reshape(shape)
            grid = moved.transpose(tuple(int(a) for a in np.argsort(last)))
        grid = tensor.argmax(grid.reshape(n, self.actions), method="pairwise",
                             ties="first").reshape(n, *self.moves)
        self.comparisons += n
        actions = [[None] * agents for _ in range(n)]
        for agent in range(agents):
            others = tuple(1 + i for i in range(agents) if i != agent)
            opened = self.ctx.value_at(grid.sum(axis=others).reveal(to=agent), agent)
            if opened is not None:                                   # to this agent alone
                for k, own in enumerate(orders):
                    actions[k][agent] = int(own[agent][int(np.flatnonzero(opened[k])[0])])
        return actions

    def update(self, states: list, actions: list, rewards: list, after: list,
               following: list) -> None:
        """Fig. 3 (eqs. 5-9) on shares for every trial's agents' own (s_i, a_i, r_i, s_i',
        a_i') (each argument: per trial, per agent)."""
        f = self.rules
        column = self.table.reshape(self.trials, self.states * self.actions, 1)
        agents = range(len(self.moves))
        if f.learner == "sarsa":
            picks = self._one_hots([[[(s[i], a[i]), (s2[i], a2[i])] for i in agents]
                                    for s, a, s2, a2 in zip(states, actions, after, following)],
                                   2)
            read = picks @ column
            q, q_next = read[:, 0, 0], read[:, 1, 0]
        else:
            picks = self._one_hots([[[(s[i], a[i])] for i in agents]
                                    for s, a in zip(states, actions)], 1)
            q = (picks @ column)[:, 0, 0]
            q_next = self.shared_max(self._rows(list(range(self.trials)), after))
        self.learn(picks[:, 0], q, q_next,
                   [(i, [f.alpha_k * f.scaled_reward(r[i]) for r in rewards]
                     if self.ctx.holds(i) else None) for i in agents])


def _outer(factors: list):
    """The outer product of shared vectors along their last axis, [..., d_0 d_1 ...] (C order),
    one Beaver round for each factor after the first."""
    out = factors[0]
    for factor in factors[1:]:
        lead = factor.shape[:-1]
        out = (out.reshape(*lead, -1, 1) @ factor.reshape(*lead, 1, factor.shape[-1])) \
            .reshape(*lead, -1)
    return out


def run_shares_observation(options: PPRLOptions, agents: int, seed: int, trial: int,
                           key_seed: int | None = None, record_views: bool = False):
    """One trial of PPRL partitioned by observation on the shares backend
    (:func:`run_shares_trials` with one trial)."""
    return run_shares_trials(options, agents, seed, [trial], key_seed, record_views)[0]


def run_shares_trials(options: PPRLOptions, agents: int, seed: int, trials: list,
                      key_seed: int | None = None, record_views: bool = False,
                      progress: bool = False) -> list:
    """``trials`` of PPRL partitioned by observation on the shares backend, ``agents`` of
    them, run together on one engine: each trial's result (the reference's per-episode rows, the last
    with ``q_equal_reference``, ``action_agreement`` and the engine's costs: its own greedy
    selections, the rounds (shared by the trials), and its share of the seconds and bytes).
    ``key_seed``: the engine's INSECURE seeded mode; ``record_views``: each agent's view of
    the engine (every trial's openings) in the first result; ``progress``: a bar over the
    episodes."""
    envs = [tasks.make(options.task, agents) for _ in trials]
    sizes = [int(n) for n in envs[0].observation_space.nvec]
    moves = [int(n) for n in envs[0].action_space.nvec]
    reward_bound = options.task_reward_bound(agents)
    rules = learner(options, 1, 1, fixed=True)
    check_ring(bounds(rules, options, reward_bound)[1], options)
    selections = [None if key_seed is not None else fresh_selection(agents + 1) for _ in trials]
    drawn = [observation_generators(seed, trial, agents, selection)
             for trial, selection in zip(trials, selections)]
    start = time.perf_counter()
    ctx = mpc.local_context(agents, seed=key_seed, record_views=record_views)
    views = [ViewRecorder(record_views) for _ in range(agents)]
    table = SharedJointTables(ctx, len(trials), sizes, moves, rules, views)
    rows, taken, greedy = play_trials(envs, drawn, options, moves, table, reward_bound, trials,
                                      progress)
    finals = table.opened(options)
    seconds = time.perf_counter() - start
    costs = table.costs()
    results = []
    for k, trial in enumerate(trials):
        envs[k].close()
        rows[k][-1].update(**against_reference(options, seed, trial, agents, selections[k],
                                               finals[k], taken[k]),
                           online_s=seconds / len(trials), rounds=costs["rounds"],
                           bytes_sent=costs["bytes_sent"] // len(trials), comparisons=greedy[k],
                           trials_together=len(trials))
        results.append(TrialResult(rows[k], seconds / len(trials), finals[k], taken[k]))
    if record_views:
        results[0].views = {f"agent-{i}": v.table() for i, v in enumerate(views)}
    return results


def play_trials(envs: list, drawn: list, options: PPRLOptions, moves: list, table,
                reward_bound: float, trials: list, progress: bool = False) -> tuple:
    """The agents' episodes in every trial at once on the private joint ``table`` (its
    ``update`` and ``first_maximum_joint``), each trial with its own world (``envs``) and
    generators (``drawn``: its (world seed, coin, agents' generators),
    `reference.observation_generators`), each agent choosing as the reference's joint methods
    do (`learners.draw_joint`).  Returns per trial: the per-episode rows, the joint actions
    taken, and the number of greedy selections."""
    rows, taken = [[] for _ in trials], [[] for _ in trials]
    greedy = [0] * len(trials)
    for env, (env_seed, _, _) in zip(envs, drawn):
        env.reset(seed=env_seed)

    def choose(states: list) -> list:
        draws = [draw_joint(options.selection, moves, rngs, options.epsilon, coin)
                 for (_, coin, rngs) in drawn]
        asked = [k for k, (actions, _) in enumerate(draws) if actions is None]
        chosen = [actions for actions, _ in draws]
        if asked:
            found = table.first_maximum_joint(asked, [states[k] for k in asked],
                                              [draws[k][1] for k in asked])
            for k, actions in zip(asked, found):
                chosen[k], greedy[k] = actions, greedy[k] + 1
        return chosen

    for episode in tqdm(range(options.episodes), disable=not progress, unit="episode",
                        desc=f"pprl trials {trials[0]}-{trials[-1]}", leave=False):
        states = [[int(s) for s in env.reset()[0]] for env in envs]
        actions = choose(states)
        totals = [0.0] * len(trials)
        for _ in range(options.episode_steps):
            after, rewards = [], []
            for k, env in enumerate(envs):
                observation, reward, _, _, info = env.step(np.array(actions[k], dtype=np.int64))
                if not abs(reward) <= reward_bound:
                    raise ValueError(f"a global reward of {reward!r} is outside "
                                     f"pprl.reward_bound={reward_bound}")
                taken[k].append(tuple(actions[k]))
                totals[k] += reward
                after.append([int(s) for s in observation])
                rewards.append(list(info["rewards"]))
            following = choose(after)
            table.update(states, actions, rewards, after, following)
            states, actions = after, following
        for k, trial in enumerate(trials):
            rows[k].append({"trial": trial, "episode": episode, "steps_to_goal": None,
                            "reached_goal": None,
                            "episode_reward": totals[k] / options.episode_steps})
    return rows, taken, greedy
