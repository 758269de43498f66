"""Samba's participants other than the Controller (Ciucanu et al., Fig. 6(a), (c), (d)): data
owners, Comp, the data customer, and the wire format of scores and pull bits.

**Masks.**  Every DO draws the same mask for (t, l) from seed_alpha, which only the DOs hold.
For an ARGMAX iteration the mask is a random monotone affine map of the score's order key,
y = a key(x) + b with a in [1, 2^64] and b in [0, 2^64) fresh per (t, l): key is the float's
bit pattern made order-preserving (an exact, strictly increasing map from float64 to
[0, 2^64)), and the map is computed on integers, so order and ties are kept exactly and Comp's
argmax is the plaintext argmax.  For a MATCH iteration (probability matching: Softmax, Pursuit's
l = 2) the paper's multiplicative mask y = alpha x is kept, alpha = 2^w with w uniform in
[-32, 32), since matching needs the proportions (section 4.1.2, proof of Theorem 2).  Both are
sent as 16 bytes (docs/samba.md: what Comp learns under each).

**Data owners** live in a `DataOwnerGroup`, one per Ray actor (one DO per actor by default; for
many DOs on one machine several DOs share an actor, each still its own `DataOwner` with its own
state, streams and keys).  Steps are batched per group.
"""

from __future__ import annotations

import itertools
import math
import struct
import time
from dataclasses import dataclass

import numpy as np

from ppml.bandits.policies import ARGMAX, MATCH, AlgorithmSpec, ArmState, select_arm
from ppml.bandits.samba_draws import BetaDraws, Words
from ppml.bandits.samba_keys import streams
from ppml.crypto.aead import Channel, MessageRejected, PlainChannel, ReplayGuard
from ppml.crypto.paillier import Encoding, EncryptedArray, ObfuscatorPool, generate_keypair
from ppml.crypto.rng import Stream

SCORE_BYTES = 16
"""Every score and pull bit travels as 16 plaintext bytes (then 44 bytes sealed)."""
BIT_ZERO, BIT_ONE = bytes(SCORE_BYTES), b"\x01" + bytes(SCORE_BYTES - 1)
MASK_EXPONENT = 32
_SIGN = 1 << 63
_MASK64 = (1 << 64) - 1
_DOUBLE = struct.Struct(">d")
_FLOAT_BITS, _BITS = struct.Struct("<d"), struct.Struct("<Q")


def order_key(x: float) -> int:
    """An exact strictly increasing map from float64 (no NaN; -0.0 read as 0.0) to [0, 2^64)."""
    if x != x:
        raise ValueError("a score is NaN; scores must be comparable reals")
    (bits,) = _BITS.unpack(_FLOAT_BITS.pack(x + 0.0))
    return bits ^ _MASK64 if bits >= _SIGN else bits | _SIGN


def masked_score(kind: str, x: float, masks: Words) -> bytes:
    """DO's masked score as fixed-width bytes, with the mask of (t, l) from seed_alpha:
    a key(x) + b (ARGMAX; a = 1 + one word, then b = one word) or alpha x (MATCH; alpha = 2^w,
    w = 64 u - 32 from one uniform)."""
    if kind == ARGMAX:
        a = masks.word() + 1
        return (a * order_key(x) + masks.word()).to_bytes(SCORE_BYTES, "big")
    alpha = 2.0 ** (2 * MASK_EXPONENT * masks.uniform() - MASK_EXPONENT)
    y = alpha * x
    if not math.isfinite(y):
        raise ValueError(f"masked probability-matching score {x!r} * {alpha!r} is not finite")
    return _DOUBLE.pack(y) + bytes(SCORE_BYTES - 8)


def unpack_scores(kind: str, plaintexts: list) -> list:
    """Comp's view of the masked scores: ints (ARGMAX) or floats (MATCH)."""
    if kind == ARGMAX:
        return [int.from_bytes(p, "big") for p in plaintexts]
    if any(any(p[8:]) for p in plaintexts):
        raise MessageRejected("a probability-matching score has non-zero padding")
    return [_DOUBLE.unpack_from(p)[0] for p in plaintexts]


