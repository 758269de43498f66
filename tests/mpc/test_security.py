"""A party's view does not depend on the other parties' secrets; reveal(to=k) reaches k only.

Views are recorded by the communicator: everything a party received, per round.  Over many
elements, the words another party receives are uniform whatever the secrets are, so their
distribution (16 bins of the top 4 bits, and 16 of the low 4 bits) is the same for two very
different sets of secrets (a chi-square two-sample test).  A deliberately leaky view (the secret
itself) fails the same test, which shows the test has power.
"""

import numpy as np
import pytest

import ppml.mpc as mpc

N = 4000


def received_words(view) -> np.ndarray:
    arrays = [np.ravel(np.asarray(a, dtype=np.uint64)) for _, _, _, _, payload in view
              for a in (payload if isinstance(payload, list) else [])]
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.uint64)


def histogram(words):
    top = np.bincount((words >> np.uint64(60)).astype(np.int64), minlength=16)
    low = np.bincount((words & np.uint64(15)).astype(np.int64), minlength=16)
    return np.concatenate([top, low])


def same_distribution(h1, h2) -> bool:
    """Two-sample chi-square over the bins; threshold at p ~ 1e-6 for 31 degrees of freedom."""
    used = np.flatnonzero(h1 + h2)
    h1, h2 = h1[used], h2[used]
    total = h1 + h2
    e1 = total * h1.sum() / total.sum()
    e2 = total * h2.sum() / total.sum()
    chi2 = ((h1 - e1) ** 2 / e1 + (h2 - e2) ** 2 / e2).sum()
    return chi2 < 80


def view_of_party_1(a, b, operation):
    ctx = mpc.local_context(3, seed=None, record_views=True)
    x, y = ctx.share(a, owner=0), ctx.share(b, owner=2)
    operation(x, y)
    return received_words(ctx.comm.views[1])


@pytest.mark.parametrize("operation", [
    lambda x, y: x * y, lambda x, y: x >= y,
    lambda x, y: mpc.argmax((x - y).reshape(N // 8, 8), method="tournament"),
    lambda x, y: ((x - y) * 0.005).exp(),
    lambda x, y: ((x - y) * 0.001 + 5).reciprocal(method="window")],
    ids=["multiplication", "comparison", "tournament argmax", "range-reduced exp",
         "windowed reciprocal"])
def test_view_does_not_depend_on_other_secrets(operation):
    rng = np.random.default_rng(0)
    small = (np.zeros(N), np.zeros(N))
    large = (rng.uniform(-1000, 1000, N), rng.uniform(-1000, 1000, N))
    view_small = view_of_party_1(*small, operation)
    view_large = view_of_party_1(*large, operation)
    assert view_small.size == view_large.size > 0
    assert same_distribution(histogram(view_small), histogram(view_large))


def test_the_statistical_test_catches_a_leak():
    rng = np.random.default_rng(1)
    leaky_small = np.zeros(N, dtype=np.uint64)
    leaky_large = rng.integers(0, 2**20, N).astype(np.uint64)
    assert not same_distribution(histogram(leaky_small), histogram(leaky_large))


def test_value_revealed_to_one_party_reaches_no_other():
    secret = np.array([3.25, -1.5, 7.0])
    ctx = mpc.local_context(3, seed=None, record_views=True)
    x = ctx.share(secret, owner=0)
    before = {p: len(ctx.comm.views[p]) for p in range(3)}
    out = (x * 2).reveal(to=1)
    assert out[0] is None and out[2] is None and np.allclose(out[1], 2 * secret)
    assert len(ctx.comm.views[0]) == before[0] and len(ctx.comm.views[2]) == before[2]
    assert len(ctx.comm.views[1]) == before[1] + 2  # one piece from each other party
    for p in (0, 2):
        words = received_words(ctx.comm.views[p])
        assert not np.isin(x.data.sum(axis=0, dtype=np.uint64), words).any()


def test_inputs_cost_no_share_messages():
    ctx = mpc.local_context(3, seed=None, record_views=True)
    ctx.share(np.ones(5), owner=0, shape=(5,))
    assert all(len(v) == 0 for v in ctx.comm.views.values())
    assert ctx.comm.stats[0].bytes_sent == 0
