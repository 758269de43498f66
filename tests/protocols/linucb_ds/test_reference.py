"""LinUCB (Fig. 2) and SpectralUCB: constants, widths, coins, float64 vs fixed point, the lean
float64 loop vs the float64 reference."""

import math

import numpy as np
import pytest

from ppml.protocols.linucb_ds.reference import (Coins, Constants, FixedPoint, LinUCB, choose,
                                                 run_fixed_point, run_float, run_lean,
                                                 score_error)
from ppml.protocols.linucb_ds.spectral import SpectralUCB, effective_dimension


def instance(K=8, d=3, N=60, seed=0):
    rng = np.random.default_rng(seed)
    arms, theta = rng.normal(0, 1, (K, d)), rng.normal(0, 1, d)
    noise = rng.choice([-0.01, 0.01], (N, K))
    return arms, theta, noise


def test_paper_constants_and_linucb_width():
    c = Constants()
    assert (c.gamma, c.delta, c.noise, c.norm_bound) == (0.01, 0.001, 0.01, None)
    arms = np.array([[3.0, 4.0], [1.0, 0.0]])
    policy = LinUCB(arms)
    t = 7
    expected = 0.01 * math.sqrt(2 * math.log((1 + t * 25 / 0.01) / 0.001)) + 0.1 * math.log(t)
    assert policy.width(t) == pytest.approx(expected)
    assert np.allclose(policy.A, 0.01 * np.eye(2))


def test_spectral_width_and_effective_dimension():
    eigenvalues = np.array([0.0, 1.0, 5.0, 400.0])
    N, gamma = 10, 0.01
    limit = N / math.log(1 + N / gamma)
    assert effective_dimension(eigenvalues, N, gamma) == max(
        d for d in range(1, 5) if (d - 1) * eigenvalues[d - 1] <= limit) == 2
    policy = SpectralUCB(np.eye(4), eigenvalues, N)
    assert np.allclose(policy.A, np.diag(eigenvalues) + gamma * np.eye(4))
    t = 3
    assert policy.width(t) == pytest.approx(
        2 * 0.01 * math.sqrt(2 * math.log(1 + t / gamma) + 2 * math.log(1000)) + math.log(t))


@pytest.mark.parametrize("kwargs, name", [({"gamma": 0}, "gamma"), ({"delta": -1}, "delta"),
                                          ({"noise": 0}, "noise"), ({"norm_bound": -1},
                                                                    "norm_bound")])
def test_constants_refused_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Constants(**kwargs)


def test_coins_replay_and_first_maximum_tie_rule():
    key = bytes(range(32))
    a, b = Coins(key), Coins(key)
    assert a.first_arm(10) == b.first_arm(10)
    assert np.array_equal(a.permutation(10), b.permutation(10))
    sigma = np.array([2, 0, 1])
    assert choose([5.0, 5.0, 5.0], sigma) == 2          # a tie goes to sigma's first position
    assert choose([1.0, 5.0, 5.0], sigma) == 2
    assert choose([9.0, 5.0, 5.0], sigma) == 0


def test_float_and_fixed_point_linucb_pull_the_same_arms():
    arms, theta, noise = instance()
    key = bytes(32)
    floats = run_float(LinUCB(arms), lambda t, i: arms[i] @ theta + noise[t, i], 60, Coins(key))
    fixed = run_fixed_point(LinUCB(arms), theta, noise, 60, Coins(key), scale_bits=20)
    error = score_error(fixed, floats)
    assert error < 1e-3
    assert min(floats["gaps"]) > 2 * error            # no round within the tie tolerance
    assert fixed["arms"] == floats["arms"]
    assert fixed["sum"] == pytest.approx(floats["sum"], abs=1e-4)
    assert fixed["sum"] * 2**40 == fixed["sum_int"]


def lean_and_float(make_policy, arms, theta, noise, N) -> tuple:
    """`run_lean` and `run_float` on one instance with the same coins: their outputs."""
    def reward(t, i):
        return arms[i] @ theta + noise[t, i]
    return (run_lean(make_policy(), reward, N, Coins(bytes(32))),
            run_float(make_policy(), reward, N, Coins(bytes(32))))


def test_the_lean_loop_pulls_the_float_references_arms_exactly_on_a_small_run():
    arms, theta, noise = instance()
    lean, floats = lean_and_float(lambda: LinUCB(arms), arms, theta, noise, 60)
    assert lean["arms"] == floats["arms"] and lean["rewards"] == floats["rewards"]


@pytest.mark.parametrize("spectral", [False, True])
def test_the_lean_loop_pulls_the_float_references_arms_in_99_percent_of_rounds(spectral):
    K, d, N = (12, 12, 1500) if spectral else (30, 8, 1500)
    arms, theta, noise = instance(K, d, N, seed=7)
    if spectral:           # orthonormal rows and a spectrum, as a graph's Laplacian gives
        arms = np.linalg.qr(arms)[0]

    def policy():
        return SpectralUCB(arms, np.linspace(0, 3, d), N) if spectral else LinUCB(arms)
    lean, floats = lean_and_float(policy, arms, theta, noise, N)
    assert np.mean(np.equal(lean["arms"], floats["arms"])) >= 0.99


def test_scores_at_k2_are_the_exact_product_rounded_within_the_stated_bound():
    # B = C theta + w at k = 2 against x^T A^-1 (G theta + e) at k = 5: off by at most
    # (||theta||_1 + 1) / 2 units of 2^-2s, the docstring's (d S + 1) 2^-(s+1)
    s, rng = 20, np.random.default_rng(4)
    fixed = FixedPoint(s)
    x, theta = fixed.ints(rng.normal(0, 1, (6, 3))), fixed.ints(rng.normal(0, 2, 3))
    policy = LinUCB(x.astype(float) / 2**s)
    for arm in rng.integers(0, 6, 30):
        policy.pull(arm)
    G = sum(np.outer(x[a], x[a]) for a in range(6))
    e = fixed.ints(rng.normal(0, 0.01, 3), 3)
    a_inverse, _ = fixed.a_inverse(policy)
    C, w = fixed.score_terms(a_inverse, x, G, e)
    exact = x.dot(a_inverse).dot(G.dot(theta) + e)
    error = [abs(c - v / 2**(3 * s)) for c, v in zip(C.dot(theta) + w, exact)]
    assert max(error) <= (sum(abs(int(t)) for t in theta) + 1) / 2


def test_linucb_learns_the_best_arm():
    arms, theta, noise = instance(N=200)
    out = run_float(LinUCB(arms), lambda t, i: arms[i] @ theta + noise[t, i], 200, Coins(bytes(32)))
    best = int(np.argmax(arms @ theta))
    assert out["arms"][-50:].count(best) >= 45


def test_movielens_float_and_fixed_point_at_28_bits_agree():
    """The experiments' default scale: MovieLens user 0, the first 15 movies, d = 3."""
    import os
    if not os.environ.get("PPML_DATA"):
        pytest.skip("PPML_DATA is not set")
    from ppml.data.linear_arms import load_linear_arms
    data = load_linear_arms("movielens", arms=15, dims=3)
    N = 300
    noise = np.array([[data.reward(t, i) - data.means[i] for i in range(15)] for t in range(N)])
    fixed = run_fixed_point(LinUCB(data.arms), data.theta, noise, N, Coins(bytes(32)), 28)
    floats = run_float(LinUCB(data.arms), data.reward, N, Coins(bytes(32)))
    assert score_error(fixed, floats) < 1e-3
    assert fixed["arms"] == floats["arms"]
