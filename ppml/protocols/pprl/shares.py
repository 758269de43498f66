"""PPRL's secret-sharing backend (``pprl.backend=shares``), beyond the paper: the Q-table kept as
Z/2^64 shares between the two agents instead of under Paillier, partitioned by time
(`SharedTurn`, below) or by observation (`SharedJointTable`).

Agent 0 learns its turn in the clear, as with Paillier (its Q-values are a function of its own
perceptions), and shares its table as its private input.  In agent 1's turn every step is, on
the engine (`ppml.mpc`), with agent 1's perceptions entering as its private inputs:

* the one-hot vectors of (s, a) and (s', a') (SARSA) or of s' (Q-learning) over the table, and
  the reward term alpha K L r;
* Q(s, a) and Q(s', a') as one product of the one-hots with the table (one Beaver round);
  Q-learning's max_a Q(s', a) as the row of s' (one product), its argmax kept shared and
  multiplied back in;
* K dQ = alpha K L r + alpha gamma K Q' - alpha K Q (local: public integer coefficients) and
  dQ' = floor(K dQ / K) exactly (`floor_divide`: two private comparisons, not the engine's
  rounding truncation), so the table stays equal to `learners.FixedPointQ` entry for entry;
* Q += one-hot(s, a) dQ' (one Beaver round).

Greedy and epsilon-greedy selection: the row of the holder's state (one product), put in the
holder's random order (the order is public to both agents: it is fresh randomness and says
nothing of the table), and its first maximum opened to the holder alone (the engine's pairwise
argmax with ties to the first).  As with Paillier, every step runs the same number of them
(blind ones over a row of zeros fill in), so the other agent cannot count exploring steps or
episode ends.  What each agent sees: the engine's masked openings; the holder also its greedy
actions (Statement 2).  A blind selection reads a row as a real one does and zeroes it
locally before the argmax.

The ring bounds the fixed point: |K dQ| < 2^62, so L is at most about 2^44 on the random walk
(`check_ring`); the Paillier backend carries any L.  Two agents only, so far (the floor
division compares two parties' shares).
"""

from __future__ import annotations

import secrets
import time

import numpy as np

import ppml.mpc as mpc
from ppml.mpc import tensor
from ppml.mpc.protocols.convert import bits_to_arithmetic
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.comparison import less_than
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ
from ppml.protocols.pprl.protocol import comparisons_per_step
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl.observation import play_episodes
from ppml.protocols.pprl.reference import (TrialResult, evaluate, generators, learner,
                                           observation_generators, play_turns,
                                           run_observation_partitioned, run_time_partitioned)
from ppml.protocols.pprl.roles import ENGINE
from ppml.runtime.seat import drain_view

RING_BITS = 62
"""|K dQ| must stay below 2^62: the exact floor division shifts it by 2^62 into [0, 2^63)."""


def check_ring(k_delta_bits: int, options: PPRLOptions) -> None:
    """Refuse a fixed point the ring cannot carry, naming ``pprl.scale_bits``."""
    if k_delta_bits > RING_BITS:
        raise ValueError(f"pprl.backend=shares keeps K dQ in Z/2^64 and needs |K dQ| < 2^"
                         f"{RING_BITS}; at pprl.scale_bits={options.scale_bits} it takes "
                         f"{k_delta_bits} bits: lower pprl.scale_bits by at least "
                         f"{k_delta_bits - RING_BITS}")


def floor_divide(ctx, x: np.ndarray, bits: int) -> np.ndarray:
    """Shares of floor(x / 2^bits), exactly, for two parties' shares ``x`` of |x| < 2^62.

    With x' = x + 2^62 in [0, 2^63) and party shares u + v = x' + w 2^64 (u, v in [0, 2^64)):
    floor(x' / K) = floor(u / K) + floor(v / K) + c - w 2^(64 - k), where the wrap
    w = [u >= 2^64 - v] and the carry c = [u mod K >= K - v mod K] are private comparisons of
    party 0's integers against party 1's (`comparison.less_than`, 65 bits); then
    floor(x / K) = floor(x' / K) - 2^(62 - k)."""
    k = np.uint64(bits)
    shifted = ctx.add_public(x, np.uint64(1 << 62))
    u, v = shifted[0], shifted[1]
    low = np.uint64((1 << bits) - 1)
    two64 = 1 << 64
    mine = [int(a) for a in u] + [int(a & low) for a in u]
    theirs = [two64 - int(b) if b else two64 for b in v] + \
        [(1 << bits) - int(b & low) for b in v]
    less = less_than(ctx, mine, theirs, 65)                # [u < 2^64 - v], [u mod K < ...]
    both = bits_to_arithmetic(ctx, less & np.uint64(1))
    count = len(u)
    wrap, carry = np.uint64(1) - both[:, :count], np.uint64(1) - both[:, count:]
    wrap[1:] -= np.uint64(1)                               # 1 - bit: the public 1 at party 0
    carry[1:] -= np.uint64(1)
    quotient = np.stack([u >> k, v >> k]) + carry - wrap * np.uint64((1 << (64 - bits)) % two64)
    return ctx.add_public(quotient, np.uint64((1 << 64) - (1 << (62 - bits))))


