"""PPRL partitioned by observation (Sakuma et al., section 4.2, Fig. 3, eqs. 5-9; section 5.1,
Fig. 4): SARSA and Q-learning with random, greedy or epsilon-greedy selection among m >= 2
agents on a Q-table encrypted under an (m, m)-threshold Paillier key, the agents, the world and
the dealer as roles in any runtime.

The agents (`observation_agent.ObservationAgent`) perceive the world (`world.World`) and update
agent 0's table along their chain; `play_observation` drives the steps: from this process for
``runtime=local`` and ``ray``, from agent 0's party in a federated run
(`ppml.experiments.pprl_parties`).  It says whose part of a chain comes next and sees no
ciphertext and no perception, only epsilon-greedy's public coin.  Its selection is
`learners.select_joint` spread over the agents: the coin from agent 0's coin generator, then
each agent's own random action, or its own permutation and Fig. 4.

The key is made by a dealer in its own trust domain (`KeyDealer`), who hands each agent its
share sealed to the agent's X25519 key and keeps none once all are handed; it also deals the
engine's keys.  Each agent's random actions come from its own OS entropy in a fresh run; the
evaluation takes it from the agents after the run and hands it to the fixed-point reference
(EVALUATION ONLY).

With checkpoints each agent and the world save their own states after every
``checkpoint_every`` steps (`play_observation`); a resumed trial's agents keep their own key
shares, so the table stays under the key the dealer dealt once (`set_up`; docs/pprl.md).
"""

from __future__ import annotations

import time

import numpy as np

from ppml.checks import check_int
from ppml.crypto.paillier import generate_keypair
from ppml.crypto.paillier.threshold import deal
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.observation_agent import ObservationAgent, shared
from ppml.protocols.pprl.protocol import stores
from ppml.protocols.pprl.reference import TrialResult, learner, run_observation_partitioned
from ppml.protocols.pprl.roles import TOTALS, EngineDealer
from ppml.protocols.pprl.world import World
from ppml.runtime import progress as progress_
from ppml.runtime import roles
from ppml.runtime.checkpoints import CheckpointPlan, RoleCheckpoints



def deal_key(agents: int, key_bits: int, insecure_key_bits_ok: bool = False,
             seed: int | None = None) -> list:
    """A fresh Paillier key pair and its (m, m) shares, one per agent (`threshold.deal`); the
    key pair goes out of scope here.  ``seed``: INSECURE seeded keys and shares."""
    _, private_key = generate_keypair(key_bits, insecure_key_bits_ok=insecure_key_bits_ok,
                                      seed=None if seed is None else seed * 1000 + 999)
    return deal(private_key, agents, seed)


class KeyDealer(EngineDealer):
    """The dealer partitioned by observation, a role of its own that must not collude with the
    agents: the (m, m)-threshold key, whose shares it hands each agent sealed to the agent's
    X25519 key, keeping none once handed (it never keeps the key itself), and the engine's
    dealer keys (`roles.EngineDealer`)."""

    def __init__(self, key_seed: int | None, agents: int, key_bits: int,
                 insecure_key_bits_ok: bool = False):
        super().__init__(key_seed)
        self._shares = deal_key(agents, key_bits, insecure_key_bits_ok, key_seed)

    def key_share(self, index: int, public: bytes) -> tuple:
        """(the public key, its X25519 key, agent ``index``'s share sealed to ``public``);
        each share once."""
        share = self._shares[index]
        if share is None:
            raise PermissionError(f"agent {index}'s key share has been handed over already")
        self._shares[index] = None
        return share.public_key, self._agreement.public, \
            self._agreement.seal(public, share.exponent_bytes(), shared(index))


def set_up(parties: list, saving: RoleCheckpoints | None = None) -> int:
    """A trial's set-up; returns the step it goes on from.  A fresh trial's agents take their
    key shares from the dealer (agent 0 encrypts the table: Fig. 3, step 1); with ``saving``
    a resumed one's agents and world go back to the last step all hold
    (`RoleCheckpoints.start`), each agent with its own share, which keeps the table under the
    same key (the dealer deals none again).  Then the last agent's engine with agent 0."""
    first = saving.start()[0] if saving else 0
    if not first:                   # agent 0 last: a federated driver's own call runs at once
        _every([*parties[1:], parties[0]], "take_key_share")
    parties[-1].call("link")
    return first


