"""Figures drawn from a results folder: each figure uses whatever runs of its experiment exist.

Every function takes the rows of its experiments (a list of dicts, as read from Parquet) and the
folder to write into, and returns the path of the PNG it drew, or None when those runs hold
nothing for it.  ``FIGURES`` maps a tuple of experiment names to the figure functions that take
the rows of all of them; :func:`draw_all` draws every figure whose experiments have runs.

A figure says what it shows: every setting it holds fixed is in a caption line under it
(:func:`save`).  Runs that differ in a setting the figure neither plots nor splits into panels
or curves are refused (:class:`MixedSettings`, naming the settings), never filtered to one
value behind the reader's back: a folder of mixed runs once drew Figs. 1 and 2 from degraded
``precision_bits=28, mpc.truncation=probabilistic`` runs because they were the most common.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from pathlib import Path

import numpy as np

from ppml.experiments.results import read_results
from ppml.runtime import progress


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


CAPTION_POINTS = 7
"""Font size of the caption line(s) under a figure."""


class MixedSettings(ValueError):
    """A figure's runs differ in settings it does not plot: drawing them together would mix
    results the figure does not tell apart."""


PANELS_PER_ROW = 2
"""Panels side by side before a figure starts another row (a wider figure's text shrinks on
screen)."""


def panel_grid(count: int, width: float, height: float, extra_width: float = 0.0) -> tuple:
    """(figure, a list of ``count`` axes of ``width`` x ``height`` inches each), at most
    `PANELS_PER_ROW` to a row; ``extra_width`` inches on the right (for a legend)."""
    cols = min(count, PANELS_PER_ROW)
    rows = -(-count // cols)
    fig, axes = subplots(rows, cols, figsize=(width * cols + extra_width, height * rows),
                         squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def draw_panels(panels: list, draw, size: tuple, title: str | None = None,
                extra_width: float = 0.0) -> tuple:
    """(figure, its axes): one panel per (heading, its runs) of ``panels`` (`panel_grid`, each
    panel ``size`` = (width, height) inches, ``extra_width`` on the right), drawn by
    ``draw(ax, runs)`` and headed ``heading``, under the figure's ``title`` if given."""
    fig, axes = panel_grid(len(panels), *size, extra_width)
    for ax, (heading, runs) in zip(axes, panels):
        draw(ax, runs)
        ax.set_title(heading)
    if title is not None:
        fig.suptitle(title)
    return fig, axes


def fixed_settings(runs: list, varying: tuple, settings: tuple, figure_name: str) -> dict:
    """The one value every run has for each key of ``settings`` not in ``varying`` (what the
    figure holds fixed, for its caption).  Refuses runs that differ in such a key, naming each
    with its values and how to draw them."""
    fixed, mixed = {}, {}
    for key in settings:
        if key in varying:
            continue
        values = sorted({r.get(key) for r in runs}, key=_legend_order)
        if len(values) > 1:
            mixed[key] = values
        elif values:
            fixed[key] = values[0]
    if mixed:
        named = "; ".join(f"{key} ({', '.join(map(_text, values))})"
                          for key, values in mixed.items())
        raise MixedSettings(
            f"{figure_name}: its runs differ in {named}, which it does not plot; keep one value "
            f"of each (move the other runs out of the results folder, or give jobs.report a "
            f"folder per value)")
    return fixed


def varying_settings(runs: list, settings: tuple) -> tuple[dict, list]:
    """(the settings all ``runs`` share, with their value; the settings that differ), for a
    figure that splits its runs by every setting that differs."""
    values = {key: {r.get(key) for r in runs} for key in settings}
    return ({k: next(iter(v)) for k, v in values.items() if len(v) == 1},
            [k for k, v in values.items() if len(v) > 1])


def _text(value) -> str:
    """A setting's value as on the command line (None as Hydra's null)."""
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def caption(fixed: dict, note: str = "") -> str:
    """The caption line: every fixed setting as ``key=value``, then ``note``."""
    settings = " ".join(f"{key}={_text(value)}" for key, value in fixed.items())
    return " ".join(part for part in (f"Fixed: {settings}." if settings else "", note) if part)


