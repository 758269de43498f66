"""Scaling studies (issue 17): each family's cost against one size at a time, on log-log axes,
with the fitted exponent of every curve, drawn from the runs of the ``conf/experiment/scaling/``
sweeps (`jobs.report`; docs/scaling.md).

For a family and one of its sizes (an *axis*: private CB's arms, parties or dims; Samba's K or
N; ...), the runs are grouped by the values of the family's other sizes, and every group timed
at two values of the axis or more is drawn: one group (a sweep of one size, as the scaling
configs run) is one plot whose caption holds the other sizes fixed; several (a product sweep)
are one panel each, headed by their values.  Each plot has up to three curves on the same axes,
the family's slowdowns' numerators and denominator (docs/results-schema.md, Slowdowns): the
secure run's total seconds, its online seconds and the plaintext baseline's seconds.  Each run
is a small dot, the median at each size a marker (a run slowed by a busy machine does not move
it), and the least-squares line of log median seconds on log size is drawn through them; its
slope, the fitted exponent, is in the legend (``secure total ~ K^1.02``).  Runs that differ in any other setting that changes the cost are
refused (`figures.MixedSettings`, naming the settings), as every figure does.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ppml.experiments.figures import (draw_panels, figure, fixed_settings, plain_log, pyplot,
                                      save, split_label)

KINDS = (("secure total", "C0", "-"), ("secure online", "C1", "--"), ("plaintext", "C2", ":"))
"""The curves of a scaling plot: (legend name, colour, line style of the fitted line)."""
NOTE = ("Dots: runs; markers: their median at each size; lines: least-squares fits of log "
        "median seconds on log size, slopes in the legend.")


@dataclass(frozen=True)
class Family:
    """What a scaling figure needs to know of one family's runs."""

    experiment: str
    """The runs' ``experiment`` column."""
    title: str
    axes: dict
    """Each size a sweep may vary (a results column) -> its symbol in the legend."""
    settings: tuple
    """The other settings that change the cost: held fixed, in the caption."""
    costs: Callable[[list], dict]
    """The rows of one run -> seconds of each of `KINDS` (None where the run has none)."""
    where: tuple = ()
    """(column, value) pairs a run must have to be drawn (Masked LARK's task)."""


def slowdown_costs(plaintext: str) -> Callable[[list], dict]:
    """The costs of a family whose runs carry its slowdowns against the plaintext seconds in
    column ``plaintext``: the secure seconds are the slowdowns' numerators (their definitions,
    docs/results-schema.md, Slowdowns, are not repeated here)."""
    def costs(rows: list) -> dict:
        run = rows[-1]
        plain = run.get(plaintext)
        if plain is None or run.get("slowdown_total") is None:
            return dict.fromkeys(name for name, _, _ in KINDS)
        return {"secure total": run["slowdown_total"] * plain,
                "secure online": run["slowdown_online"] * plain, "plaintext": plain}
    return costs


def pprl_costs(rows: list) -> dict:
    """PPRL's mean seconds per trial: the encrypted protocol's whole trial (``learning_s``,
    keys and obfuscators included) and its ``online_s``, against float64 CRL's ``learning_s``."""
    def mean(method: str, column: str):
        values = [r[column] for r in rows if r.get("method") == method
                  and r.get(column) is not None]
        return float(np.mean(values)) if values else None
    return {"secure total": mean("pprl", "learning_s"), "secure online": mean("pprl", "online_s"),
            "plaintext": mean("crl", "learning_s")}


ENGINE = ("runtime", "workers", "precision_bits", "mpc.truncation")
"""The engine's settings that change a secret-shared run's time."""
PAILLIER = ("runtime", "workers", "key_bits")
"""The settings that change a Paillier run's time."""
LINUCB_DS = ("dataset", "horizon", "linucb_ds.scale_bits", "linucb_ds.obfuscator") + PAILLIER
"""The settings that change a LinUCB-DS or SpectralUCB-DS run's time besides its sizes."""
FAMILIES = {
    "private_cb": Family(
        "private_cb", "Private CB", {"arms": "|A|", "parties": "P", "dims": "D"},
        ("dataset", "horizon", "private_cb.reciprocal", "private_cb.nr_iterations",
         "private_cb.argmax_method", "private_cb.refresh_every") + ENGINE,
        slowdown_costs("plaintext_lean_s")),
    "linucb_ds": Family(
        "linucb_ds", "LinUCB-DS", {"arms": "K", "dims": "d"}, LINUCB_DS,
        slowdown_costs("plaintext_lean_s")),
    "spectral_ucb_ds": Family(
        "spectral_ucb_ds", "SpectralUCB-DS", {"arms": "K"}, ("dims",) + LINUCB_DS,
        slowdown_costs("plaintext_lean_s")),
    "samba": Family(
        "samba", "Samba", {"arms": "K", "horizon": "N"},
        ("dataset", "samba.algorithm", "samba.mask", "samba.owners_per_actor") + PAILLIER,
        slowdown_costs("plaintext_wall_s")),
    "pprl": Family(
        "pprl", "PPRL", {"pprl.steps_per_agent": "steps"},
        ("parties", "pprl.task", "pprl.partition", "pprl.learner", "pprl.selection",
         "pprl.rounds", "pprl.scale_bits", "pprl.obfuscator", "pprl.backend") + PAILLIER,
        pprl_costs),
    "masked_lark_aggregate": Family(
        "masked_lark", "Masked LARK aggregation", {"masked_lark.reports": "reports"},
        ("masked_lark.d", "masked_lark.k", "masked_lark.queries", "masked_lark.advertisers",
         "masked_lark.fake_records") + ENGINE,
        slowdown_costs("plaintext_aggregate_s"), where=(("masked_lark.task", "aggregate"),)),
    "masked_lark_train": Family(
        "masked_lark", "Masked LARK training", {"parties": "helpers"},
        ("dataset", "masked_lark.model", "masked_lark.epochs", "masked_lark.batch_size")
        + ENGINE,
        slowdown_costs("plaintext_train_s"), where=(("masked_lark.task", "train"),)),
}
"""Every family with scaling sweeps (conf/experiment/scaling/), by the name in its figures'
files (``scaling_<family>_<axis>.png``)."""


