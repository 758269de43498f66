"""Rank correlation: what the privacy tests measure between an agent's view and the truth."""

import numpy as np


def rank_correlation(a, b) -> float:
    """Spearman's correlation of two sequences (ties ranked by position)."""
    ranks = lambda v: np.argsort(np.argsort(np.array(v, dtype=float)))       # noqa: E731
    return float(np.corrcoef(ranks(a), ranks(b))[0, 1])
