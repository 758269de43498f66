"""Properties of the protocol-neutral primitives of `ppml.crypto`: the fixed-point codec, the
CSPRNG streams, the AES-GCM channels, key agreement and HPKE, on random shapes, dtypes, sizes
and bad inputs.

Each call returns the right answer (a round trip, or the value numpy computes) or raises a
ValueError or TypeError naming the parameter (`tests.strategies.assert_refused`).
"""

import numpy as np
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from ppml.crypto import aead, agreement, fixed, hpke, rng
from tests.strategies import (INT_DTYPES, NOT_NUMBERS, arrays, assert_refused, complex_values,
                              fast, given_as, non_finite, shapes, too_large)

KEY = bytes(range(32))
NOT_BYTES = st.sampled_from(["abc", 5, None, [1, 2], bytearray(3), 1.5])
"""What a bytes parameter must refuse (a bytearray too: the checks ask for bytes)."""


# -- the fixed-point codec (ppml/crypto/fixed.py) ------------------------------------------------

@fast(80)
@given(st.data())
def test_encode_decode_is_within_half_an_ulp(data):
    """encode at precision L (and encode_at_scale at any scale f <= 61) of any real dtype,
    shape and form with |v| < 2^(62-f) decodes to round(v 2^f) / 2^f: within half an ulp
    (docs/mpc.md, "Encoding")."""
    frac = data.draw(st.integers(0, fixed.MAX_PRODUCT_SCALE))
    values = data.draw(arrays(shapes(), 2.0**(fixed.VALUE_BITS - frac)))
    given = data.draw(given_as(values))
    ring = fixed.encode_at_scale(given, frac)
    assert ring.dtype == np.uint64 and ring.shape == values.shape
    exact = np.rint(values.astype(np.float64) * 2.0**frac)
    assert np.array_equal(fixed.to_signed(ring), exact.astype(np.int64))
    assert np.array_equal(fixed.decode(ring, frac), exact / 2.0**frac)
    if fixed.MIN_PRECISION_BITS <= frac <= fixed.MAX_PRECISION_BITS:
        assert np.array_equal(fixed.encode(given, frac), ring)


@fast(80)
@given(st.data())
def test_encode_refuses_what_it_cannot_hold(data):
    """NaN, inf, |v| >= 2^(62-f), complex values (TypeError) and non-numbers are refused,
    naming the value; a bad precision or scale is refused naming it."""
    frac = data.draw(st.integers(0, fixed.MAX_PRODUCT_SCALE))
    shape = shapes(min_side=1)
    value, error, words = data.draw(st.one_of(
        non_finite(shape).map(lambda v: (v, ValueError, ["NaN or inf"])),
        too_large(shape, 2**(fixed.VALUE_BITS - frac)).map(lambda v: (v, ValueError,
                                                                       ["outside"])),
        complex_values(shape).map(lambda v: (v, TypeError, ["complex"])),
        st.sampled_from(NOT_NUMBERS).map(lambda v: (v, (ValueError, TypeError), []))))
    assert_refused(lambda: fixed.encode_at_scale(value, frac, name="features"), "features",
                   *words, errors=error)
    bad_scale = st.one_of(st.integers(-99, -1), st.integers(62, 200),
                          st.sampled_from([1.5, "20", None, True]))
    assert_refused(lambda: fixed.encode_at_scale([1.0], data.draw(bad_scale)), "frac_bits")
    bad_precision = st.one_of(st.integers(-9, 7), st.integers(31, 99),
                              st.sampled_from([20.0, "20", None, True]))
    assert_refused(lambda: fixed.encode([1.0], data.draw(bad_precision)), "precision_bits")
    assert_refused(lambda: fixed.check_precision_bits(data.draw(bad_precision)),
                   "precision_bits")


