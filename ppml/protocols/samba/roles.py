"""Samba's participants other than the Controller (Ciucanu et al., Fig. 6(a), (c), (d)): data
owners, Comp, the data customer, and the paper's mask.

The DOs hide their scores from Comp one of two ways (`config.MASKS`): by default each sends Comp
its share of the score (`ppml.protocols.samba.selection`), and Comp selects with the Controller
on shares in its seat, DC dealing their material; with ``mask=paper``, masks from seed_alpha,
which only the DOs hold, fresh per (t, l): the paper's y = alpha_t x (section 4.1.2, proof of
Theorem 2), which shows Comp every ratio x_i / x_j.  Every score, share and bit is 16 bytes
(`ppml.protocols.samba.wire`).  Each DO is its own `DataOwner` object (state, own stream, keys);
a `DataOwnerGroup` hosts several in one Ray actor, holds once what they all hold (Enc's key,
seed_alpha, seed_eps) and runs each phase as one loop over them.

Comp and each DO group keep their own checkpoints (`Checkpointed`, driven by the Controller):
what each saves is in its ``checkpoint_state``, and in docs/reliability.md.

Design: docs/samba.md, "The protocol as built" (placement of the DOs), "Selection on shares"
and "What each role learns".
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ppml.protocols.samba.policies import ARGMAX, MATCH, AlgorithmSpec, Arm, select_arm
from ppml.protocols.samba.draws import BetaDraws, Words, uniform
from ppml.protocols.samba.keys import role_key, streams
from ppml.protocols.samba.selection import (comp_shares, select_on_shares, share_words,
                                             unpack_shares)
from ppml.protocols.samba.wire import (SCORE_BYTES, bit_plaintexts, pack_words, unpack_bits,
                                       unpack_words)
from ppml.crypto.aead import Channel, MessageRejected, PlainChannel, ReplayGuard
from ppml.crypto.agreement import KeyAgreement
from ppml.crypto.paillier import Encoding, EncryptedArray, ObfuscatorPool, generate_keypair
from ppml.crypto.rng import Stream
from ppml.mpc.context import EngineConfig
from ppml.mpc.dealer import Dealer, material
from ppml.privacy.views import ViewRecorder
from ppml.runtime import seat
from ppml.runtime.checkpoints import Checkpointed
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S

MASK_EXPONENT = 32
"""alpha_t = 2^w with w in [-32, 32): the mask hides a score's scale within 64 binades."""
_EXPONENT_STEP = 2**53 // (2 * MASK_EXPONENT)
"""floor(64 u) for u = m 2^-53 (m the word's top 53 bits) is m // 2^47, exactly."""


def masked_scores(kind: str, xs, mask, indices) -> list[bytes]:
    """The masked scores of a group's DOs as fixed-width bytes: the paper's y = alpha_t x
    (section 4.1.2), with the alpha of (t, l) from one word of seed_alpha (``mask``, the
    group's `Words.word`; every DO holds seed_alpha and draws the same word), the DO of
    ``xs[i]`` being ``indices[i]``.  alpha = 2^w with w from one uniform in [-32, 32): an
    integer w for ARGMAX, so that y is exact and Comp's argmax is the plaintext one, ties
    included; a real w for MATCH (probability matching only needs the proportions, and a
    rounded or underflowing y moves them by at most an ulp of the total).  A y that is not
    finite, or on an ARGMAX iteration not a normal float (where the rounding could break a tie
    that the plaintext argmax does not), is refused, never sent."""
    xs = np.asarray(xs, dtype=np.float64)
    if kind == ARGMAX:          # y = x 2^floor(w), w = 64 u - 32: ldexp scales exactly
        ys = np.ldexp(xs, (mask() >> 11) // _EXPONENT_STEP - MASK_EXPONENT)
        bad = ~(np.isfinite(ys) & ((ys == 0) | (np.abs(ys) >= sys.float_info.min)))
    else:
        ys = xs * 2.0 ** (2 * MASK_EXPONENT * uniform(mask) - MASK_EXPONENT)
        bad = ~np.isfinite(ys)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"masked score {float(xs[first])!r} of DO {indices[first]} is not a "
                         f"finite{' normal' if kind == ARGMAX else ''} float")
    return pack_words(ys.astype(">f8").view(">u8"))


