"""SpectralUCB (Ciucanu et al., section 6; Valko et al. 2014): LinUCB-DS's policy on a spectral
bandit, so that SpectralUCB-DS is LinUCB-DS's protocol (`protocol.run_protocol`) with this policy.

The arms are the rows of the eigenvector matrix Q of the Laplacian of a similarity graph over the
items (10 nearest neighbours, edge weight 1; `ppml.data.graph` builds the instance), so d = K;
the penalty is Lambda_L + gamma I and omega_t = 2R sqrt(d' log(1 + t / gamma) + 2 log(1 / delta))
+ C, with the effective dimension d' and C = log t.
"""

from __future__ import annotations

import math

import numpy as np

from ppml.protocols.linucb_ds.reference import Constants, LinearUCB


def effective_dimension(eigenvalues, horizon: int, gamma: float) -> int:
    """d' = max{d : (d - 1) lambda_d <= T / log(1 + T / gamma)} (Valko et al. 2014, Def. 1),
    eigenvalues sorted ascending and indexed from 1."""
    values = np.sort(np.asarray(eigenvalues, dtype=np.float64))
    limit = horizon / math.log(1 + horizon / gamma)
    return max(d for d in range(1, len(values) + 1) if (d - 1) * values[d - 1] <= limit)


class SpectralUCB(LinearUCB):
    """Section 6: arms are the rows of Q; penalty Lambda_L + gamma I;
    omega_t = 2R sqrt(d' log(1 + t/gamma) + 2 log(1/delta)) + C."""

    name = "spectral_ucb"

    def __init__(self, arms, eigenvalues, horizon: int, constants: Constants = Constants()):
        eigenvalues = np.asarray(eigenvalues, dtype=np.float64)
        if eigenvalues.shape != (np.asarray(arms).shape[1],) or np.any(eigenvalues < -1e-9):
            raise ValueError("eigenvalues must be d >= 0 values, one per column of the arms")
        super().__init__(arms, np.diag(np.maximum(eigenvalues, 0.0)) +
                         constants.gamma * np.eye(len(eigenvalues)), constants)
        self.effective_dimension = effective_dimension(eigenvalues, horizon, constants.gamma)

    def width(self, t: int) -> float:
        c = self.constants
        return 2 * c.noise * math.sqrt(self.effective_dimension * math.log(1 + t / c.gamma)
                                       + 2 * math.log(1 / c.delta)) + c.norm(t)
