"""Membership inference by loss threshold (Yeom et al., 2018), as Hannun et al.'s Fig. 6 uses it.

The adversary holds a model checkpoint and an example (x, y); it guesses "member of the training
data" when the model's loss on the example is below a threshold, the model's average loss on its
training data (Yeom et al.'s attack with the expected training loss as threshold).  On a
balanced set of members and held-out non-members, its advantage is TPR - FPR (0: no leak).

For a linear contextual bandit the model's scores s_a(x) = w_a^T x estimate the expected reward
1[a = y], so the loss is the squared error over the arms: sum_a (s_a(x) - 1[a = y])^2.
"""

from __future__ import annotations

import numpy as np


def squared_loss(weights: np.ndarray, contexts: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-example loss of linear scores ``contexts @ weights.T`` against one-hot labels."""
    scores = contexts @ weights.T
    targets = np.eye(weights.shape[0])[labels]
    return np.sum((scores - targets) ** 2, axis=1)


def yeom_advantage(member_losses: np.ndarray, nonmember_losses: np.ndarray,
                   threshold: float | None = None) -> dict:
    """TPR, FPR and advantage of guessing "member" when the loss is at most ``threshold``.

    ``threshold`` defaults to the members' mean loss (the model's average training loss).
    """
    if len(member_losses) == 0 or len(nonmember_losses) == 0:
        raise ValueError("membership inference needs at least one member and one non-member")
    tau = float(np.mean(member_losses)) if threshold is None else float(threshold)
    tpr = float(np.mean(member_losses <= tau))
    fpr = float(np.mean(nonmember_losses <= tau))
    return {"tpr": tpr, "fpr": fpr, "advantage": tpr - fpr, "threshold": tau}


def weights_of(w_inv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """w_a = W_a^-1 b_a for every arm (Algorithm 1, line 10)."""
    return np.einsum("adk,ak->ad", w_inv, b)