def unpack_scores(plaintexts: list) -> list:
    """Comp's view of the masked scores: the floats alpha_t x_i."""
    return unpack_words(plaintexts, "a masked score").view(">f8").tolist()


def hand_over_context(run_id: bytes, purpose: str, sender: str, receiver: str) -> bytes:
    """What a sealed hand-over is bound to: the run, the secret's purpose and both ends."""
    return run_id + f"/{purpose}/{sender}->{receiver}".encode()


def engine_config(record_views: bool) -> EngineConfig:
    """The two-party engine of the selection on shares: the Controller (party 0) and Comp
    (party 1); its keys are handed over sealed, never derived from a seed here."""
    return EngineConfig(2, record_views=record_views)


class DataOwner(Arm):
    """DO_i (Fig. 6(a)), its own object: its arm's state (`Arm`: s_i, n_i, p_i and its Thompson
    draws from its own stream), its arm's rewards (``rewards``), the steps it pulled, its own
    key and X25519 pair (``agreement``), under mask=mpc its reader (`Words`) of the stream it
    shares with the Controller (``share``: the Controller's shares of its scores), and its
    precomputed Paillier obfuscator for step 6 (``pool``, ``offline_s`` seconds to make it).
    Under
    mask=paper DO 0 also makes seed_alpha (``alpha``) for all DOs.  What every DO holds alike
    (Enc's key, seed_alpha, seed_eps) its `DataOwnerGroup` holds once."""

    __slots__ = ("index", "rewards", "pulled", "own_key", "agreement", "alpha", "share", "pool",
                 "offline_s")

    def __init__(self, index: int, rewards, seed: int | None, mask: str = "mpc"):
        if rewards.index != index:
            raise ValueError(f"DO {index} was given arm {rewards.index}'s rewards")
        self.own_key = role_key(seed, "owner", index)
        super().__init__(BetaDraws(streams(self.own_key)[0]))
        self.index, self.rewards, self.pulled = index, rewards, []
        self.agreement = KeyAgreement(role_key(seed, "x25519", "owner", index))
        self.alpha = role_key(seed, "masks") if index == 0 and mask == "paper" else None
        self.share = None
        self.pool, self.offline_s = None, 0.0

    def pull(self, t: int) -> None:
        """Pull its arm at step t (step 5 of the last iteration with bit 1, or step 1)."""
        self.record(int(self.rewards.reward(t - 1)))
        self.pulled.append(t)

    def state(self) -> dict:
        """What DO_i checkpoints of its own (Fig. 6(a)): its key, s_i, n_i, p_i, where its Beta
        draws and (mask=mpc) its reader of the shared stream stand, and the steps it pulled.
        Its obfuscator is made again under DC's key of the resumed run."""
        return {"key": self.own_key, "s": self.s, "n": self.n, "p": self.p,
                "draws": self.draws.state(), "pulled": self.pulled,
                "share": None if self.share is None else self.share.state()}

    def restore(self, state: dict) -> None:
        self.own_key, self.s, self.n, self.p = state["key"], state["s"], state["n"], state["p"]
        self.draws, self.pulled = BetaDraws.resumed(state["draws"]), list(state["pulled"])
        self.share = None if state["share"] is None else share_words(*state["share"])

    def precompute(self, public_key) -> None:
        """Offline: its obfuscator r^n for step 6 under DC's public key (step 0)."""
        begin = time.perf_counter()
        self.pool = ObfuscatorPool(public_key, 1)
        self.offline_s = time.perf_counter() - begin


