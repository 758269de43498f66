"""OpenDP's accounting of the helpers' noise: closed forms, composition, the inverse."""

import math

import pytest

from ppml.privacy.accounting import guarantee, scale_for, sensitivity

D2 = 3 * math.sqrt(2)                          # a value in [0, 3]^2


def test_the_gaussian_is_rho_zcdp_with_rho_d2_squared_over_two_sigma_squared():
    out = guarantee("gaussian", 4.0, D2, delta=1e-9)
    assert out["rho"] == pytest.approx(D2 ** 2 / (2 * 16))
    rho = out["rho"]                            # OpenDP's conversion beats the simple bound
    assert out["epsilon"] <= rho + 2 * math.sqrt(rho * math.log(1e9))


def test_releases_compose_linearly():
    one = guarantee("gaussian", 10.0, sensitivity("gaussian", D2, 6), 1e-9)
    ten = guarantee("gaussian", 10.0, sensitivity("gaussian", D2, 6, releases=10), 1e-9)
    assert ten["rho"] == pytest.approx(10 * one["rho"])
    assert guarantee("laplace", 2.0, sensitivity("laplace", D2, 3, releases=4),
                     1e-9)["epsilon"] == pytest.approx(6.0)


@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_scale_for_inverts_the_guarantee(family):
    scale = scale_for(family, 0.5, 2.0, delta=1e-9)
    assert guarantee(family, scale, 2.0, 1e-9)["epsilon"] == pytest.approx(0.5, rel=1e-6)
    assert guarantee(family, scale * 0.99, 2.0, 1e-9)["epsilon"] > 0.5


def test_bad_values_are_named():
    with pytest.raises(ValueError, match="scale must be a positive number"):
        guarantee("gaussian", 0.0, 1.0, 1e-9)
    with pytest.raises(ValueError, match="epsilon must be a positive number"):
        scale_for("gaussian", float("nan"), 1.0, 1e-9)
    with pytest.raises(ValueError, match="sensitivity must be a positive number"):
        scale_for("gaussian", 1.0, 0.0, 1e-9)
    with pytest.raises(ValueError, match="releases must be >= 1"):
        sensitivity("gaussian", 1.0, 1.0, releases=0)
