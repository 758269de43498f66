"""SpectralUCB-DS: LinUCB-DS's protocol with SpectralUCB's policy, exact against fixed point."""

import numpy as np

from ppml.protocols.linucb_ds.config import LinUCBDSConfig
from ppml.protocols.linucb_ds.protocol import run_protocol
from ppml.protocols.linucb_ds.reference import Coins, run_fixed_point
from ppml.protocols.linucb_ds.spectral import SpectralUCB

KEY = bytes(range(32))


def path_graph(K: int):
    """Eigenvectors and eigenvalues of a path graph's Laplacian (edge weight 1)."""
    W = np.zeros((K, K))
    for i in range(K - 1):
        W[i, i + 1] = W[i + 1, i] = 1.0
    eigenvalues, eigenvectors = np.linalg.eigh(np.diag(W.sum(1)) - W)
    return eigenvectors, eigenvalues


def test_secure_spectral_run_equals_fixed_point_exactly():
    K = N = 10
    Q, eigenvalues = path_graph(K)
    f = np.sin(np.arange(K) / 3.0)                       # smooth on the path
    theta = Q.T @ f                                      # f = Q theta
    noise = np.random.default_rng(0).choice([-0.01, 0.01], (N, K))
    config = LinUCBDSConfig(horizon=N, key_bits=512, insecure_key_bits_ok=True, seed=1)
    out = run_protocol(SpectralUCB(Q, eigenvalues, N), theta, noise, config, coin_key=KEY,
                       theta_norm_bound=4.0)
    ref = run_fixed_point(SpectralUCB(Q, eigenvalues, N), theta, noise, N, Coins(KEY), 28)
    assert out["arms"] == ref["arms"] and out["sum_int"] == ref["sum_int"]
    groups = out["layout"]["groups"]                     # d = K: one EDP a pull, d products
    assert out["stats"]["P"]["counts"]["multiplications"] == K * N + (N - 1) * K * groups