class DataOwnerGroup(Checkpointed):
    """The DOs hosted by one process (one Ray actor; Fig. 6(a)); every call is batched over them.

    Each DO is its own `DataOwner` object with its own state and secrets.  A call runs one tight
    loop per phase over the group's DOs (open the bits, ComputeScore, mask, seal), in which DO
    i's values come from its own object only (arm score locality), so hosting DOs together shares
    no DO's own secret or state with another.  Each DO holds its own arm's rewards only
    (``rewards``: one `ppml.data.bernoulli_items.ArmRewards` per DO, never the other arms').
    What all DOs hold alike, and hold in one process anyway, the group holds once: Enc's key
    (its AES-GCM `Channel`, whose nonces come from the group's own stream), its reader of
    seed_alpha (``mask``, mask=paper) and its reader of seed_eps (``explore``); every DO opens
    each of them from its own sealed box, and the group refuses DOs that opened different keys.
    Besides, the group holds the policy and the replay guard.  It checkpoints what it holds
    (`checkpoint_state`).
    """

    def join(self, rewards: list, seed: int | None, record_views: bool = False,
             mask: str = "mpc") -> dict:
        """Its DOs, each making its own keys (``rewards``: one `ArmRewards` per DO, in DO
        order; ``mask``: how they hide their scores, one of `config.MASKS`), and the group's
        nonce stream; returns their X25519 public keys by DO index, for the Controller to relay.
        With ``record_views`` the group records what its DOs open: each DO's pull bit at
        (t, l), its position the DO's index."""
        self.owners = [DataOwner(r.index, r, seed, mask) for r in rewards]
        self.indices = [o.index for o in self.owners]
        self._nonces = Stream(role_key(seed, "nonces", "owners", self.indices[0]))
        self.view = ViewRecorder(record_views)
        return {o.index: o.agreement.public for o in self.owners}

    def share_alpha(self, publics: dict, run_id: bytes) -> dict:
        """DO 0's seed_alpha sealed to every other DO (``publics``: X25519 keys by DO index);
        asked of the group that hosts DO 0 only."""
        first = self.owners[0]
        if first.index != 0:
            raise ValueError(f"seed_alpha is DO 0's to share; this group hosts DOs "
                             f"{first.index}-{self.owners[-1].index}")
        return {i: first.agreement.seal(public, first.alpha,
                                        hand_over_context(run_id, "masks", "DO0", f"DO{i}"))
                for i, public in publics.items() if i != 0}

    def setup(self, sealed: dict, senders: dict, explore_key: bytes, run_id: bytes, arms: int,
              horizon: int, spec: AlgorithmSpec, crypto: bool, public_key) -> None:
        """Step 1: each DO opens the keys sealed to it, ``sealed`` = {index: {purpose: box}}:
        Enc's key ("aes-gcm", from Comp) and the key that hides its scores ("masks": seed_alpha
        from DO 0, which DO 0 itself holds; or "shares", from the Controller), ``senders`` =
        {purpose: (sender's name, its X25519 key)}; takes seed_eps; pulls its arm once; and,
        offline, makes its obfuscator r^n for step 6 under DC's public key (step 0).  Keys
        arrive by method call, never as actor creation arguments."""
        start = time.perf_counter()
        self.horizon, self.crypto = horizon, crypto
        self.policy = spec.policy(arms)
        common: dict = {"aes-gcm": set(), "masks": set()}
        for owner in self.owners:
            opened = {"masks": owner.alpha} if owner.alpha is not None else {}
            for purpose, box in sealed[owner.index].items():
                name, public = senders[purpose]
                opened[purpose] = owner.agreement.open(public, box, hand_over_context(
                    run_id, purpose, name, f"DO{owner.index}"))
            if "shares" in opened:
                owner.share = share_words(opened.pop("shares"))
            for purpose, key in opened.items():
                common[purpose].add(key)
        if len(common["aes-gcm"]) != 1 or len(common["masks"]) > 1:
            raise MessageRejected(f"the DOs {self.indices[0]}-{self.indices[-1]} opened "
                                  "different Enc or seed_alpha keys")
        (aes,) = common["aes-gcm"]
        self.mask = Words(Stream(common["masks"].pop())) if common["masks"] else None
        self.explore = Words(Stream(explore_key))
        self.channel = Channel(aes, run_id, SCORE_BYTES, self._nonces) if crypto \
            else PlainChannel(SCORE_BYTES)
        self.guard = ReplayGuard(f"DOs {self.indices[0]}-{self.indices[-1]}")
        for owner in self.owners:
            owner.pull(owner.index + 1)                # step 1: each DO pulls its arm once
            owner.p = self.policy.initial_p()
        self._decision = (0, False)
        self.seconds = time.perf_counter() - start
        for owner in self.owners if crypto else ():
            owner.precompute(public_key)

    def _explores(self, t: int) -> bool:
        """epsilon-greedy's x <= eps_t from the group's reader of seed_eps, once per step (every
        DO holds seed_eps, so all agree)."""
        if self._decision[0] != t:
            self._decision = (t, self.policy.explores(t, self.explore))
        return self._decision[1]

    def exchange(self, delivery, asked) -> list | None:
        """Step 5 of the last iteration, ``delivery`` = (t, l, bits) unless None, then step 2 of
        ``asked`` = (t, l) unless None (an explore step, or the end of the run): each DO opens
        its bit, then sends Enc(mask(ComputeScore(t, l)))."""
        start = time.perf_counter()
        owners = self.owners
        if delivery is not None:
            t, l, messages = delivery
            if len(messages) != len(owners):                # before the guard accepts (t, l)
                raise MessageRejected(f"expected {len(owners)} bit messages at t={t}, l={l}, "
                                      f"got {len(messages)}")
            self.guard.advance(t, l)
            if self.policy.exploring:
                self._explores(t)                # seed_eps's draw of step t, also on explore steps
            bits = unpack_bits(self.channel.open_batch(messages, t, l, "bit", len(owners)))
            if self.view.enabled:
                self.view.record(t, l, bits, self.indices)
            if l < self.policy.iterations:
                self.policy.after_iteration(l, owners, bits)
            elif 1 in bits:
                for owner, bit in zip(owners, bits):
                    if bit:
                        owner.pull(t)
        scores = None
        if asked is not None:
            t, l = asked
            if self.policy.exploring and self._explores(t):
                raise RuntimeError(f"step {t} explores; no score is sent (exploration "
                                   "shortcut)")
            kind = self.policy.kind(l)
            x = self.policy.compute_scores(t, l, owners)
            plaintexts = masked_scores(kind, x, self.mask.word, self.indices) if self.mask \
                else comp_shares(kind, x, [o.share.word for o in owners],
                                 self.policy.match_bound())
            scores = self.channel.seal_many(plaintexts, t, l, "score")
        self.seconds += time.perf_counter() - start
        return scores

    def reward_shares(self) -> list:
        """Step 6: each DO's E(s_i) under DC's key with its precomputed obfuscator (s_i itself
        without cryptography)."""
        start = time.perf_counter()
        shares = [EncryptedArray.encrypt(np.array([o.s]), o.pool, Encoding(), k=0,
                                         bounds=(0, self.horizon))
                  for o in self.owners] if self.crypto else [o.s for o in self.owners]
        self.seconds += time.perf_counter() - start
        return shares

    def checkpoint_state(self) -> dict:
        """What the group holds after a step (the Controller has delivered that step's bits, so
        no message is in flight): each DO's own state (`DataOwner.state`), where its readers of
        seed_alpha and seed_eps and its nonce stream stand, its AES-GCM counts, its replay
        guard.  The keys handed over at step 1 (Enc's, DC's public key) are the resumed run's."""
        return {"owners": [o.state() for o in self.owners], "explore": self.explore.state(),
                "mask": None if self.mask is None else self.mask.state(),
                "channel": self.channel.state(), "guard": self.guard.last}

    def restore_state(self, state: dict) -> None:
        """Go on from `checkpoint_state`'s ``state`` (after step 1 of the resumed run)."""
        for owner, saved in zip(self.owners, state["owners"], strict=True):
            owner.restore(saved)
        self.explore = Words.resumed(state["explore"])
        self.mask = None if state["mask"] is None else Words.resumed(state["mask"])
        self.channel.restore(state["channel"])
        self.guard.last = tuple(state["guard"])

    def recorded_view(self):
        """What the group's DOs opened, if they recorded (`ppml.privacy.views`)."""
        return self.view.table()

    def replay_keys(self) -> dict:
        """EVALUATION ONLY (never called by the protocol): each DO's own key, for a plaintext
        reference that replays the run's draws."""
        return {o.index: o.own_key for o in self.owners}

    def report(self) -> list:
        """Evaluation only: (index, steps pulled, seconds, AES-GCM ops, offline seconds) of each
        DO.  A DO's seconds are its group's online seconds divided evenly among its DOs (they run
        the same loops) plus its own offline seconds (its obfuscator precomputation)."""
        share = self.seconds / len(self.owners)
        ops = (self.channel.encryptions + self.channel.decryptions) // len(self.owners)
        return [(o.index, o.pulled, share + o.offline_s, ops, o.offline_s) for o in self.owners]


