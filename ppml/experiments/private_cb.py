"""The private contextual bandit experiment: Algorithm 1 against its plaintext reference.

One run trains the secure learner (ppml/protocols/private_cb/protocol.py) for ``horizon`` steps
and, in the same process and on the same data stream, the float64 reference
(ppml/protocols/private_cb/reference.py) fed with the very exploration draws the dealer made for
the secure run (same dealer secret).  Per step it records the arm and reward of both; per run
the cumulative rewards, the times, the communication, the privacy level eta = log(|A| / eps)
(Theorem 1), and the slowdowns, online and in total, against the lean float64 loop of the same
algorithm (`LeanEpsilonGreedyLinear`, timed in the same run with the same draws).
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

from ppml.runtime import spmd
from ppml.protocols.private_cb.exploration import ExplorationTape
from ppml.protocols.private_cb.reference import EpsilonGreedyLinear, LeanEpsilonGreedyLinear
from ppml.protocols.private_cb.config import PrivateCBConfig
from ppml.protocols.private_cb.protocol import program
from ppml.protocols.private_cb.world import World
from ppml.runtime import roles
from ppml.checks import check_int
from ppml.crypto.fixed import decode
from ppml.crypto.rng import fresh_key
from ppml.data import load_contextual
from ppml.experiments import checkpointing
from ppml.experiments.config import RunConfig, engine_options
from ppml.experiments.federation import run_parties
from ppml.experiments.registry import register
from ppml.experiments.results import RunOutput
from ppml.experiments.slowdown import TIMINGS, slowdowns, timed
from ppml.experiments.table import format_table
from ppml.mpc.keys import dealer_secret_key
from ppml.privacy.membership import squared_loss, weights_of, yeom_advantage


def bandit_config(config: RunConfig) -> PrivateCBConfig:
    return PrivateCBConfig.of(config.private_cb, parties=config.parties, arms=config.arms,
                              dims=config.dims, horizon=config.horizon)


def privacy_level(arms: int, epsilon: float) -> float:
    """eta = log(|A| / eps): epsilon-greedy's differential privacy (Theorem 1); inf at eps = 0."""
    return math.inf if epsilon == 0 else math.log(arms / epsilon)


def checkpoint_steps(horizon: int, checkpoints: int) -> tuple:
    """``checkpoints`` steps spread evenly over training, the last one at the horizon."""
    if checkpoints == 0:
        return ()
    return tuple(int(s) for s in np.unique(np.linspace(horizon / checkpoints, horizon,
                                                       checkpoints).astype(int)))


def held_out(config: RunConfig, data) -> tuple:
    """Non-members for the membership audit: MNIST's test set, or the digits a run never saw."""
    if data.name == "mnist":
        test = load_contextual("mnist_test", dims=config.dims, data_dir=config.data_dir)
        return test.contexts, test.labels
    if data.name == "digits":
        everything = load_contextual("digits", dims=config.dims, data_seed=config.data_seed)
        unseen = ~np.isin(everything.source_index, data.source_index)
        if not unseen.any():
            raise ValueError("checkpoints on digits need horizon < 1797 so that some images "
                             "stay unseen as non-members")
        return everything.contexts[unseen], everything.labels[unseen]
    raise ValueError(f"checkpoints (membership inference) need dataset mnist or digits, got "
                     f"{config.dataset!r}")


def membership_audit(config: RunConfig, data, saved: list) -> dict:
    """step -> Yeom et al.'s attack on the checkpoint reconstructed from every party's shares."""
    others, other_labels = held_out(config, data)
    rng = np.random.default_rng(config.data_seed)
    audit = {}
    for pieces in zip(*saved):                      # one checkpoint, every party's shares
        step, frac = pieces[0][0], pieces[0][3]
        w_inv = decode(np.sum([p[1] for p in pieces], axis=0, dtype=np.uint64), frac)
        b = decode(np.sum([p[2] for p in pieces], axis=0, dtype=np.uint64), frac)
        weights = weights_of(w_inv, b)
        n = min(step, len(others), 1000)
        members = rng.choice(step, n, replace=False)
        outsiders = rng.choice(len(others), n, replace=False)
        audit[step] = yeom_advantage(
            squared_loss(weights, data.contexts[members], data.labels[members]),
            squared_loss(weights, others[outsiders], other_labels[outsiders]))
    return audit


def engine_names(parties: int) -> list:
    """The engine's ranks by name: the feature parties, p' and p'' (their checkpoint folders,
    and their parties' names in a federated run)."""
    return [f"party-{p}" for p in range(parties)] + ["puller", "rewarder"]


