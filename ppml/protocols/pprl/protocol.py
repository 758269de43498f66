"""PPRL partitioned by time (Sakuma et al., section 4.1, Fig. 2; section 5): SARSA and
Q-learning with random, greedy or epsilon-greedy selection on Q-values encrypted under another
agent's key, with the agents as roles in any runtime.

The turns go ``pprl.rounds`` times round the agents (`schedule`).  The first turn's agent
learns in the clear and hands the table over under its own key (Fig. 2, step 1); every later
turn's holder updates it under its owner's key with the owner (`turn.EncryptedTurn`), and takes
it from the previous holder (`roles.TimeAgent.hand_over`), re-randomised, or by the key switch
when the turn comes back to the owner.  `play_schedule` drives the turns: from this process for
``runtime=local`` and ``ray``, from agent 0's party in a federated run
(`ppml.experiments.pprl_parties`); it sees public keys and no ciphertext, and calls each
holder a chunk of steps at a time, so that every wait is bounded.  The learned table is opened
at the end (the run's output, from which every agent reads the policy).

Each agent's random choices (actions, epsilon draws, the permutations that break ties) come from
its own OS entropy in a fresh run (from the public seed only in the INSECURE seeded mode); the
evaluation takes that entropy from the agents after the run (EVALUATION ONLY, never used by
another agent) and hands it to the fixed-point reference, which takes the same actions and must
end with the same table, entry for entry (the row's ``q_equal_reference``).  The partitioning
by observation is `observation`.
"""

from __future__ import annotations

import time

import numpy as np

from ppml.checks import check_int
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.reference import (TrialResult, evaluate, generators, learner,
                                           run_time_partitioned, turn_seed)
from ppml.protocols.pprl.roles import TOTALS, EngineDealer, TimeAgent
from ppml.runtime import progress as progress_
from ppml.runtime import roles
from ppml.runtime.checkpoints import CheckpointPlan, RoleCheckpoints

PLAY_CHUNK = 500
"""Learning steps per call to a holder: each call is bounded by the roles' timeout."""


def schedule(agents: int, rounds: int) -> list:
    """(holder, owner, previous holder) of each turn: turn t is agent t mod ``agents``'s; the
    first turn is in the clear (owner None); the owner is the first agent until the turn comes
    back to it, when the key switch makes the previous holder the owner."""
    holders = [t % agents for t in range(agents * rounds)]
    turns, owner = [(holders[0], None, None)], holders[0]
    for previous, holder in zip(holders, holders[1:]):
        if holder == owner:
            owner = previous
        turns.append((holder, owner, previous))
    return turns