class SharedTurn:
    """Agent 1's turn on the shared table (`play_turns` reads ``q`` and calls ``update``)."""

    def __init__(self, ctx, table: FixedPointQ, states: int, actions: int, rules: FixedPointQ,
                 reward_bound: float, per_step: int, views: list):
        self.ctx, self.states, self.actions, self.rules = ctx, states, actions, rules
        self.views = views
        """Each agent's `ViewRecorder`: the engine's openings to it, step by step (l = 2)."""
        self.reward_bound, self.per_step = reward_bound, per_step
        values = np.array([int(v) for v in table.q.ravel()], dtype=np.int64)
        self.table = ctx.share(values, owner=0, frac_bits=0)                # agent 0's input
        self.q = _Rows(self)
        self.comparisons = self.step = self._since = 0

    def _one_hot(self, indices: list, size: int):
        """The holder's private one-hot rows (its input)."""
        rows = np.zeros((len(indices), size), dtype=np.int64)
        rows[np.arange(len(indices)), indices] = 1
        return self.ctx.share(rows, owner=1, frac_bits=0)

    def _row(self, state: int):
        """Shares of Q(state, .) without opening which state (one product)."""
        table = self.table.reshape(self.states, self.actions)
        return (self._one_hot([state], self.states) @ table)[0]

    def first_maximum(self, state: int, order) -> int:
        """The position in ``order`` of the first maximum of Q(state, .), opened to the
        holder."""
        if self.actions == 1:
            return 0
        return self._first_maximum(self._row(state)[np.asarray(order)])

    def _first_maximum(self, row) -> int:
        one_hot = tensor.reveal_argmax(row, to=1, method="pairwise", ties="first")
        self.comparisons += 1
        self._since += 1
        return int(np.flatnonzero(one_hot[1])[0])

    def update(self, s: int, a: int, r: float, s2: int, a2: int) -> None:
        if not abs(r) <= self.reward_bound:
            raise ValueError(f"a reward of {r!r} is outside pprl.reward_bound="
                             f"{self.reward_bound}")
        f, size = self.rules, self.states * self.actions
        column = self.table.reshape(size, 1)
        if f.learner == "sarsa":
            read = self._one_hot([s * self.actions + a, s2 * self.actions + a2], size) @ column
            q, q_next = read[0, 0], read[1, 0]
        else:
            q = (self._one_hot([s * self.actions + a], size) @ column)[0, 0]
            row = self._row(s2)
            q_next = (tensor.argmax(row, method="pairwise", ties="first") * row).sum()
        while self._since < self.per_step:           # blind: a row's product, zeroed locally
            self._first_maximum(self._row(0) * 0)
        self._since = 0
        reward = self.ctx.share(np.array([f.alpha_k * f.scaled_reward(r)], np.int64), owner=1,
                                frac_bits=0)[0]
        k_delta = reward + q_next * f.alpha_gamma_k - q * f.alpha_k                 # eq. 3
        delta = floor_divide(self.ctx, k_delta.data[:, None], f.division_bits)     # eq. 4
        change = self._one_hot([s * self.actions + a], size)[0] * \
            tensor.ArithmeticShared(self.ctx, np.repeat(delta, size, axis=1), 0)
        self.table = self.table + change
        self.step += 1
        if self.ctx.comm.views is not None:
            for rank, view in enumerate(self.views):
                view.record(self.step, ENGINE, drain_view(self.ctx.comm.views[rank]))

    def opened(self, options: PPRLOptions, like_states: int) -> FixedPointQ:
        """EVALUATION ONLY: the final table, opened."""
        table = learner(options, like_states, self.actions, fixed=True)
        table.q = np.array([int(v) for v in self.table.reveal()], dtype=object) \
            .reshape(table.q.shape)
        return table


