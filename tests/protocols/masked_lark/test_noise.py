"""Each helper's noise: its own draws at sigma_hat sqrt(k), the published epsilon's scale, and
the guarantee under composition."""

import math

import numpy as np

from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.noise import helper_noise, noise_scale, release_privacy


def test_sigma_hat_sets_the_scale_times_the_root_of_k():
    options = MaskedLarkOptions(sigma_hat=2.0, k=9)
    assert float(noise_scale(options)) == 6.0


def test_the_scale_for_epsilon_gives_epsilon_back_and_releases_compose():
    options = MaskedLarkOptions(epsilon=1.0, delta=1e-9)
    scale = noise_scale(options)
    assert math.isclose(release_privacy(options, scale)["epsilon"], 1.0, rel_tol=1e-3)
    ten = release_privacy(options, scale, releases=10)
    assert math.isclose(ten["rho"], 10 * release_privacy(options, scale)["rho"])
    laplace = MaskedLarkOptions(noise="laplace", epsilon=0.5, bound=2, d=3)
    assert math.isclose(float(noise_scale(laplace)), 2 * 3 / 0.5, rel_tol=1e-3)   # B d / eps


def test_each_helper_draws_its_own_noise():
    scale = noise_scale(MaskedLarkOptions())
    seeded = [helper_noise("gaussian", scale, (50, 2), 3, helper) for helper in (0, 1)]
    assert np.array_equal(seeded[0], helper_noise("gaussian", scale, (50, 2), 3, 0))
    assert not np.array_equal(seeded[0], seeded[1])
    assert not np.array_equal(helper_noise("gaussian", scale, (50, 2), 3, 0, 1), seeded[0])
    fresh = [helper_noise("laplace", scale, (400,), None, 0) for _ in range(2)]
    assert not np.array_equal(*fresh) and fresh[0].dtype == np.int64
    assert 0.7 * float(scale) < np.std(np.concatenate(fresh)) < 2.0 * float(scale)