def save(fig, folder: Path, name: str, fixed: dict, note: str = "") -> Path:
    """Write ``fig`` as ``<folder>/<name>.png`` with its caption (:func:`caption`) in lines
    under it, and close it.  The caption is also the PNG's ``Description`` text."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    text = caption(fixed, note)
    lines = textwrap.wrap(text, int(fig.get_figwidth() * 14)) if text else []
    height = fig.get_figheight()
    pad = (0.15 * len(lines) + 0.1) if lines else 0.0
    fig.set_figheight(height + pad)
    if lines:
        fig.text(0.01, 0.02 / (height + pad), "\n".join(lines), fontsize=CAPTION_POINTS,
                 ha="left", va="bottom")
    fig.tight_layout(rect=(0, pad / (height + pad), 1, 1))
    fig.savefig(path, dpi=120, metadata={"Description": text})
    pyplot().close(fig)
    return path


SHORT = {"parties": "P", "arms": "|A|", "dims": "D", "precision_bits": "L",
         "mpc.truncation": "truncation", "bench.samples": "samples", "bench.repeats": "repeats"}
"""How a legend names a setting (a caption spells every key as on the command line)."""


def split_label(run: dict, keys: list) -> str:
    """``run``'s values of ``keys`` as a legend entry (``bounded, P=2``)."""
    return ", ".join(str(run.get(k)) if k in ("runtime", "mpc.truncation")
                     else f"{SHORT.get(k, k)}={_text(run.get(k))}" for k in keys)


def truncation_failures(rows: list, folder: Path) -> Path:
    """Failure rate of each truncation mode against precision bits, one line per value of the
    other settings that differ (mode, P, samples)."""
    fixed, varying = varying_settings(rows, ("mpc.truncation", "parties", "bench.samples"))
    lines = defaultdict(lambda: defaultdict(list))
    for r in rows:
        lines[split_label(r, varying), r["mpc.truncation"]][r["precision_bits"]].append(
            r["failure_rate"])
    fig, ax = subplots(figsize=(6.5, 4))
    floor = min((v for pts in lines.values() for vs in pts.values() for v in vs if v > 0),
                default=1e-7) / 10
    for (label, mode), points in sorted(lines.items()):
        bits = sorted(points)
        ax.plot(bits, [max(float(np.mean(points[b])), floor) for b in bits], marker="o",
                linestyle="-" if mode == "probabilistic" else "--", label=label or mode)
    ax.set_yscale("log")
    ax.set_xlabel("precision bits L")
    ax.set_ylabel(f"failure rate (zero drawn at {floor:.0e})")
    ax.set_title("Truncation failures per mode (products a*b, a, b ~ U[-1, 1])")
    ax.legend(fontsize=8, ncol=2)
    return save(fig, folder, "truncation_failures", fixed, "Runs at the same point averaged.")


BENCH_OPS_SETTINGS = ("runtime", "parties", "arms", "dims", "precision_bits", "mpc.truncation",
                      "workers", "bench.repeats")
"""Settings that change an operation's slowdown: one bar per combination the runs hold."""


