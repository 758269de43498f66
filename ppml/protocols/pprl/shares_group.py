"""What each agent of PPRL's shares backend by observation checkpoints of a group of trials
run together (`shares_observation.observation_program`; `shares_checkpoints`), and the
group's generators and public coins, fresh or taken back from a checkpoint."""

from __future__ import annotations

import secrets

from ppml.protocols.pprl.reference import agent_generator, generator_state, restore_generator
from ppml.protocols.pprl.shares_checkpoints import Progress, only


class GroupState(Progress):
    """What each held agent checkpoints of a group of ``trials`` by observation (`states`):
    its shares of the tables and the public counts (`SharedTable.state`), per trial its
    selection entropy, its generator's position, its own state and next action, and the public
    coin's entropy and position and greedy selections, with its `Progress`.  A fresh group's
    agents draw their own entropy and agent 0 the public coins' (epsilon-greedy's,
    broadcast); a resumed group's take them from ``resumed``.  ``drawn``: per trial, its coin
    and the held agents' generators (from the experiment's ``seed`` in seeded mode); ``now``:
    (the states, the actions) at a step's end (per trial, per agent)."""

    def __init__(self, ctx, mine: list, views: list, seeded: bool, seed: int, trials: list,
                 resumed: dict | None):
        super().__init__(ctx, mine, views, resumed)
        agents, self.table, self.now = len(views), None, None
        if self.resumed:
            state = self.resumed[mine[0]]
            self.coin, self.greedy = state["coin"], list(state["greedy"])
            self.entropy = [[self.resumed[i]["entropy"][j] if i in mine else None
                             for i in range(agents)] for j in range(len(trials))]
        else:
            self.greedy = [0] * len(trials)
            self.entropy = [[None if seeded or i not in mine else secrets.randbits(128)
                             for i in range(agents)] for _ in trials]   # per trial, per agent
            self.coin = None if seeded else ctx.comm.broadcast(
                [secrets.randbits(128) for _ in trials] if ctx.holds(0) else None, owner=0,
                tag="coin")                               # public: every agent follows it
        self.drawn = [(agent_generator(seed, trial, agents, None if self.coin is None else
                                       self.coin[j]),
                       [agent_generator(seed, trial, i, self.entropy[j][i]) if i in mine
                        else None for i in range(agents)])
                      for j, trial in enumerate(trials)]

    def restore(self) -> tuple:
        """A resumed group's generators put back, and (the states, the actions) it stood at."""
        agents = len(self.views)
        for j, (coin, rngs) in enumerate(self.drawn):
            restore_generator(coin, self.resumed[self.mine[0]]["coins"][j])
            for i in self.mine:
                restore_generator(rngs[i], self.resumed[i]["rngs"][j])
        return tuple([[self.resumed[i][key][j] if i in self.mine else None
                       for i in range(agents)] for j in range(len(self.drawn))]
                     for key in ("states", "actions"))

    def states(self) -> dict:
        """Agent -> what it checkpoints now (after a step's update)."""
        states, actions = self.now
        return {i: {**self.table.state(i), **self.state(i),
                    "entropy": [e[i] for e in self.entropy], "coin": self.coin,
                    "greedy": list(self.greedy),
                    "coins": [generator_state(coin) for coin, _ in self.drawn],
                    "rngs": [generator_state(rngs[i]) for _, rngs in self.drawn],
                    "states": [s[i] for s in states], "actions": [a[i] for a in actions]}
                for i in self.mine}


def own_group(out: dict, agent: int) -> dict:
    """``agent``'s part of a group's output (`observation_program`): the tables if it is agent 0
    (opened to it alone), its own entropy and view, and the public counts and coins."""
    return {**out, "final": out["final"] if agent == 0 else None,
            "entropy": [only(e, agent) for e in out["entropy"]],
            "views": only(out["views"], agent)}
