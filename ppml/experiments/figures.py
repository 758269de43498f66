"""Figures drawn from a results folder: each figure uses whatever runs of its experiment exist.

Every function takes the rows of one experiment (a list of dicts, as read from Parquet) and the
folder to write into, and returns the path of the PNG it drew, or None when those runs hold
nothing for it.  ``FIGURES`` maps an experiment
name to its figure functions; :func:`draw_all` draws every figure whose experiment has runs.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ppml.experiments.results import read_results  # noqa: E402


def save(fig, folder: Path, name: str) -> Path:
    """Write ``fig`` as ``<folder>/<name>.png`` and close it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def truncation_failures(rows: list, folder: Path) -> Path:
    """Failure rate of each truncation mode against precision bits, one line per (mode, P)."""
    lines = defaultdict(dict)
    for r in rows:
        lines[(r["truncation"], r["parties"])][r["precision_bits"]] = r["failure_rate"]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    floor = min((v for pts in lines.values() for v in pts.values() if v > 0), default=1e-7) / 10
    for (mode, parties), points in sorted(lines.items()):
        bits = sorted(points)
        ax.plot(bits, [max(points[b], floor) for b in bits], marker="o",
                linestyle="-" if mode == "probabilistic" else "--", label=f"{mode}, P={parties}")
    ax.set_yscale("log")
    ax.set_xlabel("precision bits L")
    ax.set_ylabel(f"failure rate (zero drawn at {floor:.0e})")
    ax.set_title("Truncation failures per mode (products a*b, a, b ~ U[-1, 1])")
    ax.legend(fontsize=7, ncol=2)
    return save(fig, folder, "truncation_failures")


def bench_ops_slowdown(rows: list, folder: Path) -> Path:
    """Slowdown against numpy per operation, one bar group per (runtime, P, |A|)."""
    groups = defaultdict(dict)
    for r in rows:
        groups[(r["runtime"], r["parties"], r["arms"])][r["op"]] = r["slowdown"]
    ops = list(dict.fromkeys(r["op"] for r in rows))
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(len(groups), 1)
    for k, (key, values) in enumerate(sorted(groups.items())):
        xs = [i + k * width for i in range(len(ops))]
        ax.bar(xs, [values.get(op, 0) for op in ops], width,
               label=f"{key[0]}, P={key[1]}, |A|={key[2]}")
    ax.set_xticks([i + width * (len(groups) - 1) / 2 for i in range(len(ops))], ops)
    ax.set_yscale("log")
    ax.set_ylabel("online slowdown vs numpy")
    ax.set_title("Secure operations (Hannun et al. Table 1 analogue)")
    ax.legend(fontsize=7)
    return save(fig, folder, "bench_ops_slowdown")


FIGURES = {"truncation_study": [truncation_failures], "bench_ops": [bench_ops_slowdown]}


def figure(experiment: str):
    """Register a figure function for the runs of ``experiment``."""
    def register(fn):
        FIGURES.setdefault(experiment, []).append(fn)
        return fn
    return register


def runs_of(rows: list) -> list:
    """One dict per run: its last row (the run-level values and the final per-step values)."""
    last = {}
    for row in rows:
        if row["run_id"] not in last or (row.get("step") or 0) >= (last[row["run_id"]].get("step") or 0):
            last[row["run_id"]] = row
    return list(last.values())


def mean_lines(runs: list, x: str, y, line: str) -> dict:
    """line value -> (xs, means, stds) of ``y(run)`` averaged over runs with the same x."""
    groups = defaultdict(lambda: defaultdict(list))
    for r in runs:
        groups[r[line]][r[x]].append(y(r))
    out = {}
    for key, points in groups.items():
        xs = sorted(points)
        out[key] = (xs, [float(np.mean(points[v])) for v in xs], [float(np.std(points[v])) for v in xs])
    return out


def _legend_order(key):
    """Numbers in numeric order, then everything else by its text."""
    number = isinstance(key, (int, float)) and not isinstance(key, bool)
    return (not number, key if number else 0, str(key))


def plot_lines(ax, lines: dict, label: str) -> None:
    for key in sorted(lines, key=_legend_order):
        xs, means, stds = lines[key]
        ax.errorbar(xs, means, yerr=stds, marker="o", capsize=3, label=f"{label}={key}")
    ax.legend(fontsize=8)


def draw_all(results_dir, figures_dir=None) -> list:
    """Draw every figure whose experiment has runs in ``results_dir``; return the paths."""
    table = read_results(results_dir)
    folder = Path(figures_dir) if figures_dir else Path(results_dir) / "figures"
    if table.num_rows == 0:
        return []
    rows = table.to_pylist()
    paths = []
    for experiment, functions in FIGURES.items():
        mine = [r for r in rows if r.get("experiment") == experiment]
        if mine:
            paths += [path for path in (fn(mine, folder) for fn in functions) if path is not None]
    return paths