def play_schedule(parties: list, options: PPRLOptions, progress: bool = False,
                  saving: RoleCheckpoints | None = None) -> tuple:
    """Every turn of `schedule` with the agents' roles ``parties``; returns (the last holder,
    its owner).

    The run's steps are the agents' learning steps, turn after turn.  With ``saving`` every
    agent saves its own state after each ``saving.plan.every`` of them and after the last (at
    the end of a turn, once the turn is over), and a resumed run goes on from the last step
    all hold (a finished one at its end, as a federated run's earlier trials): at a
    turn's start, or within it, the holder making its engine with the owner anew
    (`roles.TimeAgent.rejoin`)."""
    turns = schedule(len(parties), options.rounds)
    steps = options.steps_per_agent
    first = saving.start()[0] if saving else 0
    with progress_.bar("pprl turns", len(turns) * steps, initial=first,
                       enabled=progress) as bar:
        for turn in range(first // steps, len(turns)):
            holder, owner, previous = turns[turn]
            done = first - turn * steps if turn == first // steps else 0
            if done:
                if owner is not None:
                    parties[holder].call("rejoin")
            elif owner is None:
                parties[holder].call("begin_clear", turn)
            else:
                parties[holder].call("begin_turn", turn, owner, previous, steps)
            for chunk in chunks(turn * steps + done, (turn + 1) * steps,
                                saving.plan.every if saving else steps):
                parties[holder].call("play", chunk)
                bar.update(chunk)
                done += chunk
                last = turn == len(turns) - 1 and done == steps
                if done == steps:
                    parties[holder].call("end_turn", last)
                if saving:
                    saving.done(turn * steps + done, {}, last)
    return turns[-1][:2]


def stores(agents: list, **others) -> dict:
    """The roles that keep checkpoints, by the names of their stores: every agent (``agent-i``)
    and ``others`` (by observation: the world)."""
    return {**{f"agent-{i}": agent for i, agent in enumerate(agents)}, **others}


def chunks(start: int, end: int, every: int) -> list:
    """The sizes of the calls that play the run's steps ``start`` to ``end``: at most
    `PLAY_CHUNK` each, each ending at a multiple of ``every`` (a checkpoint) or at ``end``."""
    sizes = []
    while start < end:
        stop = min(start + PLAY_CHUNK, (start // every + 1) * every, end)
        sizes.append(stop - start)
        start = stop
    return sizes


def run_time_protocol(options: PPRLOptions, agents: int, seed: int, trial: int,
                      key_bits: int, insecure_key_bits_ok: bool = False,
                      key_seed: int | None = None, record_views: bool = False,
                      workers: int = 1, runtime: str = "local",
                      timeout_s: float = roles.DEFAULT_TIMEOUT_S,
                      progress: bool = False,
                      checkpoints: CheckpointPlan | None = None) -> TrialResult:
    """One trial of PPRL partitioned by time among ``agents`` roles in ``runtime`` (``local``
    or ``ray``), with the engines' dealer a role of its own; the row carries the comparison
    with the fixed-point reference of the same trial.  ``key_seed``: INSECURE seeded keys
    (and choices).  With ``record_views`` the result's ``views`` has each agent's view
    (`roles.TimeAgent.view`); ``workers`` > 1 fills each agent's obfuscator pools with that
    many Ray tasks while the steps run (Ray must be up).  ``checkpoints`` (the trial's plan):
    each agent keeps its own checkpoints (`play_schedule`); the result's ``replays`` says
    which steps a resumed trial ran twice.  The dealer keeps none: it serves the open turn's
    engine only, which a resumed run makes anew."""
    check_int("parties", agents, 2, what="the number of agents")
    start = time.perf_counter()
    made = []
    try:
        with progress_.stage("pprl set-up (keys)", enabled=progress):
            made.append(roles.spawn(EngineDealer, runtime, key_seed, timeout_s=timeout_s,
                                    background=True))
            for i in range(agents):
                made.append(roles.spawn(TimeAgent, runtime, i, agents, options, seed, trial,
                                        key_bits, insecure_key_bits_ok, key_seed, runtime,
                                        record_views, workers, timeout_s, name=f"agent-{i}",
                                        timeout_s=timeout_s, background=True))
            dealer, parties = made[0], made[1:]
            roles.call_all([(p, "attach", (parties, dealer)) for p in parties])
            saving = checkpoints and RoleCheckpoints(checkpoints, stores(parties), roles.gather)
        setup_s = time.perf_counter() - start
        holder, owner = play_schedule(parties, options, progress, saving)
        values = parties[owner].call("reveal", holder)                # EVALUATION ONLY
        reports = roles.call_all([(p, "report", ()) for p in parties])
        views = roles.call_all([(p, "view_table", ()) for p in parties]) if record_views \
            else []
    finally:
        roles.teardown(made)
    result = time_result(options, agents, seed, trial, values, reports,
                         time.perf_counter() - start, setup_s)
    result.views = {f"agent-{i}": view for i, view in enumerate(views)}
    result.replays = saving.replays if saving else []
    return result


def time_result(options: PPRLOptions, agents: int, seed: int, trial: int, values: list,
                reports: list, seconds: float, setup_s: float) -> TrialResult:
    """EVALUATION ONLY: the trial's row from the opened final table ``values`` and each
    agent's report: the greedy episode of the learned policy, the comparison with the
    fixed-point reference run with the agents' own randomness, the costs."""
    env = tasks.make(options.task)
    states, actions = env.observation_space.n, env.action_space.n
    selection = None if reports[0]["entropy"] is None else [int(r["entropy"]) for r in reports]
    reference = run_time_partitioned(options, "crl_fixed", agents, seed, trial, selection)
    final = learner(options, states, actions, fixed=True)
    final.q = np.array(values, dtype=object).reshape(states, actions)
    taken = [a for _, actions_ in sorted(t for r in reports for t in r["taken"])
             for a in actions_]
    env_seed, _, evaluation = generators(seed, trial)
    offline = sum(r["offline_s"] for r in reports)
    result = evaluate(env, final, turn_seed(env_seed, agents * options.rounds), evaluation,
                      trial, seconds,
                      q_equal_reference=bool(np.array_equal(final.q, reference.table.q)),
                      action_agreement=float(np.mean(np.array(taken) ==
                                                     np.array(reference.taken))),
                      setup_s=setup_s, online_s=seconds - setup_s - offline, offline_s=offline,
                      **{k: sum(r[k] for r in reports) for k in TOTALS})
    result.taken = taken
    return result