class Comp(Checkpointed):
    """Comp (Fig. 6(c)): decrypts the permuted masked scores, runs SelectArm, returns permuted
    encrypted pull bits.  Under mask=mpc it decrypts its shares of the scores instead and runs
    SelectArm with the Controller on shares, in its `Seat` (party 1), learning the position
    only.  With no scores (epsilon-greedy's exploration shortcut) every arm scores alike, so
    the first position wins and sigma_t alone picks the arm uniformly."""

    name = "Comp"

    def __init__(self, arms: int, spec: AlgorithmSpec, run_id: bytes, crypto: bool,
                 seed: int | None = None, record_views: bool = False, mask: str = "mpc",
                 runtime: str = "local", timeout_s: float = DEFAULT_TIMEOUT_S):
        self.arms, self.policy, self.run_id = arms, spec.policy(arms), run_id
        self.view = ViewRecorder(record_views)
        self.seat = seat.make(runtime, 1, engine_config(record_views), timeout_s) \
            if mask == "mpc" else None
        self._own_key = role_key(seed, "comp")
        self._aes_key = role_key(seed, "aes-gcm")            # Enc's key: Comp makes it
        self.agreement = KeyAgreement(role_key(seed, "x25519", "comp"))
        selection, nonces = streams(self._own_key)
        self.selection = Words(selection)
        self.channel = Channel(self._aes_key, run_id, SCORE_BYTES, nonces) if crypto \
            else PlainChannel(SCORE_BYTES)
        self.guard = ReplayGuard("Comp")
        self.seconds = 0.0

    def public(self) -> bytes:
        """Comp's X25519 public key."""
        return self.agreement.public

    def share_enc_key(self, publics: dict) -> dict:
        """Enc's AES key sealed to each DO (``publics``: X25519 keys by DO index)."""
        return {i: self.agreement.seal(public, self._aes_key,
                                       hand_over_context(self.run_id, "aes-gcm", "Comp", f"DO{i}"))
                for i, public in publics.items()}

    def engine_address(self) -> tuple:
        """(Where the Controller's seat meets Comp's, Comp's seat's certificate) (mask=mpc)."""
        return self.seat.address, self.seat.certificate

    def join_engine(self, addresses: list, certificate: bytes | None, controller: bytes,
                    pair_box: bytes | None, dealer: bytes, dealer_box: bytes) -> None:
        """Open Comp's dealer key (sealed by DC, X25519 key ``dealer``) and link up with the
        Controller's seat (which connects at the same time), pinning its ``certificate``; the
        pair's key is agreed over the link, or in the seeded INSECURE mode opened from
        ``pair_box`` (sealed by the Controller, X25519 key ``controller``)."""
        pair_keys = None if pair_box is None else {(0, 1): self.agreement.open(
            controller, pair_box, hand_over_context(self.run_id, "engine-pair", "Controller",
                                                    "Comp"))}
        dealer_key = self.agreement.open(dealer, dealer_box, hand_over_context(
            self.run_id, "dealer", "DC", "Comp"))
        self.seat.connect(addresses, seat.pinned({0: certificate}), pair_keys, dealer_key)

    def close(self) -> None:
        if self.seat is not None:
            self.seat.close()

    def replay_key(self) -> bytes:
        """EVALUATION ONLY (never called by the protocol): Comp's own key, whose draws drive
        probability matching under mask=paper, for a plaintext reference that replays the run."""
        return self._own_key

    def select(self, t: int, l: int, messages) -> list:
        try:
            return self._select(t, l, messages)
        except Exception:
            if self.seat is not None:      # the Controller's seat, waiting on it, fails at once
                self.seat.close()
            raise

    def _select(self, t: int, l: int, messages) -> list:
        start = time.perf_counter()
        self.guard.advance(t, l)
        position = 0
        if messages is not None:
            kind = self.policy.kind(l)
            plain = self.channel.open_batch(messages, t, l, "score", self.arms)
            if self.seat is None:
                values = unpack_scores(plain)
                self.view.record(t, l, values)
                u = self.selection.uniform() if kind == MATCH else None
                position = select_arm(kind, values, u)
            else:
                shares = unpack_shares(plain)
                position = self.seat.run(select_on_shares, kind, shares, None)
                if self.view.enabled:          # its shares, then what the Controller sent it
                    self.view.record(t, l, shares.tolist() + self.seat.received())
        bits = self.channel.seal_many(bit_plaintexts(self.arms, position), t, l, "bit")
        self.seconds += time.perf_counter() - start
        return bits

    def report(self) -> tuple:
        return self.seconds, self.channel.encryptions + self.channel.decryptions

    def checkpoint_state(self) -> dict:
        """What Comp holds between steps: its own key, where its draws (probability matching's
        u, mask=paper) and its nonce stream stand, its AES-GCM counts, its replay guard and
        (mask=mpc) its seat's engine state.  Enc's key is the resumed run's (Comp makes it
        again at step 1: the same one in seeded mode)."""
        return {"key": self._own_key, "selection": self.selection.state(),
                "channel": self.channel.state(), "guard": self.guard.last,
                "seat": None if self.seat is None else self.seat.snapshot()}

    def restore_state(self, state: dict) -> None:
        """Go on from `checkpoint_state`'s ``state`` (once the seats have linked up again)."""
        self._own_key, self.selection = state["key"], Words.resumed(state["selection"])
        self.channel.restore(state["channel"])
        self.guard.last = tuple(state["guard"])
        if self.seat is not None:
            self.seat.restore(state["seat"])

    def recorded_view(self):
        """What Comp decrypted (`ppml.privacy.views`), if it recorded."""
        return self.view.table()


