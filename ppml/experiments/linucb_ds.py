"""LinUCB-DS and SpectralUCB-DS (Ciucanu et al., sections 3, 5, 6) against their references.

``experiment=linucb_ds`` plays LinUCB-DS on a linear bandit (``dataset=movielens``: the
embedding of user ``user`` is theta, ``arms`` movies (the first, or random ones) are the arms, in
``dims`` dimensions; ``dataset=synthetic`` needs no download).  ``experiment=spectral_ucb_ds``
plays SpectralUCB-DS on the same movies: the arms are the rows of the eigenvectors Q of the
Laplacian of their 10-nearest-neighbour graph, theta = Q^T f for the user's expected ratings f.

Every run also plays, with P's coin key (so the same first arm and permutations):

* the fixed-point reference (`reference.run_fixed_point`): the secure run must pull the same arms
  and DC's decrypted sum must equal its sum exactly (``sum_exact``);
* float64 LinUCB / SpectralUCB (`reference.run_float`): the same arms until the first round whose
  two largest float scores are within twice the fixed-point error ``score_error`` (the tie
  tolerance; ``first_tie_step``, -1 if none), reported as ``float_arm_agreement``;
* the lean float64 loop (`reference.run_lean`), the plaintext baseline of the slowdowns, timed
  `slowdown.TIMINGS` times (the median): ``plaintext_lean_s``, ``lean_arm_agreement`` (its
  arms against float64's), ``slowdown_online`` (``online_s`` against it) and
  ``slowdown_total`` (``keygen_s + wall_s``: the roles and their keys, P's set-up and the
  steps).

With ``checkpoint_every`` every party checkpoints its own state (`protocol.Principal` drives
them); a run whose party died goes on from the last checkpoints (``restarts`` with runtime=ray
or federated, ``resume=<run_id>`` in any runtime) to the uninterrupted run's arms in seeded mode.

Rows: one per step (``arm``, ``plaintext_arm`` = the fixed-point reference's, ``float_arm``,
``reward``, ``replayed``: the step ran twice after a resume).  Summary: sums, wall / online /
offline / key generation seconds, the slowdowns, seconds per step kind (3.i, 3.ii, 4.i, the
rest) and per participant, Paillier operation counts and Fig. 5's formulas beside them.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ppml.protocols.linucb_ds.reference import (Coins, FixedPoint, LinUCB, run_fixed_point,
                                                run_float, run_lean, score_error)
from ppml.protocols.linucb_ds.spectral import SpectralUCB
from ppml.protocols.linucb_ds.config import LinUCBDSConfig
from ppml.protocols.linucb_ds.protocol import PARTIES, run_protocol
from ppml.crypto.rng import fresh_key, seeded_key
from ppml.experiments import checkpointing
from ppml.experiments.config import RunConfig
from ppml.experiments.federation import run_parties
from ppml.experiments.registry import register
from ppml.experiments.results import RunOutput
from ppml.experiments.slowdown import slowdowns, timed
from ppml.experiments.table import format_table

ENGINE_PRECISION_BITS = RunConfig.precision_bits
"""The engine's default L: a LinUCB-DS run refuses any other, which would change nothing."""
K_NEIGHBOURS = 10
"""Edges of SpectralUCB's similarity graph: each movie to its 10 nearest neighbours (section 6)."""
COSTLY_STEPS = ("3.i", "3.ii", "4.i")
COUNTS = ("encryptions", "fresh_obfuscators", "decryptions", "decrypted_values", "additions",
          "multiplications", "packed_ciphertexts")


def instance(config: RunConfig, spectral: bool) -> dict:
    """theta, arms, the eigenvalues (SpectralUCB), the noise eta[t][i] = reward(t, i) - <theta,
    x_i> and the reward function of the linear or (``spectral``) spectral instance."""
    from ppml.data.graph import load_spectral_arms
    from ppml.data.linear_arms import load_linear_arms
    load = load_spectral_arms if spectral else load_linear_arms
    options = {"k_neighbours": K_NEIGHBOURS} if spectral else {}
    data = load(config.dataset, arms=config.arms, dims=config.dims, user=config.linucb_ds.user,
                arm_choice=config.linucb_ds.arm_choice, seed=config.data_seed,
                data_dir=config.data_dir, **options)
    noise = np.array([[data.reward(t, i) - data.means[i] for i in range(data.K)]
                      for t in range(config.horizon)])
    return {"theta": data.theta, "arms": data.arms, "noise": noise, "reward": data.reward,
            "eigenvalues": getattr(data, "eigenvalues", None), "name": data.name}