@fast(60)
@given(st.data())
def test_integers_and_words_keep_their_bits(data):
    """signed_integers / encode_integers take every integer dtype (and bool, and Python ints)
    in the signed 64-bit range exactly; encode_words takes any uint64 as it is and signed
    integers in two's complement; to_signed and decode read words back."""
    values = data.draw(arrays(shapes(), 2.0**63, ("bool",) + INT_DTYPES))
    given = data.draw(given_as(values))
    ints = fixed.signed_integers(given)
    assert ints.dtype == np.int64 and ints.tolist() == values.astype(object).tolist()
    assert np.array_equal(fixed.encode_integers(given), ints.view(np.uint64))
    words = data.draw(hnp.arrays(np.uint64, data.draw(shapes())))
    assert np.array_equal(fixed.encode_words(words), words)
    assert np.array_equal(fixed.encode_words(ints), ints.view(np.uint64))
    assert np.array_equal(fixed.to_signed(words), words.view(np.int64))
    bits = data.draw(st.integers(0, 63))
    assert np.array_equal(fixed.decode(words, bits), words.view(np.int64) / 2.0**bits)


@fast(60)
@given(st.data())
def test_integer_codecs_refuse_what_is_not_a_64_bit_integer(data):
    """Floats, complex values, non-numbers, unsigned words >= 2^63 and Python integers beyond
    64 bits are refused by signed_integers (names the value), decode's words and precision by
    decode, naming them."""
    shape = shapes(min_side=1)
    value = data.draw(st.one_of(
        arrays(shape, 4.0, ("float16", "float32", "float64")).filter(lambda v: v.size),
        complex_values(shape), st.sampled_from(NOT_NUMBERS),
        too_large(shape, 2**63, integers=True)))
    assert_refused(lambda: fixed.signed_integers(value, "counts"), "counts")
    assert_refused(lambda: fixed.encode_words(value, "words"), "words") \
        if not (isinstance(value, np.ndarray) and value.dtype == np.uint64) else None
    assert_refused(lambda: fixed.decode(np.array([0.5, 1.0]), 20), "ring elements")
    bad_bits = st.one_of(st.integers(-9, -1), st.integers(64, 99),
                         st.sampled_from([1.5, "20", None]))
    assert_refused(lambda: fixed.decode(np.zeros(2, np.uint64), data.draw(bad_bits)),
                   "precision_bits")


# -- CSPRNG streams (ppml/crypto/rng.py) ---------------------------------------------------------

@fast(60)
@given(st.data())
def test_streams_draw_what_they_promise(data):
    """A Stream's draws have the asked shape and range (uint64, bits, below 2^k for k in
    [0, 64], uniform in [0, 1), permutations); the same key gives the same draws; children and
    derived keys differ; UniformIntegers.below(n) lies in [0, n) for any n >= 1."""
    key = data.draw(st.binary(min_size=32, max_size=32))
    shape = data.draw(shapes(0, 3).map(lambda s: s if len(s) != 1 or data.draw(st.booleans())
                                       else s[0]))
    stream, again = rng.Stream(key), rng.Stream(key)
    words = stream.uint64(shape)
    assert words.dtype == np.uint64 and words.shape == np.empty(shape).shape
    assert np.array_equal(again.uint64(shape), words)
    assert set(np.unique(stream.bits(shape))) <= {0, 1}
    k = data.draw(st.integers(0, 64))
    assert np.all(stream.below(k, shape).astype(object) < 2**k)
    u = stream.uniform(shape)
    assert np.all((0 <= u) & (u < 1))
    n = data.draw(st.integers(0, 6))
    permutation = stream.permutation(n, data.draw(shapes(0, 1)))
    assert np.array_equal(np.sort(permutation, axis=-1),
                          np.broadcast_to(np.arange(n), permutation.shape))
    assert stream.child("a").key != stream.child("b").key != key
    assert rng.derive_key(key, "x", 1) != rng.derive_key(key, "x", 2)
    bound = data.draw(st.integers(1, 2**200))
    assert 0 <= rng.UniformIntegers(stream).below(bound) < bound
    seed = data.draw(st.integers(0, 2**70))
    assert rng.seeded_key(seed, "a") == rng.seeded_key(seed, "a") != rng.seeded_key(seed, "b")