def unpack_bit(plaintext: bytes) -> int:
    """A DO's pull bit; anything but the two fixed plaintexts is refused."""
    if plaintext == BIT_ONE:
        return 1
    if plaintext != BIT_ZERO:
        raise MessageRejected("a pull bit is neither 0 nor 1 with zero padding")
    return 0


def bit_plaintexts(arms: int, position: int) -> list[bytes]:
    """Comp's K pull bits in permuted order: 1 at ``position`` only."""
    bits = [BIT_ZERO] * arms
    bits[position] = BIT_ONE
    return bits


def make_channel(crypto: bool, aes_key: bytes, run_id: bytes, nonces: Stream):
    return Channel(aes_key, run_id, SCORE_BYTES, nonces) if crypto else PlainChannel(SCORE_BYTES)


@dataclass(frozen=True)
class OwnerSecrets:
    """What DO_i receives at setup: Enc's key, seed_alpha, seed_eps and its own key."""

    index: int
    aes_key: bytes
    mask_key: bytes
    explore_key: bytes
    owner_key: bytes
    run_id: bytes


class DataOwner:
    """DO_i (Fig. 6(a)): its arm's state, its reward source, its streams; nothing else."""

    def __init__(self, secrets: OwnerSecrets, arms: int, data, horizon: int,
                 spec: AlgorithmSpec, crypto: bool):
        self.index, self.data = secrets.index, data
        self.policy = spec.policy(arms)
        self.state = ArmState()
        draws, nonces = streams(secrets.owner_key)
        self.draws = BetaDraws(draws)
        self.masks = Words(Stream(secrets.mask_key))
        self.explore = Words(Stream(secrets.explore_key))
        self.channel = make_channel(crypto, secrets.aes_key, secrets.run_id, nonces)
        self.guard = ReplayGuard(f"DO_{self.index}")
        self.crypto, self.horizon = crypto, horizon
        self.pulled = []
        self._decision = (0, False)
        self.seconds = 0.0
        self._pull(self.index + 1)                 # step 1: each DO pulls its arm once
        self.policy.init_state(self.state)

    def _pull(self, t: int) -> None:
        self.state.s += int(self.data.reward(t - 1, self.index))
        self.state.n += 1
        self.pulled.append(t)

    def explores(self, t: int) -> bool:
        """epsilon-greedy's x <= eps_t from seed_eps, drawn once per step."""
        if self._decision[0] != t:
            self._decision = (t, self.policy.explores(t, self.explore))
        return self._decision[1]

    def score(self, t: int, l: int) -> bytes:
        """Step 2: Enc(mask(ComputeScore(t, l)))."""
        if self.policy.exploring and self.explores(t):
            raise RuntimeError(f"DO_{self.index}: step {t} explores; no score is sent "
                               "(exploration shortcut)")
        kind = self.policy.kind(l)
        x = self.policy.compute_score(t, l, self.state, self.draws)
        return self.channel.seal(masked_score(kind, x, self.masks), t, l, "score")

    def receive(self, t: int, l: int, message: bytes) -> None:
        """Step 5: the pull bit; pull at the last iteration, else the local update."""
        self.guard.advance(t, l)
        if self.policy.exploring:
            self.explores(t)                   # seed_eps's draw of step t, also on explore steps
        bit = unpack_bit(self.channel.open(message, t, l, "bit"))
        if l < self.policy.iterations:
            self.policy.after_iteration(l, self.state, bit)
        elif bit:
            self._pull(t)

    def exchange(self, delivered, message, asked):
        """Step 5 of ``delivered`` = (t, l) with its bit ``message`` unless None, then step 2 of
        ``asked`` = (t, l) unless None."""
        if delivered is not None:
            self.receive(delivered[0], delivered[1], message)
        return None if asked is None else self.score(asked[0], asked[1])

    def reward_share(self, public_key):
        """Step 6: E(s_i) under DC's key (s_i itself without cryptography)."""
        if not self.crypto:
            return self.state.s
        pool = ObfuscatorPool(public_key, 1)
        return EncryptedArray.encrypt(np.array([self.state.s]), pool, Encoding(), k=0,
                                      bounds=(0, self.horizon))


