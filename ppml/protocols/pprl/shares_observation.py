"""PPRL's shares backend partitioned by observation (`shares`, Figs. 3-4 on shares), two
agents: the joint table (joint state x joint action, the reference's layout) as Z/2^64 shares
between them from the start, each agent's perceptions entering as its own private inputs.

A step's one-hot of the joint (s, a) is the product of the agents' indicators (agent i's: 1
wherever a cell's state and action of agent i are its own), one Beaver round; the reward term
is the sum of the agents' own; then the reads, the exact floor division and the update as by
time (`shares.SharedTable.learn`).  Greedy choices (Fig. 4 on shares): the joint state's row
(the product of the agents' state indicators, then one product with the table), put in the
lexicographic order of the agents' permutations by products with each agent's permutation
matrix (its private input: no agent sees another's generator), its first maximum kept shared, and each agent's marginal of it opened to that agent alone, so each learns
its own greedy action only.  Epsilon-greedy's coin is public here, as with Paillier
(`learners.select_joint`), so the number of selections says nothing.
"""

from __future__ import annotations

import time

import numpy as np

import ppml.mpc as mpc
from ppml.mpc import tensor
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ, JointRow, select_joint
from ppml.protocols.pprl.observation import against_reference
from ppml.protocols.pprl.reference import (TrialResult, fresh_selection, learner,
                                           observation_generators)
from ppml.protocols.pprl.shared_division import check_ring
from ppml.protocols.pprl.shares import SharedTable, check_agents


class SharedJointTable(SharedTable):
    """The joint table on shares and one step of it (`play_episodes` calls
    ``first_maximum_joint`` and ``update``)."""

    def __init__(self, ctx, sizes: list, moves: list, rules: FixedPointQ, views: list):
        states, actions = int(np.prod(sizes)), int(np.prod(moves))
        super().__init__(ctx, ctx.share(np.zeros(states * actions, np.int64), owner=0,
                                        frac_bits=0), states, actions, rules, views)
        self.moves = moves
        per_state = np.unravel_index(np.arange(states), sizes)
        per_action = np.unravel_index(np.arange(actions), moves)
        self._state_of = [np.repeat(s, actions) for s in per_state]
        self._action_of = [np.tile(a, states) for a in per_action]
        self._joint_state_of = per_state

    def _one_hots(self, pairs: list):
        """The one-hot rows over the cells of joint pairs: agent i's indicators of its own
        (state, action) of each row, ``pairs[i]``, multiplied (one Beaver round)."""
        factors = []
        for agent, mine in enumerate(pairs):
            rows = np.stack([(self._state_of[agent] == s) & (self._action_of[agent] == a)
                             for s, a in mine]).astype(np.int64)
            factors.append(self.ctx.share(rows, owner=agent, frac_bits=0))
        return factors[0] * factors[1]

    def _row(self, states: list):
        """Shares of Q(s, .) at the joint state ``states`` (two products)."""
        factors = [self.ctx.share((self._joint_state_of[agent] == s).astype(np.int64)[None],
                                  owner=agent, frac_bits=0) for agent, s in enumerate(states)]
        return ((factors[0] * factors[1]) @ self.table.reshape(self.states, self.actions))[0]

    def first_maximum_joint(self, states: list, orders: list) -> list:
        """Fig. 4 on shares: each agent's greedy action at the joint state ``states``, ties
        broken by the agents' own permutations ``orders`` (`learners.select_joint`), each
        agent's marginal of the shared one-hot opened to it alone."""
        grid = self._row(states).reshape(self.moves)           # P_0^T Q P_1: grid[o_0, o_1]
        for agent, own in enumerate(orders):
            moves = np.zeros((len(own), len(own)), dtype=np.int64)
            moves[own, np.arange(len(own))] = 1                    # moves[order[i], i] = 1
            factor = self.ctx.share(moves.T if agent == 0 else moves, owner=agent, frac_bits=0)
            grid = factor @ grid if agent == 0 else grid @ factor
        grid = tensor.argmax(grid.reshape(self.actions), method="pairwise",
                             ties="first").reshape(self.moves)
        self.comparisons += 1
        actions = []
        for agent, own in enumerate(orders):
            marginal = grid.sum(axis=tuple(i for i in range(len(self.moves)) if i != agent))
            opened = marginal.reveal(to=agent)[agent]                 # to this agent alone
            actions.append(int(own[int(np.flatnonzero(opened)[0])]))
        return actions

    def update(self, states: list, actions: list, rewards: list, after: list,
               following: list) -> None:
        """Fig. 3 (eqs. 5-9) on shares for the agents' own (s_i, a_i, r_i, s_i', a_i')."""
        f, column = self.rules, self.table.reshape(self.states * self.actions, 1)
        if f.learner == "sarsa":
            picks = self._one_hots([[(s, a), (s2, a2)] for s, a, s2, a2
                                    in zip(states, actions, after, following)])
            read = picks @ column
            q, q_next = read[0, 0], read[1, 0]
        else:
            picks = self._one_hots([[(s, a)] for s, a in zip(states, actions)])
            q, q_next = (picks @ column)[0, 0], self.shared_max(self._row(after))
        self.learn(picks[0], q, q_next, [(agent, f.alpha_k * f.scaled_reward(r))
                                         for agent, r in enumerate(rewards)])