@fast(40)
@given(st.data())
def test_streams_refuse_bad_arguments_naming_them(data):
    """A key of another length or type, a negative or non-integer shape, count, bound or seed
    is refused naming it (before: a numpy OverflowError, or a silent wrong count)."""
    bad_key = data.draw(st.one_of(st.binary(max_size=31), st.binary(min_size=33, max_size=40),
                                  NOT_BYTES))
    assert_refused(lambda: rng.Stream(bad_key), "key")
    assert_refused(lambda: rng.derive_key(data.draw(st.one_of(st.binary(min_size=65,
                                                                        max_size=80),
                                                              NOT_BYTES)), "x"), "key")
    stream = rng.Stream(KEY)
    bad_shape = st.sampled_from([-1, (-1,), (2.5,), 2.5, "ab", None, (True,)])
    assert_refused(lambda: stream.uint64(data.draw(bad_shape)), "shape")
    assert_refused(lambda: stream.bits(data.draw(bad_shape)), "shape")
    assert_refused(lambda: stream.uniform(data.draw(bad_shape)), "shape")
    bad_count = st.one_of(st.integers(-9, -1), st.sampled_from([2.5, "3", None]))
    assert_refused(lambda: stream.bytes(data.draw(bad_count)), "n")
    assert_refused(lambda: stream.permutation(data.draw(bad_count)), "n")
    assert_refused(lambda: stream.below(data.draw(st.one_of(
        st.integers(65, 99), st.integers(-9, -1), st.sampled_from([2.5, None]))), (2,)),
        "bound_bits")
    assert_refused(lambda: rng.UniformIntegers(stream).below(data.draw(st.one_of(
        st.integers(-9, 0), st.sampled_from([2.5, "3", None, True])))), "n")
    assert_refused(lambda: rng.seeded_key(data.draw(bad_count)), "seed")


# -- AES-GCM channels (ppml/crypto/aead.py) ------------------------------------------------------

STEPS = st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1))
KINDS = st.text(alphabet="ks_é\u03bb\U0001f642", max_size=20)
"""Kinds of up to 80 bytes, with multi-byte characters (an explicit alphabet: Hypothesis's
full character table costs seconds to build on a fresh machine)."""


@fast(40)
@given(width=st.integers(1, 64), run=st.binary(max_size=40), step=STEPS, kind=KINDS,
       data=st.data())
def test_a_channel_opens_what_it_sealed_and_nothing_else(width, run, step, kind, data):
    """open(seal(m)) == m for any width, run id, (t, l) in their fields and kind; a flipped bit,
    another (t, l, kind) or another run is refused with MessageRejected (a ValueError)."""
    plaintexts = data.draw(st.lists(st.binary(min_size=width, max_size=width), min_size=1,
                                    max_size=4, unique=True))
    sender, receiver = aead.Channel(KEY, run, width), aead.Channel(KEY, run, width)
    sealed = sender.seal_many(plaintexts, *step, kind)
    assert all(len(m) == sender.message_bytes for m in sealed)
    assert receiver.open_batch(sealed, *step, kind, len(sealed)) == plaintexts
    at = data.draw(st.integers(0, sender.message_bytes - 1))
    tampered = sealed[0][:at] + bytes([sealed[0][at] ^ 1]) + sealed[0][at + 1:]
    assert_refused(lambda: receiver.open(tampered, *step, kind), kind,
                   errors=(aead.MessageRejected,))
    other = (step[0], (step[1] + 1) % 2**32)
    assert_refused(lambda: receiver.open(sealed[0], *other, kind), "authentication",
                   errors=(aead.MessageRejected,))
    assert_refused(lambda: aead.Channel(KEY, run + b"x", width).open(sealed[0], *step, kind),
                   "authentication", errors=(aead.MessageRejected,))


