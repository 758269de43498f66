"""PPRL's shares backend partitioned by time (`shares`), m >= 2 agents: agent 0 learns its
turn in the clear, as with Paillier (its Q-values are a function of its own perceptions), and
shares its table among all the agents as its private input; each next agent's turn runs on the
shares, the holder's perceptions its private inputs.

Greedy choices: the row of the holder's state (one product with its one-hot), put in the
holder's random order by a second product with the order's permutation matrix (the holder's
private input: no other agent sees an output of the holder's generator), its first maximum
opened to the holder alone (the engine's pairwise argmax, ties to the first).  Every step runs
the same number of them (`SELECTIONS_PER_STEP` when selection is greedy), blind ones filling in
first, before the step's reads: a blind one is the product of a zero row (the holder's private
input, so only the holder knows it is blind) with the table, in a fresh order from the OS
CSPRNG, so every other agent sees the same messages in the same order whatever the holder
explores or wherever its episodes end.
"""

from __future__ import annotations

import time

import numpy as np

import ppml.mpc as mpc
from ppml.crypto.rng import Stream, fresh_key
from ppml.mpc import tensor
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ, PrivateRows
from ppml.protocols.pprl.reference import (TrialResult, TurnPlayer, agent_generators, evaluate,
                                           fresh_selection, generators, learner,
                                           run_time_partitioned, turn_seed)
from ppml.protocols.pprl.shared_division import check_ring
from ppml.protocols.pprl.shares import SharedTable

SELECTIONS_PER_STEP = 2
"""The next action's selection and, when an episode ends, the new episode's first."""
SELECTIONS_AFTER_TURN = 1
"""After a turn's last update: the new episode's first selection when the last step ended an
episode, else none; padded to one so the others cannot tell."""


class SharedTurn(SharedTable):
    """The turns after agent 0's on the shared table, the holder's (``holder``, set as each
    turn begins) perceptions its private inputs (`reference.TurnPlayer` reads ``q`` and calls
    ``update``)."""

    def __init__(self, ctx, first: FixedPointQ, rules: FixedPointQ, reward_bound: float,
                 selections: int, views: list):
        values = np.array([int(v) for v in first.q.ravel()], dtype=np.int64)
        super().__init__(ctx, ctx.share(values, owner=0, shape=values.shape,   # agent 0's input
                                        frac_bits=0), *first.q.shape, rules, views)
        self.reward_bound, self.selections = reward_bound, selections
        self.holder = 1
        self.q = PrivateRows(self)
        self._since = 0
        """Greedy selections since the last update."""

    def _one_hot(self, indices: list, size: int):
        """The holder's private one-hot rows (its input); None: a row of zeros."""
        rows = np.zeros((len(indices), size), dtype=np.int64)
        for row, index in enumerate(indices):
            if index is not None:
                rows[row, index] = 1
        return self.ctx.share(rows, owner=self.holder, shape=rows.shape, frac_bits=0)

    def _row(self, state: int | None):
        """Shares of Q(state, .) (zeros for None) without opening which (one product)."""
        return (self._one_hot([state], self.states)
                @ self.table.reshape(self.states, self.actions))[0]

    def first_maximum(self, state: int | None, order) -> int:
        """The position in ``order`` of the first maximum of Q(state, .), opened to the
        holder."""
        if self.actions == 1:
            return 0
        order = np.asarray(order)
        moves = np.zeros((self.actions, self.actions), dtype=np.int64)  # moves[order[i], i] = 1
        moves[order, np.arange(self.actions)] = 1
        permuted = (self._row(state).reshape(1, self.actions)
                    @ self.ctx.share(moves, owner=self.holder, shape=moves.shape,
                                     frac_bits=0))[0]
        one_hot = tensor.reveal_argmax(permuted, to=self.holder, method="pairwise",
                                       ties="first")
        self.comparisons += 1
        self._since += 1
        return int(np.flatnonzero(one_hot[self.holder])[0])

    def end_turn(self) -> None:
        """The holder's turn is over: its selections after its last update padded to
        `SELECTIONS_AFTER_TURN` (when selection is greedy), so the next holder's first step,
        and the others' view of this turn's end, are those of every turn."""
        self._pad_selections(SELECTIONS_AFTER_TURN * (self.selections > 0), "a turn's end")

    def _pad_selections(self, count: int, where: str) -> None:
        """Blind selections until ``count`` have run since the last padding."""
        if self._since > count:
            raise RuntimeError(f"{where} ran {self._since} greedy selections, more than the "
                               f"{count} that it shows the other agents")
        while self._since < count:
            self.first_maximum(None, Stream(fresh_key()).permutation(self.actions))
        self._since = 0

    def update(self, s: int, a: int, r: float, s2: int, a2: int) -> None:
        """Eqs. 3-4 on shares for the holder's (s, a, r, s', a'), after the blind selections
        that make up the step's count."""
        if not abs(r) <= self.reward_bound:
            raise ValueError(f"a reward of {r!r} is outside pprl.reward_bound="
                             f"{self.reward_bound}")
        self._pad_selections(self.selections, "a step")
        f, size = self.rules, self.states * self.actions
        column = self.table.reshape(size, 1)
        here = s * self.actions + a
        if f.learner == "sarsa":
            picks = self._one_hot([here, s2 * self.actions + a2], size)
            read = picks @ column
            q, q_next = read[0, 0], read[1, 0]
        else:
            picks = self._one_hot([here], size)
            q, q_next = (picks @ column)[0, 0], self.shared_max(self._row(s2))
        self.learn(picks[0], q, q_next, [(self.holder, f.alpha_k * f.scaled_reward(r))])