def fit_exponent(sizes, seconds) -> tuple[float, float]:
    """(b, a) of the least-squares fit ``log seconds = log a + b log size``: cost ~ a size^b.
    Needs two distinct sizes or more, every size and every seconds > 0."""
    sizes, seconds = np.asarray(sizes, dtype=float), np.asarray(seconds, dtype=float)
    if sizes.shape != seconds.shape or sizes.ndim != 1:
        raise ValueError(f"sizes and seconds must be two lists of the same length, got "
                         f"{sizes.shape} and {seconds.shape}")
    if len(np.unique(sizes)) < 2:
        raise ValueError(f"sizes must hold two distinct values or more, got {sizes.tolist()}")
    for name, values in (("sizes", sizes), ("seconds", seconds)):
        if not (np.isfinite(values) & (values > 0)).all():
            raise ValueError(f"{name} must all be finite and > 0 (a log-log fit), got "
                             f"{values.tolist()}")
    slope, intercept = np.polyfit(np.log(sizes), np.log(seconds), 1)
    return float(slope), float(np.exp(intercept))


def scaling_runs(rows: list, family: Family) -> list:
    """One dict per run of ``family`` that timed something: its last row with its ``costs``
    (a dict by kind)."""
    by_run = defaultdict(list)
    for row in rows:
        if row.get("experiment") == family.experiment and \
                all(row.get(key) == value for key, value in family.where):
            by_run[row["run_id"]].append(row)
    runs = [{**mine[-1], "costs": family.costs(mine)} for mine in by_run.values()]
    return [run for run in runs if any(v is not None for v in run["costs"].values())]


def draw_costs(ax, runs: list, axis: str, symbol: str) -> None:
    """On ``ax``: each of `KINDS` the runs have, against ``axis`` on log-log axes: every run,
    the median at each size, and the line fitted to the medians (`fit_exponent`), its exponent
    in the legend."""
    for kind, color, style in KINDS:
        points = [(r[axis], r["costs"][kind]) for r in runs if r["costs"][kind] is not None]
        if len({x for x, _ in points}) < 2:
            continue
        xs, ys = map(np.asarray, zip(*points))
        sizes = np.unique(xs)
        medians = [float(np.median(ys[xs == x])) for x in sizes]
        exponent, coefficient = fit_exponent(sizes, medians)
        ax.plot(xs, ys, ".", color=color, alpha=0.35)
        ax.plot(sizes, medians, "o", color=color)
        ax.plot(sizes, coefficient * sizes ** exponent, style, color=color,
                label=f"{kind} ~ {symbol}^{exponent:.2f}")
    for scale in (ax.xaxis, ax.yaxis):
        plain_log(ax, scale)
    sizes = sorted({r[axis] for r in runs})
    ax.set_xticks(sizes, [f"{x:g}" for x in sizes])   # the sizes run, not the decades
    ax.xaxis.set_minor_locator(pyplot().NullLocator())
    ax.set_xlabel(f"{axis} ({symbol})")
    ax.set_ylabel("seconds")
    ax.legend(fontsize=8)


def scaling_figure(name: str, axis: str, rows: list, folder: Path) -> Path | None:
    """Family ``name``'s cost against ``axis`` (see the module docstring); None when no runs
    with the other sizes equal are timed at two values of ``axis``."""
    family = FAMILIES[name]
    others = [key for key in family.axes if key != axis]
    groups = defaultdict(list)
    for run in scaling_runs(rows, family):
        groups[tuple(run.get(key) for key in others)].append(run)
    swept = [groups[key] for key in sorted(groups, key=lambda k: [-1 if v is None else v
                                                                  for v in k])
             if len({r.get(axis) for r in groups[key]}) >= 2]
    if not swept:
        return None
    runs = [r for group in swept for r in group]
    split = [key for key in others if len({r.get(key) for r in runs}) > 1]
    file_name = f"scaling_{name}_{axis.rpartition('.')[2]}"
    fixed = fixed_settings(runs, (axis, *split), tuple(others) + family.settings, file_name)
    title = f"{family.title}: seconds against {family.axes[axis]}"
    panels = [(split_label(group[0], split) if split else title, group) for group in swept]
    fig, _ = draw_panels(panels, functools.partial(draw_costs, axis=axis,
                                                   symbol=family.axes[axis]),
                         (6, 4.2), title if split else None)
    return save(fig, folder, file_name, fixed, NOTE)


def _register() -> None:
    """One figure per family and axis (`figures.figure`)."""
    for name, family in FAMILIES.items():
        for axis in family.axes:
            figure(family.experiment)(functools.partial(scaling_figure, name, axis))


_register()
