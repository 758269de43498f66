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

import functools

import numpy as np

import ppml.mpc as mpc
from ppml.mpc import tensor
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ, draw_joint
from ppml.protocols.pprl.observation import against_reference
from ppml.protocols.pprl.reference import TrialResult
from ppml.protocols.pprl.shared_division import fixed_point
from ppml.protocols.pprl.shared_world import SharedWorlds
from ppml.protocols.pprl.shares import SharedTable, as_table
from ppml.protocols.pprl.shares_checkpoints import SharesCheckpoints
from ppml.protocols.pprl.shares_group import GroupState, own_group
from ppml.runtime import progress as progress_
from ppml.runtime import roles
from ppml.runtime.checkpoints import CheckpointPlan


class SharedJointTables(SharedTable):
    """The joint tables of ``trials`` trials run together, on shares, and one step of them
    (`play_trials` calls ``first_maximum_joint`` and ``update``).

    Each agent's perceptions and choices are its private inputs.  The methods take, per trial,
    every agent's own values; where ``ctx`` does not hold an agent (each agent its own process)
    its entries may be None: only their shapes, which are public, are used.  ``resumed``: the
    held agents' checkpointed `state`s (in held-rank order) instead of fresh zero tables.
    """

    def __init__(self, ctx, trials: int, sizes: list, moves: list, rules: FixedPointQ,
                 views: list, resumed: list | None = None):
        states, actions = int(np.prod(sizes)), int(np.prod(moves))
        cells = (trials, states * actions)
        super().__init__(ctx, None if resumed else
                         ctx.share(np.zeros(cells, np.int64) if ctx.holds(0) else None,
                                   owner=0, shape=cells, frac_bits=0),
                         states, actions, rules, views)
        self.trials, self.sizes, self.moves = trials, sizes, moves
        if resumed:
            self.resume(resumed)

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
                      progress: bool = False, runtime: str = "local",
                      timeout_s: float = roles.DEFAULT_TIMEOUT_S,
                      checkpoints: CheckpointPlan | None = None) -> list:
    """``trials`` of PPRL partitioned by observation on the shares backend, ``agents`` of
    them, in groups of ``options.trials_together`` run together on one engine: each trial's
    result (`observation_results`).  ``key_seed``: the engine's INSECURE seeded mode;
    ``record_views``: each agent's view of the engine (every trial's openings of the first
    group) in the first result; ``progress``: a bar over the episodes.  ``runtime``: "local"
    (every agent in this process) or "ray" (each agent a Ray actor, the world a role).
    ``checkpoints``: the agents' and the world's (`observation_program`); each result's
    ``replays`` those that ran some of its group's steps twice."""
    groups = [list(trials[k:k + options.trials_together])
              for k in range(0, len(trials), options.trials_together)]
    world = roles.spawn(SharedWorlds, runtime, options, agents, seed, timeout_s, checkpoints,
                        concurrency=agents + 1, timeout_s=timeout_s)
    try:
        program = functools.partial(observation_program, options=options, agents=agents,
                                    seed=seed, groups=groups, seeded=key_seed is not None,
                                    record_views=record_views, progress=progress,
                                    checkpoints=checkpoints)
        if runtime == "local":
            ctx = mpc.local_context(agents, seed=key_seed, record_views=record_views)
            outs = [program(ctx, world=world)] * agents
        else:
            from ppml.runtime import spmd
            outs = spmd.run(program, parties=agents, runtime=runtime, seed=key_seed,
                            record_views=record_views, timeout_s=timeout_s,
                            inputs={i: {"world": world} for i in range(agents)})
        report = world.call("report")
    finally:
        roles.teardown([world])
    return observation_results(options, agents, seed, outs, report)


def observation_results(options: PPRLOptions, agents: int, seed: int, outs: list,
                        report: dict) -> list:
    """Each trial's result from every agent's `observation_program` output (``outs``, by
    agent) and the world's ``report``: the reference's per-episode rows, the last with
    ``q_equal_reference``, ``action_agreement`` and the engine's costs (its own greedy
    selections, the rounds, shared by the trials of its group, and its share of the seconds
    and bytes); the first with each agent's view when recorded."""
    env = tasks.make(options.task, agents)
    states, actions = int(np.prod(env.observation_space.nvec)), int(np.prod(env.action_space.nvec))
    env.close()
    results = []
    for k, group in enumerate(outs[0]):
        together = len(group["trials"])
        for j, trial in enumerate(group["trials"]):
            entropy = [outs[i][k]["entropy"][j][i] for i in range(agents)] + \
                [None if group["coin"] is None else group["coin"][j]]
            final = as_table(options, states, actions, group["final"][j])
            rows, taken = report[str(trial)]["rows"], [tuple(a) for a in
                                                       report[str(trial)]["taken"]]
            rows[-1].update(**against_reference(options, seed, trial, agents,
                                                None if entropy[0] is None else entropy,
                                                final, taken),
                            online_s=group["seconds"] / together, rounds=group["costs"]["rounds"],
                            bytes_sent=group["costs"]["bytes_sent"] // together,
                            comparisons=group["greedy"][j], trials_together=together)
            results.append(TrialResult(rows, group["seconds"] / together, final, taken,
                                       replays=[tuple(r) for r in group["replays"]]))
    views = [outs[i][0]["views"][i] for i in range(agents)]
    if results and any(v is not None for v in views):
        results[0].views = {f"agent-{i}": ViewRecorder.of(v).table()
                            for i, v in enumerate(views) if v is not None}
    return results