def run_shares_protocol(options: PPRLOptions, agents: int, seed: int, trial: int,
                        key_seed: int | None = None, record_views: bool = False) -> TrialResult:
    """One trial of PPRL partitioned by time on the shares backend among ``agents``; the row
    carries the comparison with the fixed-point reference (``q_equal_reference``) and the
    engine's costs.  ``key_seed``: the engine's INSECURE seeded mode; with ``record_views``
    the result's ``views`` has each agent's openings."""
    if options.rounds != 1:
        raise ValueError(f"pprl.rounds must be 1 with pprl.backend=shares (agent 0's turn in "
                         f"the clear, then each other agent's on the shares), got "
                         f"{options.rounds}")
    reward_bound = options.task_reward_bound()
    rules = learner(options, 1, 1, fixed=True)
    check_ring(bounds(rules, options, reward_bound)[1], options)
    selection = None if key_seed is not None else fresh_selection(agents)
    env_seed, rng, evaluation = generators(seed, trial)
    rngs = agent_generators(rng, agents, selection)
    start = time.perf_counter()
    ctx = mpc.local_context(agents, seed=key_seed, record_views=record_views)
    views = [ViewRecorder(record_views) for _ in range(agents)]
    env = tasks.make(options.task)
    first = learner(options, env.observation_space.n, env.action_space.n, fixed=True)
    selections = SELECTIONS_PER_STEP * (options.selection != "random")
    taken, table = [], first
    for agent in range(agents):                   # agent 0 in the clear, then on the shares
        if agent == 1:
            table = SharedTurn(ctx, first, rules, reward_bound, selections, views)
        if agent:
            table.holder = agent
        player = TurnPlayer(tasks.make(options.task), turn_seed(env_seed, agent), table,
                            options, rngs[agent])
        player.play(options.steps_per_agent)
        if agent:
            table.end_turn()
        taken += player.close()
    final, = table.opened(options)
    seconds = time.perf_counter() - start
    reference = run_time_partitioned(options, "crl_fixed", agents, seed, trial, selection)
    result = evaluate(env, final, turn_seed(env_seed, agents), evaluation, trial, seconds,
                      q_equal_reference=bool(np.array_equal(final.q, reference.table.q)),
                      action_agreement=float(np.mean(np.array(taken) ==
                                                     np.array(reference.taken))),
                      online_s=seconds, **table.costs())
    result.views = {f"agent-{i}": v.table() for i, v in enumerate(views)} if record_views \
        else {}
    return result
