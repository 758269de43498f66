"""How often each truncation mode fails, measured on the products Algorithm 1 truncates.

A truncation *fails* when its result is off by more than P + 1 units in the last place: the
wrap-around error of Hannun et al., appendix C, is about 2^(64-L) units, so failures are never
ambiguous.  Inputs are fixed-point products a * b with a, b uniform in [-1, 1] (the scale of
unit-norm contexts and weights), encoded at 2L fractional bits, truncated by L bits.
"""

from __future__ import annotations

import time

import numpy as np

import ppml.mpc as mpc
from ppml.crypto.fixed import encode
from ppml.experiments.config import RunConfig
from ppml.experiments.registry import register
from ppml.experiments.results import RunOutput
from ppml.experiments.table import format_table
from ppml.mpc.protocols.truncate import truncate
from ppml.mpc.ring import ARITHMETIC
from ppml.runtime import progress as progress_

CHUNK = 1 << 17


def failures(parties: int, precision_bits: int, mode: str, samples: int, seed,
             progress: bool = False) -> dict:
    """Count the failed truncations among ``samples`` products in one local run."""
    rng = np.random.default_rng(0 if seed is None else seed)
    ctx = mpc.local_context(parties, precision_bits, seed, mode)
    failed, worst, done = 0, 0.0, 0
    start = time.perf_counter()
    with progress_.bar(f"truncation {mode} L={precision_bits}", samples, unit="trunc",
                       enabled=progress) as bar:
        while done < samples:
            n = min(CHUNK, samples - done)
            a, b = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
            product = (encode(a, precision_bits).view(np.int64)
                       * encode(b, precision_bits).view(np.int64))
            shared = ctx.share(product, owner=0, frac_bits=0, wide=True)   # |ab| 2^2L < 2^56
            (out,) = ctx.open([truncate(ctx, shared.data, precision_bits)], ARITHMETIC)
            error = np.abs(out.view(np.int64) - product / 2.0**precision_bits)
            failed += int(np.sum(error > parties + 1))
            worst = max(worst, float(error.max()))
            done += n
            bar.update(n)
    return {"failures": failed, "failure_rate": failed / samples,
            "max_error_ulps": worst, "wall_s": time.perf_counter() - start}


@register("truncation_study")
def truncation_study(config: RunConfig) -> RunOutput:
    row = failures(config.parties, config.precision_bits, config.mpc.truncation,
                   config.bench.samples, config.seed, config.progress)
    summary = {"wall_s": row.pop("wall_s")}
    shown = {"truncation": config.mpc.truncation, "precision_bits": config.precision_bits,
             "parties": config.parties, "samples": config.bench.samples, **row}
    return RunOutput(rows=[row], summary=summary, table=format_table([shown], list(shown)))
