"""Hannun et al.'s figures, drawn from whatever private_cb runs a results folder holds.

A figure whose runs are missing (no checkpoints, no explicit iteration counts) is not drawn.

Each figure averages the runs that share its x value and line key (error bars: one standard
deviation across runs, e.g. seeds); the runs must agree on every other setting that changes
what it shows (`REWARD_SETTINGS`, `TIME_SETTINGS`), which its caption lists, or it is
refused.
Reward is the average reward over a run (Figs. 2, 5, 7, 8) or the running average over
training (Fig. 1); time is the secure run's wall time per step.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from ppml.experiments.figures import (draw_panels, figure, fixed_settings, line_figure,
                                      mean_lines, plot_lines, runs_of, save, subplots)

REWARD_SETTINGS = ("dataset", "parties", "arms", "dims", "horizon", "private_cb.epsilon",
                   "precision_bits", "mpc.truncation", "private_cb.reciprocal",
                   "private_cb.nr_iterations", "private_cb.reciprocal_start",
                   "private_cb.argmax_method", "private_cb.regularizer", "private_cb.refresh_every",
                   "private_cb.reward_bound")
"""Settings that change a run's reward; seeds and data_seed are repetitions, averaged over."""
TIME_SETTINGS = ("dataset", "parties", "arms", "dims", "horizon", "precision_bits",
                 "mpc.truncation", "private_cb.reciprocal", "private_cb.nr_iterations",
                 "private_cb.reciprocal_start",
                 "private_cb.argmax_method", "private_cb.refresh_every", "runtime", "workers")
"""Settings that change a run's time per step (epsilon and the data's values do not)."""
AVERAGED = "Runs at the same point (seed, data_seed) averaged; bars and bands: one std."


def _average_reward(run) -> float:
    return run["secure_cumulative_reward"] / run["horizon"]



@figure("private_cb")
def reward_over_training(rows: list, folder: Path) -> Path:
    """Fig. 1: running average reward against steps, one line per epsilon, one panel per T."""
    name = "private_cb_fig1_reward_over_training"
    fixed = fixed_settings(runs_of(rows), ("private_cb.epsilon", "horizon"), REWARD_SETTINGS,
                           name)
    horizons = sorted({r["horizon"] for r in rows})
    if len(horizons) == 1:
        fixed["horizon"] = horizons[0]
    fig, _ = draw_panels([(f"T = {horizon}" if len(horizons) > 1 else "",
                           [r for r in rows if r["horizon"] == horizon]) for horizon in horizons],
                         _reward_curves, (6.5, 4),
                         "Private contextual bandit: reward during training (Fig. 1)")
    return save(fig, folder, name, fixed, AVERAGED)


def _reward_curves(ax, rows: list) -> None:
    """Fig. 1's curves of ``rows`` (one T) on ``ax``: the mean running average reward per
    epsilon, one std shaded."""
    curves = defaultdict(lambda: defaultdict(list))
    for r in rows:
        curves[r["private_cb.epsilon"]][r["step"]].append(r["average_reward"])
    for eps in sorted(curves):
        steps = sorted(curves[eps])
        mean = np.array([np.mean(curves[eps][s]) for s in steps])
        std = np.array([np.std(curves[eps][s]) for s in steps])
        ax.plot(np.array(steps) + 1, mean, label=f"eps={eps:g}")
        ax.fill_between(np.array(steps) + 1, mean - std, mean + std, alpha=0.2)
    ax.set_xscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("average reward")
    ax.legend(fontsize=8)


def _reward_against_eta(runs: list, line: str, folder: Path, name: str, title: str):
    runs = [r for r in runs if math.isfinite(r["eta"])]
    if not runs:
        return None
    fixed = fixed_settings(runs, ("private_cb.epsilon", line), REWARD_SETTINGS, name)
    fig, ax = subplots(figsize=(6.5, 4))
    plot_lines(ax, mean_lines(runs, "eta", _average_reward, line), line)
    ax.set_xlabel("eta = log(|A| / eps)  (larger: less private)")
    ax.set_ylabel("average reward")
    ax.set_title(title)
    return save(fig, folder, name, fixed, AVERAGED)


