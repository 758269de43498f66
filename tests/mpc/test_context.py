"""The engine's checkpoint state (`Context.snapshot` / `restore`): a program cut in two and
resumed in a fresh context gives bit for bit what it gives uninterrupted."""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.runtime import codec


def steps(ctx, state, start: int, stop: int, inputs) -> tuple:
    """A loop touching every stateful part of the engine: pairwise-masked inputs, Beaver
    products with truncation, dealer samples (Bernoulli, uniform, permutations via argmax)."""
    w, opened = state, []
    for t in range(start, stop):
        x = ctx.share(inputs[t], owner=t % ctx.parties)
        w = w * 0.5 + x * mpc.bernoulli(ctx, 0.3, x.shape) + mpc.uniform(ctx, x.shape)
        opened.append((w.reveal(), mpc.reveal_argmax(w, method="tournament")))
    return w, opened


@pytest.mark.parametrize("truncation", ["bounded", "exact", "probabilistic"])
def test_a_resumed_program_is_bit_identical(truncation, rng):
    inputs = rng.uniform(-2, 2, (12, 5))
    whole = mpc.local_context(3, seed=4, truncation=truncation)
    _, expected = steps(whole, whole.constant(np.zeros(5)), 0, 12, inputs)

    first = mpc.local_context(3, seed=4, truncation=truncation)
    state, before = steps(first, first.constant(np.zeros(5)), 0, 7, inputs)
    saved = codec.decode(codec.encode(first.snapshot()))      # what a checkpoint keeps
    shares = state.data.copy()

    second = mpc.local_context(3, seed=4, truncation=truncation)
    second.restore(saved)
    resumed = mpc.ArithmeticShared(second, shares, state.frac_bits)
    _, after = steps(second, resumed, 7, 12, inputs)
    for (value, arm), (value_e, arm_e) in zip(before + after, expected):
        assert np.array_equal(value, value_e) and np.array_equal(arm, arm_e)
    untimed = [{k: v for k, v in s.items() if not k.endswith("seconds")} for s in whole.stats()]
    assert [{k: v for k, v in s.items() if not k.endswith("seconds")}
            for s in second.stats()] == untimed


def test_restore_needs_a_state_per_held_rank():
    ctx = mpc.local_context(2, seed=1)
    with pytest.raises(ValueError, match="one state per held rank"):
        ctx.restore(ctx.snapshot()[:1])
