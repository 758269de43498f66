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

The trial is one SPMD program (`play_trial`): in one process (``runtime=local``) it plays every
agent's turn; with each agent its own process (a Ray actor, or a federated party over TLS
links), the holder of a turn plays it while the others follow it (`SharedTurn.follow_turn`):
the same rounds, with no inputs of theirs, since the count of selections and updates in a turn
is public.  Each agent draws its choices from its own generator (its own OS entropy in a fresh
run, returned after the run for the reference only, EVALUATION ONLY).
"""

from __future__ import annotations

import functools
import secrets

import numpy as np

from ppml.crypto.rng import Stream, fresh_key
from ppml.mpc import tensor
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ, PrivateRows
from ppml.protocols.pprl.reference import (TrialResult, TurnPlayer, agent_generator, evaluate,
                                           generator_state, generators, learner,
                                           restore_generator, run_time_partitioned, turn_seed)
from ppml.protocols.pprl.shared_division import fixed_point
from ppml.protocols.pprl.shares_checkpoints import Progress, SharesCheckpoints, only
from ppml.protocols.pprl.shares import SharedTable, as_table
from ppml.runtime import spmd
from ppml.runtime.checkpoints import CheckpointPlan

SELECTIONS_PER_STEP = 2
"""The next action's selection and, when an episode ends, the new episode's first."""
SELECTIONS_AFTER_TURN = 1
"""After a turn's last update: the new episode's first selection when the last step ended an
episode, else none; padded to one so the others cannot tell."""


def share_first(ctx, first: FixedPointQ | None, cells: int):
    """Agent 0's table after its turn as its private input (``first``: None where this process
    does not hold agent 0), in the ring's range: Q-values scaled by 2^scale_bits, which
    `shared_division.check_ring` bounds with every product the update makes of them."""
    values = None if first is None else \
        np.array([int(v) for v in first.q.ravel()], dtype=np.int64)
    return ctx.share(values, owner=0, shape=(cells,), frac_bits=0, wide=True)


class SharedTurn(SharedTable):
    """The turns after agent 0's on the shared ``table`` (`share_first`), the holder's
    (``holder``, set as each turn begins) perceptions its private inputs
    (`reference.TurnPlayer` reads ``q`` and calls ``update`` where this process holds the
    holder; `follow_turn` elsewhere).  ``after_step`` is called after each update (the
    checkpoints')."""

    def __init__(self, ctx, table, states: int, actions: int, rules: FixedPointQ,
                 reward_bound: float, selections: int, views: list, after_step):
        super().__init__(ctx, table, states, actions, rules, views)
        self.reward_bound, self.selections = reward_bound, selections
        self.holder, self.after_step = 1, after_step
        self.q = PrivateRows(self)
        self._since = 0
        """Greedy selections since the last update."""

    @property
    def held(self) -> bool:
        """Whether this process holds the turn's holder (and so its perceptions)."""
        return self.ctx.holds(self.holder)

    def _one_hot(self, indices: list, size: int):
        """The holder's private one-hot rows (its input); None: a row of zeros.  Where this
        process does not hold the holder, only their number (public) is used."""
        rows = None
        if self.held:
            rows = np.zeros((len(indices), size), dtype=np.int64)
            for row, index in enumerate(indices):
                if index is not None:
                    rows[row, index] = 1
        return self.ctx.share(rows, owner=self.holder, shape=(len(indices), size), frac_bits=0)

    def _row(self, state: int | None):
        """Shares of Q(state, .) (zeros for None) without opening which (one product)."""
        return (self._one_hot([state], self.states)
                @ self.table.reshape(self.states, self.actions))[0]

    def first_maximum(self, state: int | None, order) -> int | None:
        """The position in ``order`` of the first maximum of Q(state, .), opened to the
        holder (None elsewhere: ``state`` and ``order`` are the holder's)."""
        if self.actions == 1:                     # nothing to compare, nothing to open
            self._since += 1
            return 0
        moves = None
        if self.held:                                       # moves[order[i], i] = 1
            moves = np.zeros((self.actions, self.actions), dtype=np.int64)
            moves[np.asarray(order), np.arange(self.actions)] = 1
        permuted = (self._row(state).reshape(1, self.actions)
                    @ self.ctx.share(moves, owner=self.holder,
                                     shape=(self.actions, self.actions), frac_bits=0))[0]
        one_hot = tensor.reveal_argmax(permuted, to=self.holder, method="pairwise",
                                       ties="first")
        self.comparisons += 1
        self._since += 1
        opened = self.ctx.value_at(one_hot, self.holder)
        return None if opened is None else int(np.flatnonzero(opened)[0])

    def end_turn(self) -> None:
        """The holder's turn is over: its selections after its last update padded to
        `SELECTIONS_AFTER_TURN` (when selection is greedy), so the next holder's first step,
        and the others' view of this turn's end, are those of every turn."""
        self._pad_selections(SELECTIONS_AFTER_TURN * (self.selections > 0), "a turn's end")

    def follow_turn(self, steps: int) -> None:
        """The holder's turn of ``steps`` learning steps, from a process that does not hold
        it: each step's selections and update, then the turn's end, with no inputs."""
        for _ in range(steps):
            self.update(None, None, None, None, None)
        self.end_turn()

    def _pad_selections(self, count: int, where: str) -> None:
        """Blind selections until ``count`` have run since the last padding."""
        if self._since > count:
            raise RuntimeError(f"{where} ran {self._since} greedy selections, more than the "
                               f"{count} that it shows the other agents")
        while self._since < count:
            self.first_maximum(None, Stream(fresh_key()).permutation(self.actions)
                               if self.held else None)
        self._since = 0

    def update(self, s: int | None, a: int | None, r: float | None, s2: int | None,
               a2: int | None) -> None:
        """Eqs. 3-4 on shares for the holder's (s, a, r, s', a'), after the blind selections
        that make up the step's count (all None where this process does not hold the
        holder)."""
        if self.held and not abs(r) <= self.reward_bound:
            raise ValueError(f"a reward of {r!r} is outside pprl.reward_bound="
                             f"{self.reward_bound}")
        self._pad_selections(self.selections, "a step")
        f, size = self.rules, self.states * self.actions
        column = self.table.reshape(size, 1)
        here = None if s is None else s * self.actions + a
        if f.learner == "sarsa":
            picks = self._one_hot([here, None if s2 is None else s2 * self.actions + a2], size)
            read = picks @ column
            q, q_next = read[0, 0], read[1, 0]
        else:
            picks = self._one_hot([here], size)
            q, q_next = (picks @ column)[0, 0], self.shared_max(self._row(s2))
        self.learn(picks[0], q, q_next, [(self.holder, f.alpha_k * f.scaled_reward(r)
                                          if self.held else None)])
        self.after_step()


def check_options(options: PPRLOptions) -> None:
    """The shares backend by time plays one round of turns (agent 0's in the clear)."""
    if options.rounds != 1:
        raise ValueError(f"pprl.rounds must be 1 with pprl.backend=shares (agent 0's turn in "
                         f"the clear, then each other agent's on the shares), got "
                         f"{options.rounds}")


def play_trial(ctx, options: PPRLOptions, agents: int, seed: int, trial: int, seeded: bool,
               record_views: bool = False, saving: SharesCheckpoints | None = None,
               resumed: dict | None = None) -> dict:
    """One trial by time on the shares backend, SPMD: each agent this process holds plays its
    turn (agent 0 in the clear, then on the shares), and follows the others'.  Returns what
    this process holds: ``final`` (the table, opened to agent 0 alone: EVALUATION ONLY),
    ``taken`` and ``entropy`` (agent -> its actions and its generator's entropy, None when
    ``seeded``: EVALUATION ONLY), ``views`` (agent -> its view), the engine's ``costs`` and
    the ``seconds`` it took.

    ``saving`` counts the learning steps on the shares and checkpoints them (each held agent
    its `TimeState`); ``resumed`` (agent -> that state, for the held agents) goes on within a
    turn on the shares from a checkpoint: agent 0's turn, before it, is not played again."""
    saving = saving or SharesCheckpoints(ctx, None, own_output)
    reward_bound = options.task_reward_bound()
    rules = fixed_point(options, reward_bound)
    env_seed = generators(seed, trial)[0]
    env = tasks.make(options.task)
    states, actions = env.observation_space.n, env.action_space.n
    env.close()
    steps = options.steps_per_agent
    views = [ViewRecorder(record_views) for _ in range(agents)]
    mine = [agent for agent in range(agents) if ctx.holds(agent)]
    trial_state = TimeState(ctx, mine, views, seeded, resumed)
    entropy = trial_state.entropy
    selections = SELECTIONS_PER_STEP * (options.selection != "random")
    taken, table, first = trial_state.taken, None, 0

    def on_shares(shared) -> SharedTurn:
        trial_state.table = SharedTurn(ctx, shared, states, actions, rules, reward_bound,
                                       selections, views, lambda: saving.done(trial_state.states))
        return trial_state.table
    if resumed:
        table = on_shares(None)
        table.resume([resumed[agent] for agent in mine])
        first = 1 + (table.step - 1) // steps
    for agent in range(first, agents):            # agent 0 in the clear, then on the shares
        if agent == 1 and not resumed:
            table = on_shares(share_first(ctx, table, states * actions))
        done = table.step - (agent - 1) * steps if agent == first and resumed else 0
        if agent:
            table.holder = agent
        if not ctx.holds(agent):
            if agent:
                table.follow_turn(steps - done)
            continue
        if not agent:
            table = learner(options, states, actions, fixed=True)
        rng = agent_generator(seed, trial, agent, entropy[agent])
        position = trial_state.position(agent, rng) if done else {}
        player = TurnPlayer(tasks.make(options.task), turn_seed(env_seed, agent), table,
                            options, rng, **position)
        trial_state.playing = (agent, player)
        player.play(steps - done)
        if agent:
            table.end_turn()
        taken[agent] = [int(a) for a in player.close()]
        trial_state.playing = None
    costs = table.costs(trial_state.since)
    final = table.final_values()
    return {"final": None if final is None else final[0], "taken": taken, "entropy": entropy,
            "costs": costs,
            "views": [views[agent].rows if record_views and agent in mine else None
                      for agent in range(agents)],
            "seconds": trial_state.seconds()}


class TimeState(Progress):
    """What each held agent checkpoints of a trial by time (`states`): its shares of the table
    and the public counts (`SharedTable.state`), its selection entropy, its turn's actions and,
    holding the turn, where it stands (`TurnPlayer.position`) and its generator's position,
    with its `Progress`.  ``entropy``: each held agent's (None when ``seeded``), its own OS
    entropy drawn as the trial begins, or the one it checkpointed."""

    def __init__(self, ctx, mine: list, views: list, seeded: bool, resumed: dict | None):
        super().__init__(ctx, mine, views, resumed)
        agents = len(views)
        self.table, self.playing = None, None
        self.taken = [self.resumed[agent]["taken"] if agent in self.resumed else None
                      for agent in range(agents)]
        self.entropy = [None if seeded or agent not in mine else
                        self.resumed[agent]["entropy"] if self.resumed else secrets.randbits(128)
                        for agent in range(agents)]

    def position(self, agent: int, rng) -> dict:
        """Where ``agent``'s resumed turn stands, ``rng`` put back where it stood."""
        restore_generator(rng, self.resumed[agent]["rng"])
        return self.resumed[agent]["position"]

    def states(self) -> dict:
        """Agent -> what it checkpoints now (within an update: every agent at the same
        point of the engine's rounds)."""
        holder, player = self.playing if self.playing else (None, None)
        return {agent: {**self.table.state(agent), **self.state(agent),
                        "entropy": self.entropy[agent], "taken": self.taken[agent],
                        "position": player.position() if agent == holder else None,
                        "rng": generator_state(player.rng) if agent == holder else None}
                for agent in self.mine}


def own_output(out: dict, agent: int) -> dict:
    """``agent``'s part of a trial's output (`play_trial`): the table if it is agent 0 (opened
    to it alone), its own actions, entropy and view, and the public counts."""
    return {**out, "final": out["final"] if agent == 0 else None,
            **{key: only(out[key], agent) for key in ("taken", "entropy", "views")}}


def time_trials(ctx, options: PPRLOptions, agents: int, seed: int, trials: list,
                seeded: bool, record_views: bool = False,
                checkpoints: CheckpointPlan | None = None) -> list:
    """`play_trial` for each of ``trials`` on one engine (the views of the first only): the
    SPMD program of a run with each agent its own process, or all in one.  With
    ``checkpoints`` each held agent saves its own state every ``checkpoints.every`` learning
    steps on the shares (counted across the trials, (agents - 1) x steps_per_agent each); a
    resumed run goes on from the last step every agent holds.  Each output's ``replays`` are
    those that ran some of its trial's steps twice."""
    saving = SharesCheckpoints(ctx, checkpoints, own_output)
    resumed = saving.start()
    for k in range(len(saving.finished), len(trials)):
        saving.finished.append(play_trial(ctx, options, agents, seed, trials[k], seeded,
                                          record_views and not k, saving, resumed))
        resumed = None
    per_trial = (agents - 1) * options.steps_per_agent
    return [{**out, "replays": saving.replays_within(k * per_trial, (k + 1) * per_trial)}
            for k, out in enumerate(saving.finished)]


def trial_result(options: PPRLOptions, agents: int, seed: int, trial: int,
                 outs: list) -> TrialResult:
    """A trial's row from every agent's `play_trial` output (``outs``, by agent; in one process
    each is the same dict): its greedy evaluation, the comparison with the fixed-point
    reference, and agent 0's costs and seconds."""
    taken = [action for agent in range(agents) for action in outs[agent]["taken"][agent]]
    entropy = [outs[agent]["entropy"][agent] for agent in range(agents)]
    selection = None if entropy[0] is None else entropy
    env_seed, _, evaluation = generators(seed, trial)
    env = tasks.make(options.task)
    final = as_table(options, env.observation_space.n, env.action_space.n, outs[0]["final"])
    seconds = outs[0]["seconds"]
    reference = run_time_partitioned(options, "crl_fixed", agents, seed, trial, selection)
    result = evaluate(env, final, turn_seed(env_seed, agents), evaluation, trial, seconds,
                      q_equal_reference=bool(np.array_equal(final.q, reference.table.q)),
                      action_agreement=float(np.mean(np.array(taken) ==
                                                     np.array(reference.taken))),
                      online_s=seconds, **outs[0]["costs"])
    result.replays = [tuple(replay) for replay in outs[0]["replays"]]
    result.views = {f"agent-{agent}": ViewRecorder.of(outs[agent]["views"][agent]).table()
                    for agent in range(agents) if outs[agent]["views"][agent] is not None}
    return result


def run_shares_protocol(options: PPRLOptions, agents: int, seed: int, trial: int,
                        key_seed: int | None = None, record_views: bool = False,
                        runtime: str = "local", **runtime_options) -> TrialResult:
    """One trial of PPRL partitioned by time on the shares backend among ``agents``; the row
    carries the comparison with the fixed-point reference (``q_equal_reference``) and the
    engine's costs.  ``key_seed``: the engine's INSECURE seeded mode; with ``record_views``
    the result's ``views`` has each agent's openings.  ``runtime``: "local" (every agent in
    this process) or "ray" (each agent a Ray actor: :func:`run_shares_time_trials`)."""
    return run_shares_time_trials(options, agents, seed, [trial], key_seed, record_views,
                                  runtime, **runtime_options)[0]


def run_shares_time_trials(options: PPRLOptions, agents: int, seed: int, trials: list,
                           key_seed: int | None = None, record_views: bool = False,
                           runtime: str = "local", checkpoints: CheckpointPlan | None = None,
                           **runtime_options) -> list:
    """``trials`` by time on the shares backend, one after the other on one engine
    (`time_trials`, with its ``checkpoints``); each trial's result (`trial_result`, with the
    ``replays`` that ran some of its steps twice)."""
    check_options(options)
    program = functools.partial(time_trials, options=options, agents=agents, seed=seed,
                                trials=list(trials), seeded=key_seed is not None,
                                record_views=record_views, checkpoints=checkpoints)
    per_agent = spmd.run(program, parties=agents, runtime=runtime, seed=key_seed,
                         record_views=record_views, **runtime_options)
    return [trial_result(options, agents, seed, trial,
                         [per_agent[agent][k] for agent in range(agents)])
            for k, trial in enumerate(trials)]
