"""Figures drawn from a results folder: each figure uses whatever runs of its experiment exist.

Every function takes the rows of its experiments (a list of dicts, as read from Parquet) and the
folder to write into, and returns the path of the PNG it drew, or None when those runs hold
nothing for it.  ``FIGURES`` maps a tuple of experiment names to the figure functions that take
the rows of all of them; :func:`draw_all` draws every figure whose experiments have runs.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from ppml.experiments.results import read_results


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend, imported at the first figure: the experiment
    modules register their figures at import, and a run or a federated party that draws
    nothing does not pay matplotlib's import (0.8 s)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def subplots(*args, **kwargs):
    """``pyplot().subplots``."""
    return pyplot().subplots(*args, **kwargs)


def save(fig, folder: Path, name: str) -> Path:
    """Write ``fig`` as ``<folder>/<name>.png`` and close it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    pyplot().close(fig)
    return path


def truncation_failures(rows: list, folder: Path) -> Path:
    """Failure rate of each truncation mode against precision bits, one line per (mode, P)."""
    lines = defaultdict(dict)
    for r in rows:
        lines[(r["mpc.truncation"], r["parties"])][r["precision_bits"]] = r["failure_rate"]
    fig, ax = subplots(figsize=(6.5, 4))
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
    fig, ax = subplots(figsize=(7, 4))
    grouped_bars(ax, {f"{key[0]}, P={key[1]}, |A|={key[2]}": values
                      for key, values in sorted(groups.items())}, ops)
    ax.set_yscale("log")
    ax.set_ylabel("online slowdown vs numpy")
    ax.set_title("Secure operations (Hannun et al. Table 1 analogue)")
    ax.legend(fontsize=7)
    return save(fig, folder, "bench_ops_slowdown")


def grouped_bars(ax, bars: dict, groups: list, errors: dict | None = None) -> dict:
    """One group of bars per entry of ``groups`` (the x tick labels), in it one bar per key of
    ``bars``: ``bars[key][group]`` is its height (0 where missing), ``errors[key][group]`` its
    error bar.  Returns key -> the x position of its bar in each group."""
    width = 0.8 / max(len(bars), 1)
    positions = {}
    for k, (key, heights) in enumerate(bars.items()):
        xs = [i + k * width for i in range(len(groups))]
        yerr = [errors[key].get(g, 0) for g in groups] if errors else None
        ax.bar(xs, [heights.get(g, 0) for g in groups], width, yerr=yerr, capsize=3, label=key)
        positions[key] = xs
    ax.set_xticks([i + width * (len(bars) - 1) / 2 for i in range(len(groups))], groups,
                  rotation=20, ha="right")
    return positions


FIGURES = {("truncation_study",): [truncation_failures], ("bench_ops",): [bench_ops_slowdown]}


def figure(*experiments: str):
    """Register a figure function for the runs of ``experiments`` (it gets the rows of all)."""
    def register(fn):
        FIGURES.setdefault(experiments, []).append(fn)
        return fn
    return register


def runs_of(rows: list) -> list:
    """One dict per run: its last row (the run-level values and the final per-step values)."""
    last = {}
    for row in rows:
        run_id = row["run_id"]
        if run_id not in last or (row.get("step") or 0) >= (last[run_id].get("step") or 0):
            last[run_id] = row
    return list(last.values())


def mean_lines(runs: list, x: str, y, line: str) -> dict:
    """line value -> (xs, means, stds) of ``y(run)`` averaged over runs with the same x."""
    groups = defaultdict(lambda: defaultdict(list))
    for r in runs:
        groups[r[line]][r[x]].append(y(r))
    out = {}
    for key, points in groups.items():
        xs = sorted(points)
        out[key] = (xs, [float(np.mean(points[v])) for v in xs],
                    [float(np.std(points[v])) for v in xs])
    return out


def _legend_order(key):
    """Numbers in numeric order, then everything else by its text."""
    number = isinstance(key, (int, float)) and not isinstance(key, bool)
    return (not number, key if number else 0, str(key))


def plot_lines(ax, lines: dict, label: str, colors: dict | None = None, linestyle: str = "-",
               suffix: str = "") -> None:
    """One line per key of ``lines`` (from :func:`mean_lines`), in ``colors[key]`` where given."""
    for key in sorted(lines, key=_legend_order):
        xs, means, stds = lines[key]
        ax.errorbar(xs, means, yerr=stds, marker="o", capsize=3, linestyle=linestyle,
                    color=(colors or {}).get(key), label=f"{label}={key}{suffix}")
    ax.legend(fontsize=8)


def controlled(runs: list, varying: tuple, settings: tuple) -> list:
    """The runs at the most common value of every key of ``settings`` not in ``varying``."""
    for key in settings:
        if key in varying or not runs:
            continue
        values = [r.get(key) for r in runs]
        mode = max(set(values), key=lambda v: (values.count(v), str(v)))
        runs = [r for r in runs if r.get(key) == mode]
    return runs


def line_figure(runs: list, folder: Path, x: str, line: str, y, labels: tuple,
                log_axes: str = "", settings: tuple = (), references: tuple = ()):
    """``y(run)`` against ``x``, one line per ``line``, over the runs that differ only there
    (among ``settings``, see :func:`controlled`).

    ``labels`` is (legend label, file name, x label, y label, title); ``log_axes`` holds "x"
    and/or "y".  ``references`` are (y, name) pairs drawn dashed, then dotted, in the colour of
    their line, over the runs where y is not None.  None without runs.
    """
    runs = controlled(runs, (x, line), settings)
    if not runs:
        return None
    label, name, xlabel, ylabel, title = labels
    fig, ax = subplots(figsize=(6.5, 4))
    lines = mean_lines(runs, x, y, line)
    colors = {key: f"C{i % 10}" for i, key in enumerate(sorted(lines, key=_legend_order))}
    plot_lines(ax, lines, label, colors)
    for (reference, kind), style in zip(references, ("--", ":")):
        known = [r for r in runs if reference(r) is not None]
        plot_lines(ax, mean_lines(known, x, reference, line), label, colors, style, f" ({kind})")
    if references:
        fig.set_figheight(5.5)
        ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.15))
    if "x" in log_axes:
        ax.set_xscale("log")
    if "y" in log_axes:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return save(fig, folder, name)


def draw_all(results_dir, figures_dir=None) -> list:
    """Draw every figure whose experiment has runs in ``results_dir``; return the paths.  A run
    file that is not readable Parquet is left out with a warning naming it (`read_results`):
    one damaged run does not keep the figures of the others from being drawn."""
    table = read_results(results_dir, skip_unreadable=True)
    folder = Path(figures_dir) if figures_dir else Path(results_dir) / "figures"
    if table.num_rows == 0:
        return []
    rows = table.to_pylist()
    paths = []
    for experiments, functions in FIGURES.items():
        mine = [r for r in rows if r.get("experiment") in experiments]
        if mine:
            paths += [path for path in (fn(mine, folder) for fn in functions) if path is not None]
    return paths