def make_policy(data: dict, horizon: int):
    if data["eigenvalues"] is None:
        return LinUCB(data["arms"])
    return SpectralUCB(data["arms"], data["eigenvalues"], horizon)


def norm_bound(theta) -> float:
    """DO's public S >= ||theta||_2 (Fig. 2): the next power of two, so it reveals only the
    binary order of magnitude of ||theta||."""
    return 2.0 ** math.ceil(math.log2(max(float(np.linalg.norm(theta)), 2.0**-20)))


def fig5(d: int, K: int, N: int) -> dict:
    """Fig. 5's operation counts for budget N, K arms, dimension d."""
    rounds = N - 1
    return {"fig5_encryptions": d + 1 + rounds + 1, "fig5_decryptions": rounds * K + 2,
            "fig5_additions": d + rounds * (d * d + K * d + 2 * d) + 2,
            "fig5_multiplications": 2 * d + rounds * (d * d + K * d + 2 * d)}


def summarise(secure: dict, fixed: dict, floats: dict, lean: dict, d: int, K: int,
              N: int) -> dict:
    """The run-level values: sums, agreement, times per step kind and party, slowdowns against
    the lean loop, counts, Fig. 5."""
    stats = secure["stats"]
    seconds = {kind: sum(s["seconds"].get(kind, 0.0) for s in stats.values())
               for kind in COSTLY_STEPS}
    counts = {name: sum(s["counts"].get(name, 0) for s in stats.values()) for name in COUNTS}
    error = score_error(fixed, floats)
    ties = [t for t, g in enumerate(floats["gaps"]) if g <= 2 * error]
    return {
        "secure_cumulative_reward": secure["sum"],
        "plaintext_cumulative_reward": fixed["sum"],
        "float_cumulative_reward": floats["sum"],
        "sum_exact": secure["sum_int"] == fixed["sum_int"],
        "arm_agreement": float(np.mean(np.equal(secure["arms"], fixed["arms"]))),
        "float_arm_agreement": float(np.mean(np.equal(secure["arms"], floats["arms"]))),
        "lean_arm_agreement": float(np.mean(np.equal(lean["arms"], floats["arms"]))),
        "min_score_gap": min(floats["gaps"]),
        "score_error": error,
        "first_tie_step": ties[0] if ties else -1,
        "wall_s": secure["wall_s"], "online_s": secure["online_s"],
        "offline_s": secure["offline_s"], "keygen_s": secure["keygen_s"],
        "plaintext_wall_s": floats["wall_s"], "plaintext_lean_s": lean["wall_s"],
        **slowdowns(secure["online_s"], secure["keygen_s"] + secure["wall_s"], lean["wall_s"]),
        "seconds_per_step": secure["wall_s"] / N,
        "time_3i_s": seconds["3.i"], "time_3ii_s": seconds["3.ii"], "time_4i_s": seconds["4.i"],
        "time_rest_s": secure["wall_s"] - sum(seconds.values()),
        **{f"time_{name}_s": sum(s["seconds"].values()) for name, s in stats.items()},
        **counts, **fig5(d, K, N),
        "slot_bits": secure["layout"]["slot_bits"], "slots": secure["layout"]["slots"],
        "packed_groups": secure["layout"]["groups"],
    }


def coins_key(config: RunConfig) -> bytes:
    """P's coins: its own CSPRNG key, or the seeded mode's (INSECURE)."""
    return fresh_key() if config.seed is None else seeded_key(config.seed, "linucb-ds-coins")


def run_secure(config: RunConfig, data: dict) -> dict:
    """One attempt of the secure run in ``config.runtime`` (`run_protocol`, or
    `run_federated`), its checkpoints as ``config`` asks; the same dict either way."""
    if config.runtime == "federated":
        return run_federated(config)
    options = config.linucb_ds
    protocol = LinUCBDSConfig(
        horizon=config.horizon, scale_bits=options.scale_bits, key_bits=config.key_bits,
        insecure_key_bits_ok=config.insecure_key_bits_ok, obfuscator=options.obfuscator,
        runtime=config.runtime, workers=config.workers,
        split_min_work=options.split_min_work, seed=config.seed,
        record_views=config.record_views, timeout_s=config.party_timeout_s,
        checkpoints=checkpointing.plan(config, PARTIES))
    return run_protocol(make_policy(data, config.horizon), data["theta"], data["noise"], protocol,
                        coin_key=coins_key(config), theta_norm_bound=norm_bound(data["theta"]))