@fast(40)
@given(st.data())
def test_a_channel_refuses_bad_arguments_naming_them(data):
    """A key of another length, a width, run id, t, l or kind that does not fit its field, and
    plaintexts that are not bytes of the width are refused naming them (before: struct.error,
    OverflowError, AttributeError, or a run id made from an int)."""
    assert_refused(lambda: aead.Channel(data.draw(st.one_of(st.binary(max_size=31), NOT_BYTES)),
                                        b"run", 4), "key")
    assert_refused(lambda: aead.Channel(KEY, b"run", data.draw(st.one_of(
        st.integers(-9, 0), st.sampled_from([1.5, "4", None, True])))), "width")
    assert_refused(lambda: aead.Channel(KEY, data.draw(st.one_of(
        NOT_BYTES.filter(lambda v: not isinstance(v, bytearray)),
        st.just(bytes(2**16)))), 4), "run_id")
    channel = aead.Channel(KEY, b"run", 4)
    bad_t = st.one_of(st.integers(2**64, 2**70), st.integers(-9, -1), st.sampled_from([1.5, "1"]))
    assert_refused(lambda: channel.seal(b"abcd", data.draw(bad_t), 0, "k"), "t")
    bad_l = st.one_of(st.integers(2**32, 2**40), st.integers(-9, -1), st.sampled_from([0.5]))
    assert_refused(lambda: channel.seal(b"abcd", 0, data.draw(bad_l), "k"), "l")
    bad_kind = st.one_of(st.text(alphabet="k\u03bb", min_size=256, max_size=300),
                         st.sampled_from([5, None, b"k"]))
    assert_refused(lambda: channel.seal(b"abcd", 0, 0, data.draw(bad_kind)), "kind")
    assert_refused(lambda: channel.seal(data.draw(st.one_of(
        st.binary(max_size=3), st.binary(min_size=5, max_size=9), NOT_BYTES)), 0, 0, "score"),
        "score plaintext")


# -- key agreement and HPKE (ppml/crypto/agreement.py, hpke.py) ---------------------------------

@fast(30)
@given(a=st.binary(min_size=32, max_size=32), b=st.binary(min_size=32, max_size=32),
       secret=st.binary(max_size=64), context=st.binary(max_size=32), data=st.data())
def test_agreement_and_hpke_round_trips(a, b, secret, context, data):
    """Both ends of X25519 agree on one key; a sealed box opens for its peer and context only;
    an HPKE message opens under its info only; bad arguments are refused naming them."""
    alice, bob = agreement.KeyAgreement(a), agreement.KeyAgreement(b)
    assert alice.agree(bob.public, context) == bob.agree(alice.public, context)
    box = alice.seal(bob.public, secret, context)
    assert bob.open(alice.public, box, context) == secret
    assert_refused(lambda: bob.open(alice.public, box, context + b"x"), "authentication",
                   errors=(aead.MessageRejected,))
    key = hpke.HpkeKey()
    sealed = hpke.seal(hpke.public_key(key.public), secret, context)
    assert key.open(sealed, context) == secret
    assert_refused(lambda: key.open(sealed, context + b"x", "the report"), "the report",
                   errors=(aead.MessageRejected,))
    junk = data.draw(NOT_BYTES)
    assert_refused(lambda: agreement.KeyAgreement(junk), "private_bytes")
    assert_refused(lambda: alice.agree(junk, context), "peer_public")
    assert_refused(lambda: alice.agree(bob.public, junk), "context")
    assert_refused(lambda: alice.seal(bob.public, junk, context), "secret")
    assert_refused(lambda: bob.open(alice.public, junk, context), "box")
    assert_refused(lambda: hpke.public_key(junk), "public key")
    assert_refused(lambda: hpke.seal(key.public, secret, context), "recipient")
    assert_refused(lambda: key.open(junk, context), "sealed")