def observation_program(ctx, options: PPRLOptions, agents: int, seed: int, groups: list,
                        seeded: bool, world, record_views: bool = False,
                        progress: bool = False,
                        checkpoints: CheckpointPlan | None = None) -> list:
    """The shares backend by observation, SPMD for every agent: each group of trials together
    on ``ctx``, the agents this process holds choosing from their own generators and perceiving
    through ``world`` (a `SharedWorlds` role).  Returns per group what this process holds:
    ``trials``, ``final`` (each trial's table, opened to agent 0 alone: EVALUATION ONLY),
    ``entropy`` (per trial, each held agent's, EVALUATION ONLY; None when ``seeded``) and
    ``coin`` (per trial, epsilon-greedy's public coin's entropy: agent 0 draws it and
    broadcasts it), ``greedy``
    (each trial's greedy selections), ``views`` (each held agent's, of the first group), the
    engine's ``costs``, the ``seconds`` and the ``replays`` that ran some of its steps twice.

    With ``checkpoints`` each held agent saves its own state (`GroupState`) every
    ``checkpoints.every`` learning steps (counted across the groups, episodes x episode_steps
    each), the world its own; a resumed run goes on from the last step all of them hold."""
    env = tasks.make(options.task, agents)
    sizes = [int(n) for n in env.observation_space.nvec]
    moves = [int(n) for n in env.action_space.nvec]
    env.close()
    reward_bound = options.task_reward_bound(agents)
    rules = fixed_point(options, reward_bound)
    mine = [i for i in range(agents) if ctx.holds(i)]
    saving = SharesCheckpoints(ctx, checkpoints, own_group)

    def each(part) -> list:
        return [part if i in mine else None for i in range(agents)]
    world_steps = []
    if checkpoints and checkpoints.resume:      # the world's steps, the same to every agent
        world_steps = [next(steps for steps in world.call("checkpoints", each(True))
                            if steps is not None)]
    resumed = saving.start(world_steps)
    if world_steps:
        world.call("resume", each(saving.step))
    for k in range(len(saving.finished), len(groups)):
        trials = groups[k]
        views = [ViewRecorder(record_views and not k) for _ in range(agents)]
        group = GroupState(ctx, mine, views, seeded, seed, trials, resumed)
        table = group.table = SharedJointTables(ctx, len(trials), sizes, moves, rules, views,
                                                [resumed[i] for i in mine] if resumed else None)
        if not resumed:
            world.call("start", each(trials))
        play_trials(world, group, options, moves, trials, lambda: saving.done(group.states),
                    progress and 0 in mine)
        costs = table.costs(group.since)
        saving.finished.append({
            "trials": list(trials), "final": table.final_values(),
            "entropy": group.entropy, "coin": group.coin, "greedy": group.greedy,
            "costs": costs,
            "views": [views[i].rows if i in mine and views[i].enabled else None
                      for i in range(agents)],
            "seconds": group.seconds()})
        resumed = None
    steps = options.episodes * options.episode_steps
    return [{**out, "replays": saving.replays_within(k * steps, (k + 1) * steps)}
            for k, out in enumerate(saving.finished)]


def play_trials(world, group: GroupState, options: PPRLOptions, moves: list, trials: list,
                after_step, progress: bool = False) -> None:
    """The agents' episodes in every trial of a group at once on the private joint tables
    (``group.table``: its ``update`` and ``first_maximum_joint``), each trial with its own task in ``world``
    and generators (``group.drawn``: its public coin and the held agents' own generators),
    each agent choosing as the reference's joint methods do (`learners.draw_joint`); counts
    each trial's greedy selections in ``group.greedy``.  ``after_step`` after each update
    (the checkpoints'); a resumed group (``table.step`` > 0) goes on where it stood."""
    agents, greedy, table, mine = len(moves), group.greedy, group.table, group.mine

    def perceive(answers: list, k: int) -> list:
        return [None if answers[i] is None else answers[i][k] for i in range(agents)]

    def choose(states: list) -> list:
        draws = [draw_joint(options.selection, moves, rngs, options.epsilon, coin)
                 for coin, rngs in group.drawn]
        asked = [k for k, (actions, _) in enumerate(draws) if actions is None]
        chosen = [actions for actions, _ in draws]
        if asked:
            found = table.first_maximum_joint(asked, [states[k] for k in asked],
                                              [draws[k][1] for k in asked])
            for k, actions in zip(asked, found):
                chosen[k], greedy[k] = actions, greedy[k] + 1
        return chosen

    begun, done = divmod(table.step, options.episode_steps)
    if table.step and not done:                 # resumed at an episode's last update
        begun, done = begun - 1, options.episode_steps
    if table.step:
        states, actions = group.restore()
    for episode in progress_.track(range(begun, options.episodes),
                                   f"pprl trials {trials[0]}-{trials[-1]}", options.episodes,
                                   unit="episode", initial=begun, enabled=progress):
        if not done:
            first = world.call("reset", [True if i in mine else None for i in range(agents)])
            states = [perceive(first, k) for k in range(len(trials))]
            actions = choose(states)
        for _ in range(options.episode_steps - done):
            answers = world.call("step", [[actions[k][i] for k in range(len(trials))]
                                          if i in mine else None for i in range(agents)])
            after = [[None if a is None else a[0][k] for a in answers]
                     for k in range(len(trials))]
            rewards = [[None if a is None else a[1][k] for a in answers]
                       for k in range(len(trials))]
            following = choose(after)
            table.update(states, actions, rewards, after, following)
            states, actions = group.now = after, following
            after_step()
        done = 0
        world.call("end_episode", [episode if i in mine else None for i in range(agents)])
