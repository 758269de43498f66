"""The operations benchmark: the analogue of Hannun et al.'s Table 1.

For add, mul, matmul, reciprocal, argmax and exp at the shapes Algorithm 1 uses them
(|A| arms, D dimensions), it measures online rounds, bytes per party, online wall time, offline
(dealer) time, and the slowdowns against the same operation in numpy, measured in the same run:
online only (``slowdown_online``) and with the operation's dealer time (``slowdown_total``).
The same SPMD program runs in the local and in the Ray runtime.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from ppml.runtime import progress, spmd
import ppml.mpc as mpc
from ppml.experiments.config import RunConfig, engine_options
from ppml.experiments.registry import register
from ppml.experiments.results import RunOutput
from ppml.experiments.slowdown import slowdowns
from ppml.experiments.table import format_table

#: operation -> the operand shapes and what Algorithm 1 uses it for
OPS = {
    "add": "[A,D,D] + [A,D,D] (weight update, line 21)",
    "mul": "[A,D,D] * [A,D,D] elementwise",
    "matmul": "[A,D,D] @ [D] (weights and scores, lines 10-11)",
    "reciprocal": "1 / [A] on [1, 2]: eq. 1's denominator 1 + x^T W^-1 x for unit x and W >= I",
    "reciprocal_1_10": "1 / [A] on [1, 10], the paper's empirical range of the denominator",
    "argmax": "argmax over [A] (line 15)",
    "exp": "exp of [A] on [-2, 1], the paper's (method='limit', k = 8)",
}


def operands(arms: int, dims: int, rng: np.random.Generator) -> dict:
    """Plaintext operands: party 0 holds W, x, denominators, scores, exponents; party 1 holds V."""
    return {
        0: {"w": rng.uniform(-1, 1, (arms, dims, dims)), "x": rng.uniform(-1, 1, dims),
            "den": rng.uniform(1, 2, arms), "wide": rng.uniform(1, 10, arms),
            "scores": rng.uniform(-1, 1, arms),
            "e": rng.uniform(-2, 1, arms)},
        1: {"v": rng.uniform(-1, 1, (arms, dims, dims))},
    }


def plaintext_ops(data: dict) -> dict:
    """The same operations in numpy, as zero-argument callables."""
    d = {**data[0], **data[1]}
    return {
        "add": lambda: d["w"] + d["v"],
        "mul": lambda: d["w"] * d["v"],
        "matmul": lambda: d["w"] @ d["x"],
        "reciprocal": lambda: 1.0 / d["den"],
        "reciprocal_1_10": lambda: 1.0 / d["wide"],
        "argmax": lambda: np.argmax(d["scores"]),
        "exp": lambda: np.exp(d["e"]),
    }


def secure_ops(shared: dict) -> dict:
    """The operations on shares, as zero-argument callables."""
    return {
        "add": lambda: shared["w"] + shared["v"],
        "mul": lambda: shared["w"] * shared["v"],
        "matmul": lambda: shared["w"] @ shared["x"],
        "reciprocal": lambda: shared["den"].reciprocal(domain=(1.0, 2.0)),
        "reciprocal_1_10": lambda: shared["wide"].reciprocal(domain=(1.0, 10.0)),
        "argmax": lambda: mpc.argmax(shared["scores"]),
        "exp": lambda: shared["e"].exp("limit"),          # the paper's, as in its Table 1
    }


def program(ctx, arms: int, dims: int, repeats: int, w=None, x=None, den=None, wide=None,
            scores=None, e=None, v=None) -> list:
    """SPMD benchmark body: per operation, rounds, bytes this party sent, median online time and
    mean offline (dealer) time over ``repeats`` calls."""
    shapes = {"w": (arms, dims, dims), "x": (dims,), "den": (arms,), "wide": (arms,),
              "scores": (arms,),
              "e": (arms,), "v": (arms, dims, dims)}
    values = {"w": w, "x": x, "den": den, "wide": wide, "scores": scores, "e": e, "v": v}
    shared = {name: ctx.share(values[name], owner=1 if name == "v" else 0, shape=shapes[name])
              for name in shapes}
    rows = []
    party = ctx.held[0]
    for op, run_op in progress.track(list(secure_ops(shared).items()), "bench_ops operations",
                                     unit="op", enabled=ctx.holds(0)):
        run_op()  # warm-up: fills the dealer store for this shape
        rounds0, bytes0 = ctx.comm.stats[party].rounds, _bytes(ctx)
        online, offline = [], []
        for _ in range(repeats):
            offline0 = ctx.store.offline_seconds
            start = time.perf_counter()
            run_op()
            wall = time.perf_counter() - start
            offline.append(ctx.store.offline_seconds - offline0)
            online.append(wall - offline[-1])
        rows.append({"op": op, "rounds": (ctx.comm.stats[party].rounds - rounds0) // repeats,
                     "bytes_per_party": int((_bytes(ctx) - bytes0) / repeats),
                     "online_s": float(np.median(online)), "offline_s": float(np.mean(offline))})
    return rows


def _bytes(ctx) -> float:
    """Mean bytes sent per held party so far."""
    return float(np.mean([ctx.comm.stats[p].bytes_sent for p in ctx.held]))


def time_plaintext(fn, min_seconds: float = 0.05, trials: int = 5) -> float:
    """Seconds per call of a fast numpy callable: the median of ``trials`` timings, each over
    enough calls to last about ``min_seconds``."""
    calls, elapsed = 1, 0.0
    while elapsed < min_seconds / trials:
        calls *= 4
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
    timings = []
    for _ in range(trials):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        timings.append((time.perf_counter() - start) / calls)
    return float(np.median(timings))


def size_of(op: str, arms: int, dims: int) -> int:
    return arms * dims * dims if op in ("add", "mul", "matmul") else arms


@register("bench_ops")
def bench_ops(config: RunConfig) -> RunOutput:
    data = operands(config.arms, config.dims, np.random.default_rng(0))
    start = time.perf_counter()
    body = functools.partial(program, arms=config.arms, dims=config.dims,
                             repeats=config.bench.repeats)
    outs = spmd.run(body, inputs=data, **engine_options(config))
    wall = time.perf_counter() - start
    reference = plaintext_ops(data)
    rows = []
    for index, row in enumerate(outs[0]):
        plain = time_plaintext(reference[row["op"]])
        mean_bytes = int(np.mean([out[index]["bytes_per_party"] for out in outs]))
        rows.append({**row, "bytes_per_party": mean_bytes,
                     "size": size_of(row["op"], config.arms, config.dims),
                     "plaintext_s": plain,
                     **slowdowns(row["online_s"], row["online_s"] + row["offline_s"], plain)})
    table = format_table(rows, ["op", "size", "rounds", "bytes_per_party", "online_s", "offline_s",
                                "plaintext_s", ("slowdown_online", "online x"),
                                ("slowdown_total", "slowdown")])
    return RunOutput(rows=rows, summary={"wall_s": wall}, table=table)
