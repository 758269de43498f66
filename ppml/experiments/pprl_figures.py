"""Sakuma et al.'s Table 2, Table 3 and Fig. 5 drawn from whatever pprl runs (`jobs.run
experiment=pprl`) a results folder holds (`jobs.report`).  A figure without data for it is not
drawn.

* Table 2 (random walk): the mean steps the learned greedy policy takes to the goal, one bar per
  method, grouped by learner and action selection, each labelled with how many trials reached
  the goal; each bar is the latest run of its method, learner and selection;
* Table 3 (load balancing): per method, the seconds of learning per trial and the mean global
  reward per step over the last tenth of the episodes (the latest run of each method), with
  PPRL's trials that equal the fixed-point reference, drawn as a table;
* Fig. 5 (load balancing): the mean global reward per step of each episode, averaged over the
  trials and over a moving window of `SMOOTHING` episodes, one curve per method (the latest
  run of each).

The runs drawn together must share the learning settings (`SETTINGS`, with the task's own), which
each figure's caption lists, or the figure is refused.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from ppml.experiments.figures import figure, fixed_settings, runs_of, save, subplots
from ppml.protocols.pprl.config import METHODS

SMOOTHING = 20
"""Episodes in Fig. 5's moving mean (single episodes swing by several units)."""
SETTINGS = ("parties", "data_seed", "pprl.partition", "pprl.alpha", "pprl.gamma",
            "pprl.epsilon", "pprl.scale_bits")
"""Settings that change what a method learns, besides the learner and the selection."""
WALK_SETTINGS = SETTINGS + ("pprl.steps_per_agent",)
LOAD_SETTINGS = SETTINGS + ("pprl.learner", "pprl.selection", "pprl.episodes",
                            "pprl.episode_steps")
LATEST = "Each method: its latest run."


def _latest(rows: list, key) -> list:
    """The rows of the latest run (by run id, which starts with its time) of each ``key(row)``."""
    latest = {}
    for r in rows:
        k = key(r)
        latest[k] = max(latest.get(k, ""), r.get("run_id") or "")
    return [r for r in rows if (r.get("run_id") or "") == latest[key(r)]]


@figure("pprl")
def table2(rows: list, folder: Path) -> Path | None:
    """Mean steps to the goal per method and selection (random walk)."""
    walks = [r for r in rows if r.get("pprl.task") == "random_walk" and r.get("episode") is None
             and r.get("method") is not None]
    if not walks:
        return None

    def group(r):
        return f"{r['pprl.learner']}, {r['pprl.selection']}"

    walks = _latest(walks, lambda r: (r["method"], group(r)))
    fixed = fixed_settings(runs_of(walks), (), WALK_SETTINGS, "pprl_table2")
    selections = sorted({group(r) for r in walks})
    methods = [m for m in METHODS if any(r["method"] == m for r in walks)]
    fig, ax = subplots(figsize=(7, 4))
    width = 0.8 / len(methods)
    for k, method in enumerate(methods):
        for g, selection in enumerate(selections):
            mine = [r for r in walks if r["method"] == method and group(r) == selection]
            if not mine:
                continue
            reached = [r["steps_to_goal"] for r in mine if r["reached_goal"]]
            height = float(np.mean(reached)) if reached else 0.0
            x = g + (k - (len(methods) - 1) / 2) * width
            ax.bar(x, height, width, label=method if g == 0 else None, color=f"C{k}")
            ax.text(x, height, f"{len(reached)}/{len(mine)}", ha="center", va="bottom",
                    fontsize=7)
    ax.set_xticks(range(len(selections)), selections)
    ax.set_ylabel("mean steps to the goal (trials that reach it)")
    ax.set_title("Random walk: the learned greedy policy (Table 2)")
    ax.margins(y=0.3)                                   # room above the bars for the legend
    ax.legend(loc="upper right", ncol=len(methods))
    return save(fig, folder, "pprl_table2", fixed, f"{LATEST} Labels: trials that reach the goal.")


@figure("pprl")
def table3(rows: list, folder: Path) -> Path | None:
    """Seconds per trial and final reward per method (load balancing), as a table."""
    episodes = _latest([r for r in rows if r.get("pprl.task") == "load_balancing"
                        and r.get("episode") is not None], lambda r: r["method"])
    if not episodes:
        return None
    fixed = fixed_settings(runs_of(episodes), (), LOAD_SETTINGS, "pprl_table3")
    cells = []
    for method in [m for m in METHODS if any(r["method"] == m for r in episodes)]:
        mine = [r for r in episodes if r["method"] == method]
        last = max(r["episode"] for r in mine)
        final = [r["episode_reward"] for r in mine if r["episode"] > last - max(1, (last + 1) // 10)]
        seconds = [r["learning_s"] for r in mine if r.get("learning_s") is not None]
        equal = [r["q_equal_reference"] for r in mine if r.get("q_equal_reference") is not None]
        cells.append([method, f"{np.mean(seconds):.3g}" if seconds else "",
                      f"{np.mean(final):.1f}", str(len({r['trial'] for r in mine})),
                      f"{sum(equal)}/{len(equal)}" if equal else ""])
    fig, ax = subplots(figsize=(7, 1.0 + 0.4 * len(cells)))
    ax.axis("off")
    table = ax.table(cellText=cells, colLabels=["method", "s / trial", "reward / step",
                                                "trials", "equals reference"],
                     loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.scale(1, 1.4)
    ax.set_title("Load balancing (Table 3): seconds of learning per trial, global reward per "
                 "step\nover the last tenth of the episodes", fontsize=10)
    return save(fig, folder, "pprl_table3", fixed, LATEST)


@figure("pprl")
def fig5(rows: list, folder: Path) -> Path | None:
    """Mean global reward per step of each episode, one curve per method (load balancing)."""
    episodes = [r for r in rows if r.get("pprl.task") == "load_balancing"
                and r.get("episode") is not None]
    if not episodes:
        return None
    episodes = _latest(episodes, lambda r: r["method"])
    fixed = fixed_settings(runs_of(episodes), (), LOAD_SETTINGS, "pprl_fig5")
    curves = defaultdict(lambda: defaultdict(list))
    for r in episodes:
        curves[r["method"]][r["episode"]].append(r["episode_reward"])
    fig, ax = subplots(figsize=(7, 4))
    for method in [m for m in METHODS if m in curves]:
        xs = sorted(curves[method])
        means = np.array([np.mean(curves[method][x]) for x in xs])
        window = min(SMOOTHING, len(means))
        smooth = np.convolve(means, np.ones(window) / window, mode="valid")
        ax.plot(xs[window - 1:], smooth, label=method, linewidth=1.2)
    ax.set_xlabel("episode")
    ax.set_ylabel(f"global reward per step (trials, {SMOOTHING}-episode mean)")
    ax.set_title("Load balancing (Fig. 5)")
    ax.legend()
    return save(fig, folder, "pprl_fig5", fixed, LATEST)