def run_secure(config: RunConfig, bandit: PrivateCBConfig, data, dealer_secret: bytes) -> dict:
    """Algorithm 1 with every role a party; returns arms, rewards, stats, checkpoints, time,
    the replays of a resumed run (and under runtime=federated the dealer's own secret, which
    the reference replays)."""
    if config.runtime == "federated":
        return run_federated(config, bandit)
    plan = checkpointing.plan(config, engine_names(bandit.parties))
    inputs = {p: {f"features_{p}": data.contexts[:bandit.horizon, cols], "checkpoints": plan}
              for p, cols in enumerate(bandit.feature_blocks)}
    world = roles.spawn(World, config.runtime, data, concurrency=4,
                        timeout_s=config.party_timeout_s)
    inputs[bandit.puller] = {"world": world, "checkpoints": plan}
    inputs[bandit.rewarder] = {"world": world, "checkpoints": plan}
    body = functools.partial(program, config=bandit, progress=config.progress,
                             checkpoint_steps=checkpoint_steps(bandit.horizon, bandit.checkpoints))
    start = time.perf_counter()
    try:
        outs = spmd.run(body, clients=2, inputs=inputs, dealer_secret=dealer_secret,
                        **engine_options(config))
    finally:
        roles.teardown([world])
    wall = time.perf_counter() - start
    stats = [out["stats"] for out in outs[:bandit.parties]]
    return {"arms": outs[bandit.puller]["arms"], "rewards": outs[bandit.rewarder]["rewards"],
            "wall_s": wall, "stats": stats,
            "program_s": max(out["program_s"] for out in outs),
            "checkpoints": [out["checkpoints"] for out in outs[:bandit.parties]],
            "replays": outs[0]["replays"]}


def run_federated(config: RunConfig, bandit: PrivateCBConfig) -> dict:
    """Every role its own process on loopback (`ppml.experiments.private_cb_parties`)."""
    start = time.perf_counter()
    outs = run_parties(config)
    feature = [outs[f"party-{p}"] for p in range(bandit.parties)]
    return {"arms": outs["puller"]["arms"], "rewards": outs["rewarder"]["rewards"],
            "wall_s": time.perf_counter() - start, "stats": [out["stats"] for out in feature],
            "checkpoints": [out["checkpoints"] for out in feature],
            "program_s": max(out["program_s"] for out in outs.values() if "program_s" in out),
            "replays": outs["party-0"]["replays"],
            "dealer_secret": outs["dealer"]["audit_dealer_secret"]}


def exploration_draws(bandit: PrivateCBConfig, dealer_secret: bytes,
                      precision_bits: int) -> list:
    """Every step's (y_t, v_t, gamma_t), the very draws the dealer made for the secure run."""
    tape = ExplorationTape(dealer_secret)
    return [tape.draws(bandit.epsilon, bandit.arms, precision_bits)
            for _ in range(bandit.horizon)]


def play(model, data, draws: list) -> dict:
    """One float64 run of ``model`` (`EpsilonGreedyLinear` or `LeanEpsilonGreedyLinear`) on
    the stream with the given draws: its arms and rewards."""
    arms, rewards = [], []
    for t, (y, v, gamma) in enumerate(draws):
        x = data.contexts[t]
        arms.append(model.select(x, y, v, gamma))
        rewards.append(data.reward(t, arms[-1]))
        model.update(x, arms[-1], rewards[-1])
    return {"arms": arms, "rewards": rewards}


def run_plaintext(bandit: PrivateCBConfig, data, dealer_secret: bytes, precision_bits: int,
                  timings: int = TIMINGS) -> dict:
    """The float64 reference on the same stream with the same exploration draws (its arms and
    rewards, ``wall_s`` its one timing), and the lean loop of the same algorithm timed
    ``timings`` times (`slowdown.timed`): ``lean_s``, the median, and ``lean_arms``."""
    check_int("timings", timings, 1, what="an integer")
    draws = exploration_draws(bandit, dealer_secret, precision_bits)
    options = (bandit.arms, bandit.dims, bandit.regularizer, bandit.refresh_every)
    reference, wall = timed(lambda: play(EpsilonGreedyLinear(*options), data, draws), 1)
    lean, lean_s = timed(lambda: play(LeanEpsilonGreedyLinear(*options), data, draws),
                         timings)
    return {**reference, "wall_s": wall, "lean_arms": lean["arms"], "lean_s": lean_s}


def load_data(config: RunConfig):
    """The run's contexts and rewards (`ppml.data.load_contextual`); also the run's input check
    (`registry.register`), before anything starts."""
    return load_contextual(config.dataset, arms=config.arms, dims=config.dims,
                           horizon=config.horizon, data_seed=config.data_seed,
                           data_dir=config.data_dir)


