"""Masked LARK's reporting end to end, in any runtime: the ad network and the browsers as roles,
the helpers as an SPMD program on ppml's engine (`aggregation.aggregation_program`), and the
evaluation against the plaintext reference (`reference.aggregate`).

The release must equal the reference's: the same keys kept and suppressed with the same users,
and sums that differ from the true ones by exactly the helpers' noise, which each helper hands
over after the run for this check alone (EVALUATION ONLY), as the browsers hand over their
records.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np

from ppml.privacy.views import ViewRecorder
from ppml.protocols.masked_lark.aggregation import aggregation_program
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.noise import helper_noise, noise_scale, release_privacy
from ppml.protocols.masked_lark.reference import aggregate, curator_release
from ppml.protocols.masked_lark.roles import AdNetwork, Browsers
from ppml.runtime import progress, roles, spmd
from ppml.runtime.cluster import ensure_ray


@dataclass
class AggregationResult:
    """A run's rows (one per key with a counted report), its summary and, with
    ``record_views``, each helper's view."""

    rows: list
    summary: dict
    views: dict = field(default_factory=dict)


def run_aggregation(options: MaskedLarkOptions, helpers: int, data_seed: int,
                    seed: int | None = None, runtime: str = "local", workers: int = 1,
                    record_views: bool = False,
                    timeout_s: float = roles.DEFAULT_TIMEOUT_S) -> AggregationResult:
    """One time window's reports, reduced by ``helpers`` helpers and released to the ad
    network; ``seed``: the INSECURE reproducible mode (every key, share and noise draw from
    it); ``workers``: the browsers' Ray tasks, and each helper's workers for its opens."""
    scale = noise_scale(options)
    if workers > 1:
        ensure_ray()                   # the browsers' tasks and the helpers' workers
    start = time.perf_counter()
    adnet = roles.spawn(AdNetwork, runtime, options.queries, options.advertisers, seed,
                        timeout_s=timeout_s)
    browsers = roles.spawn(Browsers, runtime, options, data_seed, seed, workers,
                           timeout_s=timeout_s)
    try:
        with progress.stage("masked_lark reports (browsers)"):
            browsers.call("start", adnet.call("catalog"))
        setup_s = time.perf_counter() - start
        program = functools.partial(aggregation_program, options=options, scale=scale,
                                    seed=seed, workers=workers)
        start = time.perf_counter()
        outs = spmd.run(program, parties=helpers, runtime=runtime, seed=seed,
                        record_views=record_views,
                        inputs={0: {"browsers": browsers, "adnet": adnet}},
                        timeout_s=timeout_s)
        run_s = time.perf_counter() - start
        made_s = browsers.call("seconds")
        truth = browsers.call("truth")
    finally:
        roles.teardown([adnet, browsers])
    return evaluate_aggregation(options, outs, truth, setup_s, run_s, made_s)


def evaluate_aggregation(options: MaskedLarkOptions, outs: list, truth: tuple,
                         setup_s: float, run_s: float, made_s: float) -> AggregationResult:
    """EVALUATION ONLY: the rows and summary of a run from the helpers' outputs (by helper)
    and the browsers' records (``truth``, `Browsers.truth`), against the plaintext reference
    (`reference.aggregate`)."""
    scale = noise_scale(options)
    leader = outs[0]
    expected = aggregate(*truth, options.bound, options.k)
    released = {(q, a): sums for q, a, sums in leader["released"]}
    noise = np.sum([np.asarray(out["noise"], dtype=np.int64).reshape(-1, options.d)
                    for out in outs], axis=0)
    kept = [key for key, agg in expected.items() if not agg.suppressed]
    exact = sorted(released) == sorted(kept) and \
        [expected[key].users for key in released] == leader["users"]
    rows = []
    for key, agg in expected.items():
        out = released.get(key)
        rows.append({"key": f"q{key[0]}-a{key[1]}", "query": key[0], "advertiser": key[1],
                     "users": agg.users, "suppressed": agg.suppressed,
                     "true_sum": agg.sum, "released_sum": out})
    for row_at, (key, sums) in enumerate(released.items()):
        exact = exact and (np.asarray(sums) - np.asarray(expected[key].sum)
                           == noise[row_at]).all()
    privacy = release_privacy(options, scale)
    start = time.perf_counter()
    curator_release(*truth, options.bound, options.k,
                    lambda shape: helper_noise(options.noise, scale, shape, None, 0))
    plaintext_s = time.perf_counter() - start
    helper_s = max(sum(v for k, v in out["seconds"].items() if k != "upload_s")
                   for out in outs)       # a helper's own work; the upload waits for browsers
    summary = {"release_equal_reference": bool(exact), "noise_scale": float(scale),
               "epsilon_release": privacy["epsilon"], "delta_release": privacy["delta"],
               "rho_release": privacy["rho"], "keys_released": len(released),
               "keys_suppressed": len(expected) - len(kept),
               "reports_sent": leader["reports"], "reports_opened": leader["opened"],
               "reports_in_range": leader["in_range"], "reports_counted": leader["counted"],
               "setup_s": setup_s, "generation_s": made_s, "protocol_s": run_s,
               "helper_s": helper_s, "plaintext_aggregate_s": plaintext_s,
               **{f"helper_{name}": max(out["seconds"][name] for out in outs)
                  for name in leader["seconds"]}}
    return AggregationResult(rows, summary, {f"helper-{j}": engine_view(out["view"])
                                             for j, out in enumerate(outs) if out["view"]})


def engine_view(entries: list):
    """A helper's view table (`ppml.privacy.views.VIEW_SCHEMA`): every ring element it
    received over the engine (the opened flags, the range check's masked openings and broken
    counts), at t = the round, l = 0.  Left out: the byte strings it received, which are
    public parts of the reports, public keys and HPKE ciphertexts (docs/masked-lark.md)."""
    recorder = ViewRecorder(True)
    for round_, _op, tag, _sender, payload in entries:
        if tag == "hpke keys":                                   # public keys, not openings
            continue
        arrays = payload if isinstance(payload, list) else [payload]
        for array in arrays:
            if isinstance(array, np.ndarray) and array.dtype != np.uint8:
                recorder.record(round_, 0, [int(v) for v in array.ravel().tolist()])
    return recorder.table()
