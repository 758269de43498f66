import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.mpc.protocols.argmax import AUTO_CROSSOVER

from ..conftest import PARTIES


@pytest.mark.parametrize("parties", PARTIES)
@pytest.mark.parametrize("method", ["pairwise", "tournament"])
def test_argmax_is_a_one_hot_of_the_maximum(parties, method, rng):
    scores = rng.uniform(-2, 2, (6, 7))
    ctx = mpc.local_context(parties, seed=5)
    onehot = mpc.argmax(ctx.share(scores, owner=0), method=method).reveal()
    assert np.array_equal(onehot, np.eye(7, dtype=np.int64)[scores.argmax(axis=1)])


@pytest.mark.parametrize("method", ["pairwise", "tournament"])
def test_tied_maxima_are_chosen_uniformly(method):
    scores = np.tile([1.0, 3.0, 0.5, 3.0, 3.0, -1.0], (3000, 1))
    ctx = mpc.local_context(3, seed=6)
    onehot = mpc.argmax(ctx.share(scores, owner=0), method=method).reveal()
    assert np.all(onehot.sum(axis=1) == 1)
    counts = onehot.sum(axis=0)
    assert counts[[0, 2, 5]].sum() == 0
    chi2 = ((counts[[1, 3, 4]] - 1000) ** 2 / 1000).sum()
    assert chi2 < 18  # 2 degrees of freedom, p ~ 1e-4


def test_single_arm_and_bad_method():
    ctx = mpc.local_context(2, seed=7)
    x = ctx.share(np.array([[0.3]]), owner=0)
    assert mpc.argmax(x).reveal().tolist() == [[1]]
    with pytest.raises(ValueError, match="method"):
        mpc.argmax(x, method="bubble")


def test_pairwise_rounds_are_logarithmic_in_arms():
    ctx = mpc.local_context(2, seed=8)
    mpc.argmax(ctx.share(np.zeros(100), owner=0))
    # A2B (7) + AND tree over 99 (7) + B2A (1)
    assert ctx.comm.stats[0].by_op["argmax"]["rounds"] == 15


@pytest.mark.parametrize("method", ["pairwise", "tournament", "auto"])
def test_reveal_argmax_opens_the_one_hot_to_one_party(method, rng):
    scores = rng.uniform(-2, 2, (5, 6))
    ctx = mpc.local_context(3, seed=9, clients=1)
    x = ctx.share(scores, owner=0)
    before = ctx.comm.stats[0].rounds
    opened = mpc.reveal_argmax(x, to=3, method=method)
    rounds = ctx.comm.stats[0].rounds - before
    assert opened[:3] == [None, None, None]                 # the compute parties learn nothing
    assert np.array_equal(opened[3], np.eye(6, dtype=np.int64)[scores.argmax(axis=1)])
    before = ctx.comm.stats[0].rounds
    mpc.argmax(x, method=method).reveal(to=3)
    # pairwise opens its XOR-shared one-hot without the B2A round, tournament the winner's index
    # instead of making its shared one-hot
    assert ctx.comm.stats[0].rounds - before == rounds + 1
    with pytest.raises(ValueError, match="method"):
        mpc.reveal_argmax(x, to=3, method="bubble")


@pytest.mark.parametrize("parties", PARTIES)
@pytest.mark.parametrize("arms", [1, 2, 3, 7, 8])
def test_tournament_is_correct_for_any_number_of_arms(parties, arms, rng):
    scores = rng.uniform(-2, 2, (4, arms))
    ctx = mpc.local_context(parties, seed=10)
    x = ctx.share(scores, owner=0)
    expected = np.eye(arms, dtype=np.int64)[scores.argmax(axis=1)]
    assert np.array_equal(mpc.argmax(x, method="tournament").reveal(), expected)
    assert np.array_equal(mpc.argmax(x[0], method="tournament").reveal(), expected[0])
    assert np.array_equal(mpc.reveal_argmax(x, to=1, method="tournament")[1], expected)


def test_tournament_ties_among_all_arms_are_uniform():
    ctx = mpc.local_context(2, seed=11)
    onehot = mpc.argmax(ctx.share(np.full((3000, 3), 0.5), owner=0), method="tournament").reveal()
    assert np.all(onehot.sum(axis=1) == 1)
    assert ((onehot.sum(axis=0) - 1000) ** 2 / 1000).sum() < 18  # 2 degrees of freedom


