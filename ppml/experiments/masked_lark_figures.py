"""Masked LARK's figures from whatever masked_lark runs a results folder holds (`jobs.report`);
a figure without data for it is not drawn.

* release error: per key of the latest aggregation run, the error of the released sum (mean
  absolute error per coordinate against the true sum, EVALUATION ONLY) against the key's
  users, with the suppressed keys at the bottom and the threshold k marked;
* training AUC: the test AUC after each epoch, masked (and noisy) against the plaintext model,
  one pair of lines per run's epsilon (or "no noise"), and beside it the final AUC of each
  private run against its epsilon; the runs must share the model and its training settings
  (`TRAINING_SETTINGS`), or the figure is refused.

Each figure's caption lists the settings it holds fixed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ppml.experiments.figures import figure, fixed_settings, pyplot, runs_of, save, subplots

RELEASE_SETTINGS = ("parties", "masked_lark.reports", "masked_lark.d", "masked_lark.bound",
                    "masked_lark.noise", "masked_lark.epsilon", "masked_lark.delta")
"""What one release's error depends on (its run's values, for the caption)."""
TRAINING_SETTINGS = ("dataset", "parties", "masked_lark.model", "masked_lark.epochs",
                     "masked_lark.batch_size", "masked_lark.learning_rate", "masked_lark.clip")
"""What a training's AUC depends on besides epsilon."""


@figure("masked_lark")
def release_error(rows: list, folder: Path) -> Path | None:
    """The released sums' error against the users of each key (latest aggregation run)."""
    keys = [r for r in rows if r.get("users") is not None]
    if not keys:
        return None
    latest = max(r["run_id"] for r in keys)
    keys = [r for r in keys if r["run_id"] == latest]
    fixed = fixed_settings(keys, (), RELEASE_SETTINGS, "masked_lark_release_error")
    kept = [r for r in keys if not r["suppressed"]]
    fig, ax = subplots(figsize=(7, 4))
    errors = [float(np.mean(np.abs(np.subtract(r["released_sum"], r["true_sum"]))))
              for r in kept]
    ax.scatter([r["users"] for r in kept], errors, s=10, label="released")
    suppressed = [r["users"] for r in keys if r["suppressed"]]
    ax.scatter(suppressed, [0] * len(suppressed), s=10, marker="x", color="grey",
               label="suppressed (nothing released)")
    ax.axvline(keys[0]["masked_lark.k"], color="red", linestyle="--", label="k")
    ax.set_xscale("log")
    ax.set_xlabel("users of the key")
    ax.set_ylabel("|released - true| per coordinate")
    ax.set_title(f"Masked LARK release, epsilon = {keys[0]['epsilon_release']:.3g} per release")
    ax.legend()
    return save(fig, folder, "masked_lark_release_error", fixed, "The folder's latest release.")


@figure("masked_lark")
def training_auc(rows: list, folder: Path) -> Path | None:
    """Test AUC after each epoch, masked against plaintext, one pair of lines per run (left),
    and the final AUC against epsilon per epoch for the private runs, with the plaintext
    model's (right)."""
    epochs = [r for r in rows if r.get("auc") is not None and r.get("method") is not None]
    if not epochs:
        return None
    fixed = fixed_settings(runs_of(epochs), (), TRAINING_SETTINGS, "masked_lark_training_auc")
    fig, (ax, by_eps) = subplots(1, 2, figsize=(12, 4))
    finals = {"masked": [], "plaintext": []}
    runs = sorted({r["run_id"] for r in epochs},
                  key=lambda run: next(-1 if r.get("masked_lark.private") is False
                                       else r["masked_lark.epsilon"]
                                       for r in epochs if r["run_id"] == run))
    colours, plain_drawn = pyplot().get_cmap("viridis"), set()
    for at, run in enumerate(runs):
        mine = [r for r in epochs if r["run_id"] == run]
        private = mine[0].get("masked_lark.private", True)
        label = f"epsilon {mine[0]['masked_lark.epsilon']:g}/epoch" if private else "no noise"
        points = {method: sorted((r["epoch"] + 1, r["auc"]) for r in mine
                                 if r["method"] == method) for method in finals}
        ax.plot(*zip(*points["masked"]), "-", marker="o", label=f"masked, {label}",
                color=colours(at / max(1, len(runs) - 1)))
        dataset = mine[0].get("dataset")
        if dataset not in plain_drawn:                 # the same model and batches every run
            plain_drawn.add(dataset)
            ax.plot(*zip(*points["plaintext"]), ":", color="black", marker=".",
                    label=f"plaintext float64 ({dataset})")
        if private:
            for method in finals:
                finals[method].append((mine[0]["masked_lark.epsilon"], points[method][-1][1]))
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(pyplot().MaxNLocator(integer=True))
    ax.set_ylabel("test AUC")
    ax.set_title("Masked LARK: conversion model on masked gradients")
    ax.legend(fontsize=7)
    if finals["masked"]:
        by_eps.plot(*zip(*sorted(finals["masked"])), "-", marker="o", label="masked, noisy")
        by_eps.axhline(float(np.mean([auc for _, auc in finals["plaintext"]])), linestyle=":",
                       color="black", label="plaintext (no noise)")
        by_eps.set_xscale("log")
        by_eps.legend(fontsize=8)
    by_eps.set_xlabel("epsilon per epoch")
    by_eps.set_ylabel("test AUC after the last epoch")
    by_eps.set_title("AUC against epsilon")
    return save(fig, folder, "masked_lark_training_auc", fixed)
