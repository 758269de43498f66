"""SpectralUCB-DS (Ciucanu et al., section 6): LinUCB-DS's protocol on a spectral bandit.

The arms are the rows of the eigenvector matrix Q of the Laplacian of a similarity graph over the
items (10 nearest neighbours, edge weight 1), so d = K; the expected reward f_i of item i is
<q_i, theta> with theta = Q^T f (Q is orthogonal; `ppml.data.graph` builds the instance).
The policy is `linucb.SpectralUCB` (penalty Lambda_L + gamma I, effective dimension d', omega_S
with C = log t); the messages, encodings and security are LinUCB-DS's, from the one protocol
implementation (`linucb_ds.run_protocol`).
"""

from __future__ import annotations

from ppml.bandits.linucb import Constants, SpectralUCB
from ppml.bandits.linucb_ds import run_protocol


def run_spectral_ucb_ds(eigenvectors, eigenvalues, theta, noise, horizon: int, *,
                        constants: Constants = Constants(), **options) -> dict:
    """`linucb_ds.run_protocol` with SpectralUCB's policy over the rows of ``eigenvectors``."""
    policy = SpectralUCB(eigenvectors, eigenvalues, horizon, constants)
    return run_protocol(policy, theta, noise, horizon, **options)