class DataCustomer:
    """DC (Fig. 6(d)): owns the Paillier key pair; decrypts the sum of rewards (step 7)."""

    name = "DC"

    def __init__(self, key_bits: int, insecure_key_bits_ok: bool, seed: int | None,
                 crypto: bool, record_views: bool = False):
        start = time.perf_counter()
        self.seed = seed
        self.view = ViewRecorder(record_views)
        self.public_key, self._private_key = (None, None) if not crypto else \
            generate_keypair(key_bits, insecure_key_bits_ok=insecure_key_bits_ok, seed=seed)
        self._dealer = None
        self.seconds = self.keygen_seconds = time.perf_counter() - start

    def deal(self, publics: dict, run_id: bytes) -> tuple:
        """mask=mpc: DC becomes the dealer of the Controller's and Comp's selection on shares.
        It makes its dealer keys and hands each party its own, sealed to the party's X25519 key
        (``publics``: {0: the Controller's, 1: Comp's}); returns (DC's X25519 key, {party:
        box}).  DC must not collude with either party (docs/samba.md)."""
        seed = self.seed
        self._dealer = Dealer({p: role_key(seed, "dealer", p) for p in (0, 1)},
                              role_key(seed, "dealer-secret"))
        agreement = KeyAgreement(role_key(seed, "x25519", "dc"))
        names = ("Controller", "Comp")
        return agreement.public, {p: agreement.seal(publics[p], self._dealer.party_keys[p],
                                                    hand_over_context(run_id, "dealer", "DC",
                                                                      names[p]))
                                  for p in (0, 1)}

    def corrections(self, kind: str, spec: tuple, batch: int, count: int) -> dict:
        """The Controller's pieces of one batch of dealer material (`ppml.mpc.dealer`)."""
        start = time.perf_counter()
        out = self._dealer.corrections(material(kind, spec), batch, count)
        self.seconds += time.perf_counter() - start
        return out

    def public(self):
        """Step 0 also hands DC's public key to the DOs (through the Controller)."""
        return self.public_key

    def recorded_view(self):
        """What DC decrypted, if it recorded (`ppml.privacy.views`)."""
        return self.view.table()

    def report(self) -> tuple:
        """(all of DC's seconds, those of its Paillier key generation)."""
        return self.seconds, self.keygen_seconds

    def cumulative_reward(self, total) -> int:
        start = time.perf_counter()
        value = total if self._private_key is None else \
            int(total.decrypt_integers(self._private_key)[0])
        self.view.record(0, 0, [value])                     # step 7: the only thing DC learns
        self.seconds += time.perf_counter() - start
        return value