def run_federated(config: RunConfig) -> dict:
    """DO, DC, P and Comp each their own process on loopback
    (`ppml.experiments.linucb_ds_parties`); the same dict as `run_protocol`."""
    if config.record_views:
        raise ValueError("record_views=true is not supported with runtime=federated yet: each "
                         "party's view stays in its process")
    outs = run_parties(config)
    p = outs["p"]
    return {"arms": p["arms"], "sum_int": outs["dc"]["sum_int"],
            "sum": FixedPoint(config.linucb_ds.scale_bits).reward_real(outs["dc"]["sum_int"]),
            "wall_s": p["wall_s"], "online_s": p["online_s"], "offline_s": p["offline_s"],
            "keygen_s": p["keygen_s"], "layout": p["layout"], "views": {},
            "coin_key": p["audit_coin_key"], "replays": p["replays"],
            "stats": {out["stats"]["name"]: out["stats"] for out in outs.values()}}


def checked_instance(config: RunConfig, spectral: bool = False) -> dict:
    """`instance`, after refusing a ``precision_bits`` of the engine's; also the run's input
    check (`registry.register`), before anything starts."""
    if config.precision_bits != ENGINE_PRECISION_BITS:
        raise ValueError(f"precision_bits is the secret-sharing engine's, which LinUCB-DS does not "
                         f"use; its Paillier scale is linucb_ds.scale_bits (got precision_bits="
                         f"{config.precision_bits})")
    return instance(config, spectral)


def run(config: RunConfig, spectral: bool, data: dict) -> RunOutput:
    """The whole experiment on ``data`` (`checked_instance`, the run's input check)."""
    N = config.horizon
    options = config.linucb_ds
    checkpointing.prepare(config)
    secure = checkpointing.with_restarts(config, lambda attempt: run_secure(attempt, data))
    coin_key = secure["coin_key"]             # EVALUATION ONLY: the references replay P's coins
    fixed = run_fixed_point(make_policy(data, N), data["theta"], data["noise"], N,
                            Coins(coin_key), options.scale_bits)
    start = time.perf_counter()
    floats = run_float(make_policy(data, N), data["reward"], N, Coins(coin_key))
    floats["wall_s"] = time.perf_counter() - start
    lean, lean_s = timed(lambda: run_lean(make_policy(data, N), data["reward"], N,
                                          Coins(coin_key)))
    K, d = data["arms"].shape
    summary = summarise(secure, fixed, floats, {**lean, "wall_s": lean_s}, d, K, N)
    replayed = checkpointing.replayed(secure["replays"], N)
    rows = [{"step": t, "arm": int(secure["arms"][t]), "plaintext_arm": int(fixed["arms"][t]),
             "float_arm": int(floats["arms"][t]),
             "reward": float(data["reward"](t, secure["arms"][t])),
             "plaintext_reward": float(fixed["rewards"][t]), "replayed": replayed[t]}
            for t in range(N)]
    shown = {"algorithm": "SpectralUCB-DS" if spectral else "LinUCB-DS", "data": data["name"],
             "K": K, "d": d, "N": N, **summary}
    return RunOutput(rows=rows, summary=summary, table=format_table([shown], SHOWN),
                     views=secure["views"])


SHOWN = ("algorithm", "data", "K", "d", "N", ("secure_cumulative_reward", "reward"),
         ("sum_exact", "exact sum"), ("arm_agreement", "same arm"),
         ("float_arm_agreement", "float arm"), ("online_s", "online"), ("offline_s", "offline"),
         ("slowdown_total", "slowdown"))
"""The printed summary: did it work (the sum and the arms against the fixed-point reference's,
the arms against float64's), how fast (the online and offline seconds, and everything the run
costs against the lean float64 loop)."""


@register("linucb_ds", check=checked_instance)
def linucb_ds(config: RunConfig, data: dict) -> RunOutput:
    return run(config, False, data)


@register("spectral_ucb_ds", check=lambda config: checked_instance(config, spectral=True))
def spectral_ucb_ds(config: RunConfig, data: dict) -> RunOutput:
    return run(config, True, data)
