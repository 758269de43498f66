"""Checkpoints of PPRL's shares backend (`shares_time`, `shares_observation`), SPMD: each
engine rank (an agent) saves only what it holds, in its own store (`RankCheckpoints`).

A step is a learning step on the shares (one `shares.SharedTable.learn`: eq. 4's update, by
observation eq. 9's), counted across the trials the engine runs (by time, each trial's turns
after agent 0's, in the clear, which no other agent takes part in; by observation each step of
a group of trials together).  Every rank takes part in every such step, so each saves at the
same point of the engine's rounds.  What agent i saves: its shares of the table(s), the public
counts (the steps, the greedy selections), its own generators' positions and entropy, its own
perceptions and next action, its view; its outputs of the trials already finished (the table
opened to agent 0 alone, its own actions); and the engine's state (`Context.snapshot`: where
its streams and dealer store stand, its counters; no key).  A resumed run makes its keys
again (the same in seeded mode, fresh otherwise: the shares stay valid).
"""

from __future__ import annotations

import time

from ppml.protocols.pprl.shares import engine_totals
from ppml.runtime.checkpoints import CheckpointPlan, RankCheckpoints


class SharesCheckpoints:
    """The run's learning steps on ``ctx`` and, with a ``plan``, each held rank's checkpoints
    every ``plan.every`` of them.  ``finished`` holds this process's outputs of the run's
    finished trials (or groups); ``own(output, agent)`` is agent's part of one, which is what
    agent saves of it."""

    def __init__(self, ctx, plan: CheckpointPlan | None, own):
        self.ctx, self.plan, self.own = ctx, plan, own
        self.ranks = None if plan is None else RankCheckpoints(plan, ctx)
        self.step, self.finished, self.replays = 0, [], []

    def start(self, roles: list = ()) -> dict:
        """Agent -> its state in the unfinished trial (or group) of a resumed run, for each
        held agent ({} for a fresh run, or one resumed from step 0); ``finished`` and ``step``
        as they were then.  ``roles``: the steps a role the program drives holds."""
        if self.ranks is None:
            return {}
        self.step, states = self.ranks.start(roles)
        self.replays = self.ranks.replays
        if not self.step:
            return {}
        held = dict(zip(self.ctx.comm.held_ranks, states))
        self.finished = [combine(parts) for parts in zip(*(s["finished"] for s in held.values()))]
        return {agent: state["now"] for agent, state in held.items()}

    def done(self, states) -> None:
        """A learning step is over: when due, each held agent saves ``states()[agent]`` (its
        state in the current trial or group) with its parts of the finished outputs."""
        self.step += 1
        if self.ranks is None:
            return
        if self.plan.due(self.step):
            now = states()
            self.ranks.save(self.step, [{"finished": [self.own(out, agent)
                                                      for out in self.finished],
                                         "now": now[agent]}
                                        for agent in self.ctx.comm.held_ranks])
        self.ranks.reached(self.step)

    def replays_within(self, first: int, last: int) -> list:
        """The replays that ran some of the steps ``first`` + 1 to ``last`` twice (one trial's
        or group's)."""
        return [(start, end) for start, end in self.replays if start < last and end > first]


def only(values: list, agent: int) -> list:
    """``values`` (one per agent) with every other agent's entry None."""
    return [value if i == agent else None for i, value in enumerate(values)]


def combine(parts):
    """One output from each held agent's part of it (`only`): their entries together."""
    present = [part for part in parts if part is not None]
    if not present:
        return None
    first = present[0]
    if isinstance(first, dict):
        return {key: combine([part[key] for part in present]) for key in first}
    if isinstance(first, (list, tuple)):
        return [combine(list(entries)) for entries in zip(*present)]
    return first


class Progress:
    """A trial's (or group's) seconds and engine counts so far, and the held agents' ``views``
    (their `ViewRecorder`s, by agent), as the held agents checkpoint them (`state`) and a
    resumed run takes them back (``resumed``: agent -> state, for the held agents ``mine``)."""

    def __init__(self, ctx, mine: list, views: list, resumed: dict | None):
        self.mine, self.views, self.resumed = mine, views, resumed or {}
        self.start, self.since = time.perf_counter(), engine_totals(ctx)
        if self.resumed:
            state = self.resumed[mine[0]]
            self.start, self.since = self.start - state["seconds"], tuple(state["since"])
            for agent in mine:
                rows = self.resumed[agent]["view"]
                views[agent].rows = None if rows is None else [tuple(row) for row in rows]

    def state(self, agent: int) -> dict:
        return {"view": self.views[agent].rows, "since": list(self.since),
                "seconds": self.seconds()}

    def seconds(self) -> float:
        return time.perf_counter() - self.start
