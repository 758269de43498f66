"""PPRL's secret-sharing backend (``pprl.backend=shares``), beyond the paper: the Q-table kept
as Z/2^64 shares among the agents instead of under Paillier, partitioned by time
(`shares_time`) or by observation (`shares_observation`).  This module holds what both do.

Every step, on the engine (`ppml.mpc`), with each agent's perceptions entering as its own
private inputs: the one-hot of the updated cell and the reads of Q(s, a) and Q(s', a') (Beaver
products with the table); Q-learning's max_a Q(s', a) as the row of s', its argmax kept shared
and multiplied back in (no agent learns it); K dQ = alpha K L r + alpha gamma K Q' - alpha K Q
(local: public integer coefficients, the reward terms the agents' inputs), dQ' = floor(K dQ / K)
exactly (`shared_division.floor_divide`), so the table stays equal to `learners.FixedPointQ`
entry for entry; and Q += one-hot dQ' (one Beaver round).  What each agent sees: the engine's
masked openings, and its own greedy actions (Statement 2).

The ring bounds the fixed point: |K dQ| < 2^62 (`shared_division.check_ring`); the Paillier
backend carries any L.  Any number of agents (the floor division counts the shares' wraps).
"""

from __future__ import annotations

import numpy as np

from ppml.mpc import tensor
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ
from ppml.protocols.pprl.reference import learner
from ppml.protocols.pprl.turn import ENGINE
from ppml.runtime.seat import drain_view
from ppml.protocols.pprl.shared_division import floor_divide


def record_engine(ctx, step: int, views: list) -> None:
    """With ``record_views``, each rank's openings since the last step into the view of the
    agent holding it (``views[rank]``, `ViewRecorder`s; l = `ENGINE`), for the ranks this
    process holds."""
    if ctx.comm.views is not None:
        for rank, view in enumerate(views):
            if ctx.holds(rank):
                view.record(step, ENGINE, drain_view(ctx.comm.views[rank]))


class SharedTable:
    """The table as Z/2^64 shares on ``ctx`` and the update both partitionings share."""

    def __init__(self, ctx, table, states: int, actions: int, rules: FixedPointQ, views: list):
        self.ctx, self.table, self.states, self.actions, self.rules = \
            ctx, table, states, actions, rules
        self.views = views
        """Each agent's `ViewRecorder` (by engine rank): the engine's openings, step by step."""
        self.comparisons = self.step = 0

    def state(self, agent: int) -> dict:
        """What ``agent`` (held here) checkpoints of the table: its own shares, and the public
        counts of learning steps and greedy selections."""
        return {"table": self.table.data[self.ctx.held.index(agent)],
                "comparisons": self.comparisons, "step": self.step}

    def resume(self, states: list) -> None:
        """Go on from the held agents' `state`s (in held-rank order)."""
        self.table = tensor.ArithmeticShared(self.ctx, np.stack([s["table"] for s in states]), 0)
        self.comparisons, self.step = states[0]["comparisons"], states[0]["step"]

    def shared_max(self, row):
        """Shares of the maximum of ``row`` over its last axis: each first maximum's one-hot
        kept shared, times the row."""
        return (tensor.argmax(row, method="pairwise", ties="first") * row).sum(axis=-1)

    def learn(self, here, q, q_next, rewards: list) -> None:
        """Eqs. 3-4 (by observation 5 and 9) on shares: ``here`` the one-hot of the updated
        cell, ``q`` and ``q_next`` its value and the target's, ``rewards`` (owner, alpha K L r)
        the reward terms each agent inputs (None where this process does not hold the owner:
        each party's part runs in its own process, or all in one).  With trials together
        (`shares_observation`), each of these has a leading trials axis: ``q`` of shape [T],
        ``here`` [T, cells], each reward term T integers."""
        f, shape = self.rules, q.shape
        # The reward terms and the coefficients alpha K, alpha gamma K take the ring's range
        # (wide): `shared_division.check_ring` has bounded |K dQ| < 2^62 for the whole update.
        reward = sum((self.ctx.share(None if term is None else
                                     np.asarray(term, np.int64).reshape(shape),
                                     owner=owner, shape=shape, frac_bits=0, wide=True)
                      for owner, term in rewards),
                     start=self.ctx.constant(np.zeros(shape, np.int64), 0))
        k_delta = (reward + q_next.times(f.alpha_gamma_k, wide=True)
                   - q.times(f.alpha_k, wide=True))
        held = k_delta.data.shape[0]
        delta = floor_divide(self.ctx, k_delta.data.reshape(held, -1), f.division_bits)
        cells = self.states * self.actions
        self.table = self.table + here * tensor.ArithmeticShared(
            self.ctx, np.repeat(delta.reshape((held,) + shape + (1,)), cells, axis=-1), 0)
        self.step += 1
        record_engine(self.ctx, self.step, self.views)

    def final_values(self) -> list | None:
        """EVALUATION ONLY: each trial's final table (one by time) as integers, opened to agent
        0 alone, the evaluation's party, as the Paillier backend opens it to its owner; None in
        a process that does not hold agent 0.  Its round is not the protocol's: take `costs`
        first."""
        values = self.ctx.value_at(self.table.reveal(to=0), 0)
        return None if values is None else [[int(v) for v in row]
                                            for row in np.atleast_2d(values)]

    def costs(self, since: tuple = (0, 0)) -> dict:
        """The row's engine columns: greedy selections, and the rounds and bytes of the first
        agent this process holds (agent 0 in one process) since ``since`` (`engine_totals`
        when the trial began, on an engine that ran trials before)."""
        rounds, sent = engine_totals(self.ctx)
        return {"comparisons": self.comparisons, "rounds": rounds - since[0],
                "bytes_sent": sent - since[1]}


def as_table(options: PPRLOptions, states: int, actions: int, values) -> FixedPointQ:
    """The reference's `FixedPointQ` holding ``values`` (the table's integers, in its order)."""
    table = learner(options, states, actions, fixed=True)
    table.q = np.array([int(v) for v in values], dtype=object).reshape(table.q.shape)
    return table


def engine_totals(ctx) -> tuple:
    """(rounds, bytes sent) so far of the first rank ``ctx`` holds."""
    stats = ctx.comm.stats[ctx.comm.held_ranks[0]]
    return int(stats.rounds), int(stats.bytes_sent)
