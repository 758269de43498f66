"""Block readers of CSPRNG streams: the same draws as reading the stream one draw at a time,
whatever the block; Beta draws with the right moments."""

import numpy as np
import pytest

from ppml.protocols.samba.draws import BLOCK_WORDS, BetaDraws, Permutations, Words
from ppml.crypto.rng import Stream, seeded_key


def stream(label):
    return Stream(seeded_key(5, label))


def test_words_and_uniforms_are_the_stream_in_order_across_blocks():
    words = Words(stream("w"))
    drawn = [words.word() for _ in range(BLOCK_WORDS + 3)]
    assert drawn == stream("w").uint64(BLOCK_WORDS + 3).tolist()
    small = Words(stream("w"), block_words=3)
    assert [small.word() for _ in range(10)] == drawn[:10]
    with pytest.raises(ValueError, match="block_words"):
        Words(stream("w"), block_words=0)
    uniforms = Words(stream("u"))
    expected = stream("u").uniform(BLOCK_WORDS + 2)
    assert [uniforms.uniform() for _ in range(BLOCK_WORDS + 2)] == expected.tolist()


@pytest.mark.parametrize("n", [3, 100, 5000])
def test_permutations_are_the_streams_one_by_one_with_their_inverses(n):
    blocked, single = Permutations(stream("p"), n), stream("p")
    for _ in range(2 * max(1, BLOCK_WORDS // n) + 1):
        sigma, inverse = blocked.next()
        assert sigma == single.permutation(n).tolist()
        assert [inverse[a] for a in sigma] == list(range(n))


def test_beta_draws_have_the_right_moments():
    draws = BetaDraws(stream("beta"))
    samples = np.array([draws.beta(3, 7) for _ in range(4000)])
    assert samples.mean() == pytest.approx(0.3, abs=0.01)
    assert samples.var() == pytest.approx(3 * 7 / (100 * 11), rel=0.1)
    large = np.array([draws.beta(400, 100) for _ in range(2000)])
    assert large.mean() == pytest.approx(0.8, abs=0.003)


def test_beta_draws_follow_the_stream_alone():
    a, b = BetaDraws(stream("same")), BetaDraws(stream("same"))
    first = [a.beta(2, 5) for _ in range(3000)]
    assert first == [b.beta(2, 5) for _ in range(3000)]
    other = BetaDraws(stream("other"))
    assert first != [other.beta(2, 5) for _ in range(3000)]


@pytest.mark.parametrize("make, draw", [
    (Words, lambda reader: reader.word()),
    (lambda s: Permutations(s, 7), lambda reader: reader.next()[0]),
    (BetaDraws, lambda reader: reader.beta(2.0, 3.0))], ids=["words", "permutations", "beta"])
def test_a_reader_resumed_from_its_state_draws_what_it_would_have_drawn(make, draw):
    """A checkpoint keeps a reader as (key, position of its next draw), mid-block or past one;
    the read-ahead block is not in it."""
    reader = make(stream("r"))
    for drawn in (5, BLOCK_WORDS):
        for _ in range(drawn):
            draw(reader)
        key, position = reader.state()
        resumed = make(Stream(key, position))
        assert [draw(resumed) for _ in range(BLOCK_WORDS // 2)] == \
            [draw(reader) for _ in range(BLOCK_WORDS // 2)]