class _Rows:
    """The shared table as selection reads it: a `SharedRow` per state."""

    def __init__(self, turn: SharedTurn):
        self.turn = turn

    def __getitem__(self, state: int) -> "SharedRow":
        return SharedRow(self.turn, state)


class SharedRow:
    """A state's row as selection reads it: its length and its first maximum under an order
    (`learners.first_maximum`), no Q-value."""

    def __init__(self, turn: SharedTurn, state: int):
        self.turn, self.state = turn, state

    def __len__(self) -> int:
        return self.turn.actions

    def first_maximum(self, order) -> int:
        return self.turn.first_maximum(self.state, order)


def run_shares_protocol(options: PPRLOptions, agents: int, seed: int, trial: int,
                        key_seed: int | None = None, record_views: bool = False) -> TrialResult:
    """One trial of PPRL partitioned by time on the shares backend, between two agents; the
    row carries the comparison with the fixed-point reference (``q_equal_reference``) and the
    engine's rounds and bytes.  ``key_seed``: the engine's INSECURE seeded mode; with
    ``record_views`` the result's ``views`` has each agent's openings."""
    if agents != 2:
        raise ValueError(f"pprl.backend=shares runs two agents so far, got parties={agents}")
    reward_bound = options.task_reward_bound()
    env = tasks.make(options.task)
    states, actions = env.observation_space.n, env.action_space.n
    rules = learner(options, 1, 1, fixed=True)
    check_ring(bounds(rules, options, reward_bound)[1], options)
    selection = None if key_seed is not None else secrets.randbits(128)
    env_seed, rng, evaluation = generators(seed, trial, selection)
    start = time.perf_counter()
    ctx = mpc.local_context(2, seed=key_seed, record_views=record_views)
    views = [ViewRecorder(record_views) for _ in range(2)]
    first = learner(options, states, actions, fixed=True)
    turns = []

    def each_turn():
        yield first                                         # agent 0, in the clear
        turns.append(SharedTurn(ctx, first, states, actions, rules, reward_bound,
                                comparisons_per_step(options, actions), views))
        yield turns[0]

    taken = play_turns(env, env_seed, each_turn(), options, rng)
    final = turns[0].opened(options, states) if turns else first
    seconds = time.perf_counter() - start
    reference = run_time_partitioned(options, "crl_fixed", agents, seed, trial, selection)
    stats = ctx.stats()
    result = evaluate(env, final, evaluation, trial, seconds,
                    q_equal_reference=bool(np.array_equal(final.q, reference.table.q)),
                    action_agreement=float(np.mean(np.array(taken) ==
                                                   np.array(reference.taken))),
                    online_s=seconds, comparisons=turns[0].comparisons if turns else 0,
                    rounds=int(stats[0]["rounds"]), bytes_sent=int(stats[0]["bytes_sent"]))
    result.views = {f"agent-{i}": v.table() for i, v in enumerate(views)} if record_views \
        else {}
    return result