class DataOwnerGroup:
    """Several DOs hosted by one process (one Ray actor); every call is batched over them."""

    def __init__(self):
        self.owners = []

    def setup(self, secrets: list, arms: int, data, horizon: int, spec: AlgorithmSpec,
              crypto: bool) -> None:
        """Step 1 (secrets arrive by method call, never as actor creation arguments)."""
        for s in secrets:
            start = time.perf_counter()
            self.owners.append(DataOwner(s, arms, data, horizon, spec, crypto))
            self.owners[-1].seconds += time.perf_counter() - start

    def _each(self, method: str, calls) -> list:
        """Each DO's ``method`` with its args, each DO's seconds on its own clock."""
        out = []
        clock = time.perf_counter
        now = clock()
        for owner, args in zip(self.owners, calls):
            out.append(getattr(owner, method)(*args))
            then = clock()
            owner.seconds += then - now
            now = then
        return out

    def exchange(self, delivery, asked) -> list | None:
        """Step 5 of the last iteration, ``delivery`` = (t, l, bits) unless None, then step 2 of
        ``asked`` = (t, l) unless None (an explore step, or the end of the run): each DO opens
        its bit, then scores."""
        delivered, messages = None, itertools.repeat(None)
        if delivery is not None:
            t, l, messages = delivery
            delivered = (t, l)
            if len(messages) != len(self.owners):
                raise MessageRejected(f"expected {len(self.owners)} bit messages at t={t}, "
                                      f"l={l}, got {len(messages)}")
        scores = self._each("exchange", zip(itertools.repeat(delivered), messages,
                                            itertools.repeat(asked)))
        return None if asked is None else scores

    def reward_shares(self, public_key) -> list:
        return self._each("reward_share", itertools.repeat((public_key,)))

    def report(self) -> list:
        """Evaluation only: (index, steps pulled, seconds, AES-GCM ops) of each DO."""
        return [(o.index, o.pulled, o.seconds,
                 o.channel.encryptions + o.channel.decryptions) for o in self.owners]


class Comp:
    """Comp (Fig. 6(c)): decrypts the permuted masked scores, runs SelectArm, returns permuted
    encrypted pull bits.  With no scores (epsilon-greedy's exploration shortcut) every arm
    scores alike, so the first position wins and sigma_t alone picks the arm uniformly."""

    def __init__(self, arms: int, spec: AlgorithmSpec, aes_key: bytes, comp_key: bytes,
                 run_id: bytes, crypto: bool):
        self.arms, self.policy = arms, spec.policy(arms)
        selection, nonces = streams(comp_key)
        self.selection = Words(selection)
        self.channel = make_channel(crypto, aes_key, run_id, nonces)
        self.guard = ReplayGuard("Comp")
        self.seconds = 0.0

    def select(self, t: int, l: int, messages) -> list:
        start = time.perf_counter()
        self.guard.advance(t, l)
        position = 0
        if messages is not None:
            kind = self.policy.kind(l)
            plain = self.channel.open_batch(messages, t, l, "score", self.arms)
            values = unpack_scores(kind, plain)
            u = self.selection.uniform() if kind == MATCH else None
            position = select_arm(kind, values, u)
        bits = self.channel.seal_many(bit_plaintexts(self.arms, position), t, l, "bit")
        self.seconds += time.perf_counter() - start
        return bits

    def report(self) -> tuple:
        return self.seconds, self.channel.encryptions + self.channel.decryptions


class DataCustomer:
    """DC (Fig. 6(d)): owns the Paillier key pair; decrypts the sum of rewards (step 7)."""

    def __init__(self, key_bits: int, insecure_key_bits_ok: bool, seed: int | None,
                 crypto: bool):
        start = time.perf_counter()
        self.public_key, self._private_key = (None, None) if not crypto else \
            generate_keypair(key_bits, insecure_key_bits_ok=insecure_key_bits_ok, seed=seed)
        self.seconds = self.keygen_seconds = time.perf_counter() - start

    def public(self):
        """Step 0 also hands DC's public key to the DOs (through the Controller)."""
        return self.public_key

    def report(self) -> tuple:
        """(all of DC's seconds, those of its Paillier key generation)."""
        return self.seconds, self.keygen_seconds

    def cumulative_reward(self, total) -> int:
        start = time.perf_counter()
        value = total if self._private_key is None else \
            int(total.decrypt_integers(self._private_key)[0])
        self.seconds += time.perf_counter() - start
        return value
