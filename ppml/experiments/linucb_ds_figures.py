"""Ciucanu et al.'s Figs. 6 and 7, drawn from whatever linucb_ds / spectral_ucb_ds runs a
results folder holds (`jobs.report`).  A figure without runs for it is not drawn.

* Fig. 6(a, b): seconds of the three costly steps (3.i, 3.ii, 4.i), stacked, against ``workers``,
  one panel per (K, d, N) with runs at two or more worker counts.
* Fig. 6(c): total seconds against K, for the runs with d = K / 10, one line per worker count.
* Fig. 7: LinUCB-DS against SpectralUCB-DS, total seconds against K (runs with K = N).

Runs that share a point are averaged.  The runs of a figure must share every other setting that
changes the time (`SETTINGS`), which its caption lists, or it is refused.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from ppml.experiments.figures import (draw_panels, figure, fixed_settings, mean_lines,
                                      plot_lines, runs_of, save, subplots)

STEPS = (("time_3i_s", "step (3).i"), ("time_3ii_s", "step (3).ii"), ("time_4i_s", "step (4).i"))
SETTINGS = ("dataset", "key_bits", "runtime", "linucb_ds.scale_bits", "linucb_ds.obfuscator",
            "linucb_ds.arm_choice", "linucb_ds.user")
"""Settings besides K, d, N and the workers that change a run's time."""


@figure("linucb_ds")
def costly_steps_against_workers(rows: list, folder: Path) -> Path | None:
    """Fig. 6(a, b): one panel per (K, d, N) with several worker counts."""
    groups = defaultdict(lambda: defaultdict(list))
    for run in runs_of(rows):
        groups[(run["arms"], run["dims"], run["horizon"])][run["workers"]].append(run)
    panels = {key: runs for key, runs in groups.items() if len(runs) >= 2}
    if not panels:
        return None
    name = "linucb_ds_fig6ab_steps_vs_workers"
    fixed = fixed_settings([r for runs in panels.values() for rs in runs.values() for r in rs],
                           (), SETTINGS, name)
    fig, _ = draw_panels([(f"K = {K}, d = {d}, N = {N}", by_workers)
                          for (K, d, N), by_workers in sorted(panels.items())], _costly_steps,
                         (7 if len(panels) == 1 else 5, 4),
                         "LinUCB-DS: the three costly steps against workers (Fig. 6(a, b))")
    return save(fig, folder, name, fixed, "Runs at the same point averaged.")


def _costly_steps(ax, by_workers: dict) -> None:
    """Fig. 6(a, b)'s stacked bars of one (K, d, N) on ``ax`` (``by_workers``: workers -> its
    runs)."""
    workers = sorted(by_workers)
    bottom = np.zeros(len(workers))
    for column, label in STEPS:
        heights = np.array([np.mean([r[column] for r in by_workers[w]]) for w in workers])
        ax.bar([str(w) for w in workers], heights, bottom=bottom, label=label)
        bottom += heights
    ax.set_xlabel("workers")
    ax.set_ylabel("seconds")
    ax.legend(fontsize=8)


@figure("linucb_ds")
def time_against_arms(rows: list, folder: Path) -> Path | None:
    """Fig. 6(c): total seconds against K for d = K / 10, one line per worker count."""
    runs = [r for r in runs_of(rows) if r["dims"] * 10 == r["arms"]]
    if len({r["arms"] for r in runs}) < 2:
        return None
    return _seconds_against_arms(runs, "workers", "arms K (d = K / 10)",
                                 "LinUCB-DS as K grows (Fig. 6(c))",
                                 "linucb_ds_fig6c_time_vs_arms", folder, SETTINGS + ("horizon",))


def _seconds_against_arms(runs, line: str, xlabel: str, title: str, name: str, folder,
                          settings: tuple) -> Path:
    """Total seconds against K, one line per value of ``line``; ``settings`` held fixed."""
    fixed = fixed_settings(runs, ("arms", line), settings, name)
    fig, ax = subplots(figsize=(6.5, 4))
    plot_lines(ax, mean_lines(runs, "arms", lambda r: r["wall_s"], line), line)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("seconds")
    ax.set_title(title)
    return save(fig, folder, name, fixed, "Runs at the same point averaged (bars: one std).")


@figure("linucb_ds", "spectral_ucb_ds")
def fig7(rows: list, folder: Path) -> Path | None:
    """Fig. 7: LinUCB-DS and SpectralUCB-DS seconds against K, runs with K = N."""
    runs = [r for r in runs_of(rows) if r["arms"] == r["horizon"]]
    if len({r["experiment"] for r in runs}) < 2:
        return None
    return _seconds_against_arms(runs, "experiment", "K = N",
                                 "LinUCB-DS against SpectralUCB-DS (Fig. 7)",
                                 "linucb_ds_fig7_linucb_vs_spectral", folder,
                                 SETTINGS + ("dims", "workers"))