@register("private_cb", check=load_data)
def private_cb(config: RunConfig, data) -> RunOutput:
    bandit = bandit_config(config)
    checkpointing.prepare(config)
    dealer_secret = checkpointing.kept_key(      # EVALUATION ONLY: the reference replays it
        config, "harness", lambda: fresh_key() if config.seed is None else
        dealer_secret_key(config.seed))
    secure = checkpointing.with_restarts(
        config, lambda attempt: run_secure(attempt, bandit, data, dealer_secret))
    plain = run_plaintext(bandit, data, secure.get("dealer_secret", dealer_secret),
                          config.precision_bits)
    steps = np.arange(1, bandit.horizon + 1)
    secure_avg = np.cumsum(secure["rewards"]) / steps
    plain_avg = np.cumsum(plain["rewards"]) / steps
    replayed = checkpointing.replayed(secure["replays"], bandit.horizon)
    rows = [{"step": t, "arm": secure["arms"][t], "reward": secure["rewards"][t],
             "plaintext_arm": plain["arms"][t], "plaintext_reward": plain["rewards"][t],
             "average_reward": float(secure_avg[t]),
             "plaintext_average_reward": float(plain_avg[t]), "replayed": replayed[t]}
            for t in range(bandit.horizon)]
    for step, attack in membership_audit(config, data, secure["checkpoints"]).items() \
            if config.private_cb.checkpoints else ():
        rows[step - 1].update({"mi_advantage": attack["advantage"], "mi_tpr": attack["tpr"],
                               "mi_fpr": attack["fpr"]})
    offline = float(np.mean([s["offline_seconds"] for s in secure["stats"]]))
    online = {"local": secure["wall_s"] - offline,           # the parties' program, for federated
              "federated": secure.get("program_s")}.get(config.runtime, secure["wall_s"])
    summary = {
        "secure_cumulative_reward": float(np.sum(secure["rewards"])),
        "plaintext_cumulative_reward": float(np.sum(plain["rewards"])),
        "arm_agreement": float(np.mean(np.equal(secure["arms"], plain["arms"]))),
        "lean_arm_agreement": float(np.mean(np.equal(plain["lean_arms"], plain["arms"]))),
        "wall_s": secure["wall_s"], "online_s": online, "dealer_s": offline,
        "plaintext_wall_s": plain["wall_s"], "plaintext_lean_s": plain["lean_s"],
        **slowdowns(online, secure["wall_s"], plain["lean_s"]),
        "rounds": int(secure["stats"][0]["rounds"]),
        "seconds_per_step": (online if config.runtime == "federated" else secure["wall_s"])
        / bandit.horizon,
        "program_seconds_per_step": secure["program_s"] / bandit.horizon,
        "wait_seconds_per_step": float(np.mean([s["wait_seconds"] for s in secure["stats"]]))
        / bandit.horizon,
        "bytes_per_party": int(np.mean([s["bytes_sent"] for s in secure["stats"]])),
        "eta": privacy_level(bandit.arms, bandit.epsilon),
    }
    shown = {"dataset": data.name, "parties": config.parties, "arms": config.arms,
             "epsilon": config.private_cb.epsilon, "steps": config.horizon, **summary}
    return RunOutput(rows=rows, summary=summary, table=summary_table(shown, rows))


SHOWN = ("dataset", ("parties", "P"), ("arms", "|A|"), ("epsilon", "eps"),
         ("steps", "T"), ("secure_cumulative_reward", "reward"),
         ("plaintext_cumulative_reward", "plaintext"), ("arm_agreement", "same arm"),
         ("seconds_per_step", "s/step"), ("slowdown_total", "slowdown"), ("eta", "eta"))
"""The printed summary: did it work (reward against the plaintext reference's, the share of
steps with its arm), how fast (seconds a step, the slowdown with everything the secure run
costs against the lean float64 loop), how private (eta)."""
MEMBERSHIP = ("after step", ("mi_advantage", "MI advantage"), ("mi_tpr", "TPR"),
              ("mi_fpr", "FPR"))


def summary_table(shown: dict, rows: list) -> str:
    """The run's summary line and, with ``private_cb.checkpoints``, the membership-inference
    attack's results at each checkpoint (advantage TPR - FPR; 0: the attack does no better than
    a guess)."""
    table = format_table([shown], SHOWN)
    audited = [{**r, "after step": r["step"] + 1} for r in rows
               if r.get("mi_advantage") is not None]
    if not audited:
        return table
    return (f"{table}\n\nmembership inference (Yeom et al.) at each checkpoint:\n"
            f"{format_table(audited, MEMBERSHIP)}")