def argmax_cost(arms: int, method: str) -> tuple:
    """(rounds, bytes party 0 sent) of one argmax over ``arms`` values, P = 2."""
    ctx = mpc.local_context(2, seed=12)
    mpc.argmax(ctx.share(np.zeros(arms), owner=0), method=method)
    cost = ctx.comm.stats[0].by_op["argmax"]
    return cost["rounds"], cost["bytes_sent"]


def test_tournament_bytes_grow_linearly():
    ratio = argmax_cost(256, "tournament")[1] / argmax_cost(64, "tournament")[1]
    assert ratio < 6  # quadratic would be 16


@pytest.mark.parametrize("arms", [AUTO_CROSSOVER, AUTO_CROSSOVER + 1])
def test_auto_picks_pairwise_up_to_the_crossover_and_tournament_above(arms):
    method = "pairwise" if arms <= AUTO_CROSSOVER else "tournament"
    assert argmax_cost(arms, "auto") == argmax_cost(arms, method)
    assert argmax_cost(arms, "pairwise") != argmax_cost(arms, "tournament")


@pytest.mark.parametrize("method", ["pairwise", "tournament"])
@pytest.mark.parametrize("arms", [2, 3, 5, 8, 13])
def test_ties_first_picks_the_first_maximum_of_integer_keys_up_to_2_63(method, arms, rng):
    """Keys anywhere in [0, 2^63) (Samba's float bits), heavy ties: the first maximum wins, as
    ``list.index(max(...))``, with no dealer permutation."""
    keys = rng.choice([0, 1, 2**62, 2**63 - 1], size=(40, arms)).astype(np.uint64)
    ctx = mpc.local_context(2, seed=12)
    x = ctx.share(keys, owner=0, frac_bits=0, wide=True)
    expected = np.eye(arms, dtype=np.int64)[[row.index(max(row)) for row in keys.tolist()]]
    assert np.array_equal(mpc.argmax(x, method=method, ties="first").reveal(), expected)
    assert np.array_equal(mpc.reveal_argmax(x, to=1, method=method, ties="first")[1], expected)
    assert "permutation" not in ctx.store.generated


def test_unknown_ties_is_refused():
    x = mpc.local_context(2, seed=1).share(np.zeros(3), owner=0)
    with pytest.raises(ValueError, match="ties must be one of"):
        mpc.argmax(x, ties="last")
    with pytest.raises(ValueError, match="ties must be one of"):
        mpc.reveal_argmax(x, ties="last")


@pytest.mark.parametrize("method", ["pairwise", "tournament"])
def test_keys_of_inputs_at_the_product_bound_cannot_overflow(method):
    """The reported all-zero one-hot at |x| ~ 4e11: such an input is refused where it enters
    (the product range), inputs at its bound (|x| 2^L = 2^31 - 1) keep the keys x A + gamma in
    the ring, and a wide input is right up to its precondition |x| 2^L < 2^62 / A."""
    ctx = mpc.local_context(2, seed=3)
    top = (2**31 - 1) / 2**20
    rows = np.array([[-top, top, top - 2**-20, 0.0], [-top, -top + 2**-20, -top, -top]])
    expected = np.eye(4, dtype=np.int64)[[1, 1]]
    x = ctx.share(rows, owner=0)
    assert np.array_equal(mpc.argmax(x, method=method).reveal(), expected)
    assert np.array_equal(mpc.reveal_argmax(x, to=1, method=method)[1], expected)
    with pytest.raises(ValueError, match=r"input of party 0 is outside the product range"):
        ctx.share(np.full(16, 4e11), owner=0)
    edge = (2**58 - 64) / 2**20              # keys of 16 values stay in the ring (exact float)
    wide = np.linspace(-edge, edge, 16)[np.random.default_rng(3).permutation(16)]
    shared = ctx.share(wide, owner=0, wide=True)
    assert mpc.reveal_argmax(shared, to=1, method=method)[1].tolist() == \
        np.eye(16, dtype=np.int64)[np.argmax(wide)].tolist()


def test_random_ties_take_at_most_2_31_minus_1_values():
    from ppml.mpc.protocols.argmax import MAX_RANDOM_TIES_ARMS, check
    check(np.zeros((0, MAX_RANDOM_TIES_ARMS), dtype=np.uint64), "auto")
    with pytest.raises(ValueError, match=r"ties='random' takes at most 2\^31 - 1 values"):
        check(np.zeros((0, MAX_RANDOM_TIES_ARMS + 1), dtype=np.uint64), "auto")
    check(np.zeros((0, MAX_RANDOM_TIES_ARMS + 1), dtype=np.uint64), "auto", ties="first")