def run_shares_observation(options: PPRLOptions, agents: int, seed: int, trial: int,
                           key_seed: int | None = None, record_views: bool = False):
    """One trial of PPRL partitioned by observation on the shares backend, two agents: the
    reference's per-episode rows, the last with ``q_equal_reference``, ``action_agreement``
    and the engine's costs.  ``key_seed``: the engine's INSECURE seeded mode."""
    check_agents(agents)
    env = tasks.make(options.task, agents)
    sizes = [int(n) for n in env.observation_space.nvec]
    moves = [int(n) for n in env.action_space.nvec]
    reward_bound = options.task_reward_bound(agents)
    rules = learner(options, 1, 1, fixed=True)
    check_ring(bounds(rules, options, reward_bound)[1], options)
    selection = None if key_seed is not None else fresh_selection(agents + 1)
    env_seed, coin, rngs = observation_generators(seed, trial, agents, selection)
    start = time.perf_counter()
    ctx = mpc.local_context(2, seed=key_seed, record_views=record_views)
    views = [ViewRecorder(record_views) for _ in range(2)]
    table = SharedJointTable(ctx, sizes, moves, rules, views)
    rows, taken = play_episodes(env, env_seed, options, moves, coin, rngs, table, reward_bound, trial)
    final = table.opened(options)
    seconds = time.perf_counter() - start
    env.close()
    rows[-1].update(**against_reference(options, seed, trial, agents, selection, final, taken),
                    online_s=seconds, **table.costs())
    result = TrialResult(rows, seconds, final, taken)
    result.views = {f"agent-{i}": v.table() for i, v in enumerate(views)} if record_views \
        else {}
    return result


def play_episodes(env, env_seed: int, options: PPRLOptions, moves: list, coin, rngs: list,
                  table, reward_bound: float, trial: int, prepare=None) -> tuple:
    """The agents' episodes on a private joint ``table`` (its ``update`` and its
    ``first_maximum_joint``), each agent choosing from its own generator as the reference's
    joint methods do (`learners.select_joint`, epsilon-greedy's public ``coin`` apart);
    ``prepare`` runs before each episode.  Returns (the per-episode rows, the joint actions
    taken)."""
    rows, taken = [], []
    env.reset(seed=env_seed)
    for episode in range(options.episodes):
        if prepare is not None:
            prepare()
        observation, _ = env.reset()
        states = [int(s) for s in observation]
        actions = select_joint(options.selection, JointRow(table, states), moves, rngs,
                               options.epsilon, coin)
        total = 0.0
        for _ in range(options.episode_steps):
            observation, reward, _, _, info = env.step(np.array(actions, dtype=np.int64))
            if not abs(reward) <= reward_bound:
                raise ValueError(f"a global reward of {reward!r} is outside "
                                 f"pprl.reward_bound={reward_bound}")
            taken.append(tuple(actions))
            total += reward
            after = [int(s) for s in observation]
            following = select_joint(options.selection, JointRow(table, after), moves, rngs,
                                     options.epsilon, coin)
            table.update(states, actions, list(info["rewards"]), after, following)
            states, actions = after, following
        rows.append({"trial": trial, "episode": episode, "steps_to_goal": None,
                     "reached_goal": None, "episode_reward": total / options.episode_steps})
    return rows, taken