@figure("private_cb")
def reward_against_eta_per_horizon(rows: list, folder: Path) -> Path:
    """Fig. 2: average reward against eta, one line per T."""
    return _reward_against_eta(runs_of(rows), "horizon", folder, "private_cb_fig2_reward_vs_eta",
                               "Reward against privacy, per T (Fig. 2)")


@figure("private_cb")
def reward_against_eta_per_arms(rows: list, folder: Path) -> Path:
    """Fig. 5: average reward against eta, one line per |A| (the k-means datasets' runs, whose
    arms are clusters, where the folder has any)."""
    runs = runs_of(rows)
    kmeans = [r for r in runs if str(r["dataset"]).startswith("kmeans")]
    return _reward_against_eta(kmeans or runs, "arms", folder,
                               "private_cb_fig5_reward_vs_eta_per_arms",
                               "Reward against privacy, per |A| (Fig. 5)")


def _time_per_step(run) -> float:
    return run["wall_s"] / run["horizon"]


@figure("private_cb")
def time_against_arms(rows: list, folder: Path) -> Path:
    """Fig. 3: secure time per step against |A|, one line per P (log-log)."""
    return line_figure(runs_of(rows), folder, "arms", "parties", _time_per_step,
                       ("P", "private_cb_fig3_time_vs_arms", "arms |A|", "seconds per step",
                        "Run time against the number of arms (Fig. 3)"), "xy", TIME_SETTINGS)


@figure("private_cb")
def time_against_parties(rows: list, folder: Path) -> Path:
    """Fig. 4: secure time per step against P, one line per |A|."""
    return line_figure(runs_of(rows), folder, "parties", "arms", _time_per_step,
                       ("|A|", "private_cb_fig4_time_vs_parties", "parties P",
                        "seconds per step", "Run time against the number of parties (Fig. 4)"),
                       "y", TIME_SETTINGS)


@figure("private_cb")
def reward_against_precision(rows: list, folder: Path) -> Path:
    """Fig. 7: average reward against precision bits, one line per truncation mode, one panel
    per epsilon."""
    return line_figure(runs_of(rows), folder, "precision_bits", "mpc.truncation", _average_reward,
                       ("truncation", "private_cb_fig7_reward_vs_precision", "precision bits L",
                        "average reward", "Reward against fixed-point precision (Fig. 7)"),
                       settings=REWARD_SETTINGS, panels="private_cb.epsilon")


@figure("private_cb")
def reward_against_iterations(rows: list, folder: Path) -> Path:
    """Fig. 8: average reward against Newton-Raphson iterations, one line per start value, one
    panel per epsilon."""
    runs = [r for r in runs_of(rows) if r.get("private_cb.nr_iterations") is not None]
    return line_figure(runs, folder, "private_cb.nr_iterations", "private_cb.reciprocal_start",
                       _average_reward, ("start", "private_cb_fig8_reward_vs_iterations",
                        "Newton-Raphson iterations", "average reward",
                        "Reward against reciprocal iterations (Fig. 8)"),
                       settings=REWARD_SETTINGS, panels="private_cb.epsilon")


@figure("private_cb")
def membership_advantage(rows: list, folder: Path) -> Path:
    """Fig. 6: the membership-inference adversary's advantage over training, per epsilon."""
    audited = [r for r in rows if r.get("mi_advantage") is not None]
    if not audited:
        return None
    name = "private_cb_fig6_membership_advantage"
    fixed = fixed_settings(runs_of(audited), ("private_cb.epsilon",),
                           REWARD_SETTINGS + ("private_cb.checkpoints",), name)
    fig, ax = subplots(figsize=(6.5, 4))
    plot_lines(ax, mean_lines(audited, "step", lambda r: r["mi_advantage"], "private_cb.epsilon"),
               "eps")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("step (checkpoint)")
    ax.set_ylabel("advantage TPR - FPR (Yeom et al.)")
    ax.set_title("Membership inference during training (Fig. 6)")
    return save(fig, folder, name, fixed, AVERAGED)