def play_observation(parties: list, world, options: PPRLOptions, progress: bool = False,
                     saving: RoleCheckpoints | None = None, first: int = 0) -> float:
    """Every episode with the agents' roles ``parties`` and the ``world``, from step
    ``first`` on (`set_up`); returns the offline seconds (the obfuscators each agent makes
    for an episode's steps before them).  With ``saving`` the agents and the world save
    their own states after each ``saving.plan.every`` steps and after the last, once the
    step is over (its update applied: Fig. 3, 4(e); at an episode's end the world's row
    written)."""
    steps, offline = options.episode_steps, 0.0
    total = options.episodes * steps
    with progress_.bar("pprl steps", total, initial=first, enabled=progress) as bar:
        for episode in range(first // steps, options.episodes):
            done = first - episode * steps if episode == first // steps else 0
            began = time.perf_counter()
            _every(parties, "prepare", steps - done)
            offline += time.perf_counter() - began
            if not done:
                world.call("reset", episode)
                _every(parties, "perceive")
                _select(parties, options, episode * steps + 1)
                _every(parties, "shift")
            for step in range(episode * steps + done + 1, (episode + 1) * steps + 1):
                _every(parties, "act")
                world.call("advance")
                _every(parties, "perceive")
                _select(parties, options, step)
                if options.learner == "qlearning":
                    _joint_maximum(parties, step, fresh=True)
                    parties[-1].call("take_maximum")
                _update(parties, step)
                _every(parties, "shift")
                bar.update(1)
                if step % steps == 0:
                    world.call("end_episode")
                if saving:
                    saving.done(step, {}, step == total)
    return offline


def _every(parties: list, method: str, *args) -> list:
    return roles.call_all([(p, method, args) for p in parties])


def _select(parties: list, options: PPRLOptions, step: int) -> None:
    """`learners.select_joint` over the agents: the public coin, then each agent's random
    action, or Fig. 4 with each agent's own permutation."""
    kind = options.selection
    if kind == "random" or (kind == "epsilon_greedy" and
                            parties[0].call("coin") < options.epsilon):
        _every(parties, "choose_random")
        return
    _joint_maximum(parties, step, fresh=False)
    _every(parties, "take_place")


def _joint_maximum(parties: list, step: int, fresh: bool) -> None:
    """Fig. 4's chain at s' and the comparison, whose position agent 0 learns."""
    _every(parties, "draw_order", fresh)
    parties[0].call("permute_start")
    for i in range(1, len(parties)):
        parties[i].call("permute_from", i - 1)
    parties[-1].call("compare_block", step)


def _update(parties: list, step: int) -> None:
    """Fig. 3's chain: slices out to the last agent, the division, the update back."""
    m = len(parties)
    parties[0].call("slices")
    for i in range(1, m - 1):
        parties[i].call("slices_from", i - 1)
    parties[-1].call("divide_from", step, m - 2)
    for i in range(m - 2, 0, -1):
        parties[i].call("widen_from", i + 1)
    parties[0].call("apply_from", 1)


def run_observation_protocol(options: PPRLOptions, agents: int, seed: int, trial: int,
                             key_bits: int, insecure_key_bits_ok: bool = False,
                             key_seed: int | None = None, record_views: bool = False,
                             workers: int = 1, runtime: str = "local",
                             timeout_s: float = roles.DEFAULT_TIMEOUT_S,
                             progress: bool = False,
                             checkpoints: CheckpointPlan | None = None) -> TrialResult:
    """One trial of PPRL partitioned by observation among ``agents`` roles in ``runtime``
    (``local`` or ``ray``), with the world and the dealer roles of their own: per-episode rows
    as the reference's, the last one with the comparison against the fixed-point reference of
    the same trial (``q_equal_reference``, ``action_agreement``) and the costs.
    ``key_seed``: INSECURE seeded keys and choices; ``workers`` > 1: Ray tasks fill the
    obfuscator pools.  ``checkpoints`` (the trial's plan): each agent and the world keep
    their own checkpoints (`set_up`, `play_observation`); the result's ``replays`` says which
    steps a resumed trial ran twice.  The dealer keeps none: it hands the key shares out once
    (a resumed trial's dealer makes a key it never hands out) and serves the engine, which a
    resumed run makes anew."""
    check_int("parties", agents, 2, what="the number of agents")
    start = time.perf_counter()
    made = []
    try:
        with progress_.stage("pprl set-up (keys)", enabled=progress):
            made.append(roles.spawn(KeyDealer, runtime, key_seed, agents, key_bits,
                                    insecure_key_bits_ok, timeout_s=timeout_s, background=True))
            made.append(roles.spawn(World, runtime, options, agents, seed, trial,
                                    timeout_s=timeout_s, background=True))
            for i in range(agents):
                made.append(roles.spawn(ObservationAgent, runtime, i, agents, options, seed, trial,
                                        key_bits, insecure_key_bits_ok, key_seed, runtime,
                                        record_views, workers, timeout_s, name=f"agent-{i}",
                                        timeout_s=timeout_s, background=True))
            dealer, world, parties = made[0], made[1], made[2:]
            _every(parties, "attach", parties, dealer, world)
            saving = checkpoints and RoleCheckpoints(checkpoints, stores(parties, world=world),
                                                     roles.gather)
            first = set_up(parties, saving)
        setup_s = time.perf_counter() - start
        offline = play_observation(parties, world, options, progress, saving, first)
        _every(parties, "finish")
        values = parties[0].call("reveal")                            # EVALUATION ONLY
        reports = _every(parties, "report")
        views = _every(parties, "view_table") if record_views else []
        seen = world.call("report")
    finally:
        roles.teardown(made)
    result = observation_result(options, agents, seed, trial, values, reports, seen,
                                time.perf_counter() - start, setup_s, offline)
    result.views = {f"agent-{i}": view for i, view in enumerate(views)}
    result.replays = saving.replays if saving else []
    return result


def observation_result(options: PPRLOptions, agents: int, seed: int, trial: int,
                       values: list, reports: list, seen: dict, seconds: float,
                       setup_s: float, offline: float) -> TrialResult:
    """EVALUATION ONLY: the trial's rows (the world's, per episode) from the opened final
    table ``values``, each agent's report and the world's, the last row with the comparison
    against the fixed-point reference run with the agents' own randomness, and the costs."""
    fresh = reports[0]["entropy"] is not None
    selection = [int(r["entropy"]) for r in reports] + [int(reports[0]["coin_entropy"])] \
        if fresh else None
    env = tasks.make(options.task, agents)
    final = learner(options, int(np.prod(env.observation_space.nvec)),
                    int(np.prod(env.action_space.nvec)), fixed=True)
    env.close()
    final.q = np.array(values, dtype=object).reshape(final.q.shape)
    taken = [tuple(a) for a in seen["taken"]]
    rows = seen["rows"]
    rows[-1].update(**against_reference(options, seed, trial, agents, selection, final, taken),
                    setup_s=setup_s, online_s=seconds - setup_s - offline, offline_s=offline,
                    **{k: sum(r[k] for r in reports) for k in TOTALS})
    return TrialResult(rows, seconds, final, taken)


def against_reference(options: PPRLOptions, seed: int, trial: int, agents: int,
                      selection: list | None, final, taken: list) -> dict:
    """EVALUATION ONLY: the fixed-point reference run with the agents' own randomness
    (``selection``, handed over after the run): does the protocol's opened ``final`` table
    equal its table entry for entry, and in what share of steps were the joint actions
    ``taken`` the same."""
    reference = run_observation_partitioned(options, "crl_fixed", seed, trial, agents, selection)
    return {"q_equal_reference": bool(np.array_equal(final.q, reference.table.q)),
            "action_agreement": float(np.mean([a == b for a, b
                                               in zip(taken, reference.taken)]))}