class SharedJointTable:
    """Partitioned by observation, two agents: the joint table (joint state x joint action, the
    reference's layout) as Z/2^64 shares between them, each agent's perceptions entering as its
    own private inputs.

    A step's one-hot of the joint (s, a) is the product of the agents' indicators (agent i's:
    1 wherever the cell's state and action of agent i are its own), one Beaver round; then as
    by time: the reads, the exact floor division of K dQ (the reward term is the sum of the
    agents' own), the update.  Greedy choices (Fig. 4 on shares): the joint state's row (the
    product of the agents' state indicators, then one product with the table), put in the
    lexicographic order of the agents' permutations (public to both: fresh randomness), its
    first maximum kept shared, and each agent's marginal of it opened to that agent alone, so
    each learns its own greedy action only.  Q-learning's max stays shared, as by time."""

    def __init__(self, ctx, sizes: list, moves: list, rules: FixedPointQ, views: list):
        self.ctx, self.sizes, self.moves, self.rules, self.views = ctx, sizes, moves, rules, views
        self.states, self.actions = int(np.prod(sizes)), int(np.prod(moves))
        self.cells = self.states * self.actions
        self.table = ctx.share(np.zeros(self.cells, np.int64), owner=0, frac_bits=0)
        per_state = np.unravel_index(np.arange(self.states), sizes)
        per_action = np.unravel_index(np.arange(self.actions), moves)
        self._state_of = [np.repeat(s, self.actions) for s in per_state]
        self._action_of = [np.tile(a, self.states) for a in per_action]
        self._joint_state_of = per_state
        self.comparisons = self.step = 0

    def _one_hots(self, pairs: list):
        """The one-hot rows over the cells of the joint pairs: agent i's indicators of its own
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
        row = self._row(states)
        order = np.ravel_multi_index(np.ix_(*orders), self.moves).ravel()
        grid = tensor.argmax(row[order], method="pairwise", ties="first").reshape(self.moves)
        self.comparisons += 1
        actions = []
        for agent, own in enumerate(orders):
            marginal = grid.sum(axis=tuple(i for i in range(len(self.moves)) if i != agent))
            opened = marginal.reveal(to=agent)[agent]                 # to this agent alone
            actions.append(int(own[int(np.flatnonzero(opened)[0])]))
        return actions

    def update(self, states: list, actions: list, rewards: list, after: list,
               following: list) -> None:
        f, column = self.rules, self.table.reshape(self.cells, 1)
        if f.learner == "sarsa":
            picks = self._one_hots([[(s, a), (s2, a2)] for s, a, s2, a2
                                    in zip(states, actions, after, following)])
            read = picks @ column
            here, q, q_next = picks[0], read[0, 0], read[1, 0]
        else:
            here = self._one_hots([[(s, a)] for s, a in zip(states, actions)])[0]
            q = (here.reshape(1, self.cells) @ column)[0, 0]
            row = self._row(after)
            q_next = (tensor.argmax(row, method="pairwise", ties="first") * row).sum()
        reward = sum((self.ctx.share(np.array([f.alpha_k * f.scaled_reward(r)], np.int64),
                                     owner=agent, frac_bits=0)[0]
                      for agent, r in enumerate(rewards)), start=self.ctx.constant(0, 0))
        k_delta = reward + q_next * f.alpha_gamma_k - q * f.alpha_k               # eq. 5
        delta = floor_divide(self.ctx, k_delta.data[:, None], f.division_bits)
        self.table = self.table + here * tensor.ArithmeticShared(
            self.ctx, np.repeat(delta, self.cells, axis=1), 0)
        self.step += 1
        if self.ctx.comm.views is not None:
            for rank, view in enumerate(self.views):
                view.record(self.step, ENGINE, drain_view(self.ctx.comm.views[rank]))

    def opened(self, options: PPRLOptions) -> FixedPointQ:
        """EVALUATION ONLY: the final table, opened, as the reference's `FixedPointQ`."""
        table = learner(options, self.states, self.actions, fixed=True)
        table.q = np.array([int(v) for v in self.table.reveal()], dtype=object) \
            .reshape(table.q.shape)
        return table


def run_shares_observation(options: PPRLOptions, agents: int, seed: int, trial: int,
                           key_seed: int | None = None, record_views: bool = False):
    """One trial of PPRL partitioned by observation on the shares backend, two agents: the
    reference's per-episode rows, the last with ``q_equal_reference``, ``action_agreement``,
    the engine's rounds and bytes.  ``key_seed``: the engine's INSECURE seeded mode."""
    if agents != 2:
        raise ValueError(f"pprl.backend=shares runs two agents so far, got parties={agents}")
    env = tasks.make(options.task, agents)
    sizes = [int(n) for n in env.observation_space.nvec]
    moves = [int(n) for n in env.action_space.nvec]
    reward_bound = options.task_reward_bound(agents)
    rules = learner(options, 1, 1, fixed=True)
    check_ring(bounds(rules, options, reward_bound)[1], options)
    selection = None if key_seed is not None else [secrets.randbits(128) for _ in range(agents)]
    env_seed, rngs = observation_generators(seed, trial, agents, selection)
    start = time.perf_counter()
    ctx = mpc.local_context(2, seed=key_seed, record_views=record_views)
    views = [ViewRecorder(record_views) for _ in range(2)]
    table = SharedJointTable(ctx, sizes, moves, rules, views)
    rows, taken = play_episodes(env, env_seed, options, moves, rngs, table, reward_bound, trial)
    final = table.opened(options)
    seconds = time.perf_counter() - start
    env.close()
    reference = run_observation_partitioned(options, "crl_fixed", seed, trial, agents, selection)
    stats = ctx.stats()
    rows[-1].update(
        q_equal_reference=bool(np.array_equal(final.q, reference.table.q)),
        action_agreement=float(np.mean([a == b for a, b in zip(taken, reference.taken)])),
        online_s=seconds, comparisons=table.comparisons, rounds=int(stats[0]["rounds"]),
        bytes_sent=int(stats[0]["bytes_sent"]))
    result = TrialResult(rows, seconds, final, taken)
    result.views = {f"agent-{i}": v.table() for i, v in enumerate(views)} if record_views \
        else {}
    return result