def bench_ops_slowdown(rows: list, folder: Path) -> Path:
    """Online slowdown against numpy per operation (``online_s / plaintext_s``: Table 1 gives
    online times; the dealer's time is in each row's ``slowdown_total``), one bar per value of
    the settings that differ between the runs (runtime, P, |A|, D, L, ...); runs with the same
    values are averaged."""
    fixed, varying = varying_settings(rows, BENCH_OPS_SETTINGS)
    groups = defaultdict(lambda: defaultdict(list))
    for r in sorted(rows, key=lambda r: tuple(_legend_order(r.get(k)) for k in varying)):
        groups[split_label(r, varying) or "slowdown"][r["op"]].append(
            r["online_s"] / r["plaintext_s"])
    ops = list(dict.fromkeys(r["op"] for r in rows))
    fig, ax = subplots(figsize=(7.5, 4.5))
    grouped_bars(ax, {key: {op: float(np.mean(v)) for op, v in values.items()}
                      for key, values in groups.items()}, ops)
    ax.set_yscale("log")
    ax.set_ylabel("online slowdown vs numpy (dealer excluded)")
    ax.set_title("Secure operations (Hannun et al. Table 1 analogue)")
    ax.legend(fontsize=8, ncol=max(1, len(groups) // 6))
    return save(fig, folder, "bench_ops_slowdown", fixed, "Runs with the same settings averaged.")


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


def plot_lines(ax, lines: dict, label: str, colors: dict | None = None,
               linestyle: str = "-") -> None:
    """One line per key of ``lines`` (from :func:`mean_lines`), in ``colors[key]`` where given."""
    for key in sorted(lines, key=_legend_order):
        xs, means, stds = lines[key]
        ax.errorbar(xs, means, yerr=stds, marker="o", capsize=3, linestyle=linestyle,
                    color=(colors or {}).get(key), label=f"{label}={_text(key)}")
    ax.legend(fontsize=8)


def line_figure(runs: list, folder: Path, x: str, line: str, y, labels: tuple,
                log_axes: str = "", settings: tuple = (), references: tuple = (),
                panels: str | None = None,
                note: str = "Runs at the same point averaged (bars: one std)."):
    """``y(run)`` against ``x``, one line per ``line``, one panel per value of ``panels`` (if
    given); the runs must not differ in any other key of ``settings``
    (:func:`fixed_settings`), which the caption lists.

    ``labels`` is (legend label, file name, x label, y label, title); ``log_axes`` holds "x"
    and/or "y"; ``note`` ends the caption.  ``references`` are (y, name) pairs drawn dashed, then dotted, in the colour of
    their line, over the runs where y is not None: the legend then names the lines by colour
    and the kinds by line style, beside the panels.  None without runs at two values of x or
    more (a single point is no line).
    """
    if len({r[x] for r in runs}) < 2:
        return None
    label, name, xlabel, ylabel, title = labels
    fixed = fixed_settings(runs, (x, line, panels), settings, name)
    values = sorted({r.get(panels) for r in runs}, key=_legend_order) if panels else [None]
    if len(values) == 1 and panels:                # one panel: its value is a fixed setting
        fixed[panels], panels = values[0], None
    keys = sorted({r[line] for r in runs}, key=_legend_order)
    colors = {key: f"C{i % 10}" for i, key in enumerate(keys)}

    def draw(ax, mine: list) -> None:
        plot_lines(ax, mean_lines(mine, x, y, line), label, colors)
        for (reference, kind), style in zip(references, ("--", ":")):
            known = [r for r in mine if reference(r) is not None]
            plot_lines(ax, mean_lines(known, x, reference, line), label, colors, style)
        for axis in (ax.xaxis, ax.yaxis):
            if axis.axis_name in log_axes:
                plain_log(ax, axis)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)

    fig, axes = draw_panels(
        [(f"{panels}={_text(value)}" if panels else title,
          [r for r in runs if panels is None or r.get(panels) == value]) for value in values],
        draw, (6.5, 4), title if panels else None, 2.5 if references else 0.0)
    if references:
        for ax in axes:
            ax.get_legend().remove()
        kinds = [("-", "secure")] + [(style, kind) for (_, kind), style
                                     in zip(references, ("--", ":"))]
        _style_legend(axes[min(len(axes), PANELS_PER_ROW) - 1], label, colors, kinds)
    return save(fig, folder, name, fixed, note)


def plain_log(ax, axis) -> None:
    """A log scale on ``axis`` whose ticks read as numbers (3, 0.01), not as 3 x 10^0 (minor
    ticks labelled only where the range is short, as matplotlib's default)."""
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log")
    import matplotlib.ticker as ticker

    class Plain(ticker.LogFormatter):
        def _num_to_string(self, x, vmin, vmax):
            return f"{x:g}"

    axis.set_major_formatter(Plain(labelOnlyBase=False))
    axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(1, 0.4)))


def _style_legend(ax, label: str, colors: dict, kinds: list) -> None:
    """Beside ``ax``: one entry per line colour, then one per line style (the kind of time),
    instead of an entry for every (colour, style) pair."""
    line2d = pyplot().Line2D
    handles = [line2d([], [], color=c, marker="o", label=f"{label}={_text(k)}")
               for k, c in colors.items()]
    handles += [line2d([], [], color="black", linestyle=style, label=kind)
                for style, kind in kinds]
    ax.legend(handles=handles, fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1))


def draw_all(results_dir, figures_dir=None, refused: list | None = None) -> list:
    """Draw every figure whose experiment has runs in ``results_dir``; return the paths.

    A run file that is not readable Parquet is left out with a warning naming it
    (`read_results`): one damaged run does not keep the figures of the others from being drawn.
    A figure whose runs mix settings it does not plot raises :class:`MixedSettings`; with a
    ``refused`` list its message is appended there instead and the other figures are drawn."""
    table = read_results(results_dir, skip_unreadable=True)
    folder = Path(figures_dir) if figures_dir else Path(results_dir) / "figures"
    if table.num_rows == 0:
        return []
    rows = table.to_pylist()
    paths = []
    drawn = []                                    # (figure, its experiments' runs)
    for experiments, functions in FIGURES.items():
        mine = [r for r in rows if r.get("experiment") in experiments]
        drawn += [(fn, mine) for fn in functions if mine]
    for fn, mine in progress.track(drawn, "figures", unit="figure"):
        try:
            path = fn(mine, folder)
        except MixedSettings as refusal:
            if refused is None:
                raise
            refused.append(str(refusal))
            continue
        paths += [path] if path is not None else []
    return paths
