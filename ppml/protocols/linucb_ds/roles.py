"""The participants of LinUCB-DS outside the cloud (DO, DC) and the plumbing between the four
(Ciucanu et al., section 3, "Participants of LinUCB-DS", Fig. 3).

* Every participant is an ordinary object, played as a role (`ppml.runtime.roles`): in this
  process or as a Ray actor, from the same class.
* A `Link` is how one party talks to another: it calls a method of the receiving role and
  writes the message and its reply into the sender's `Transcript` under the step number of
  Fig. 3, so tests can check that the run exchanged exactly the paper's messages.
* A `Clock` adds up the seconds a party is busy, per step kind, and `Counts` the Paillier
  operations it performs (compared with Fig. 5 in the experiment).
* Every participant keeps its own checkpoints (`ppml.runtime.checkpoints.Checkpointed`): its
  counts and busy seconds, and what else it alone holds (DC and Comp their private keys, as
  their integers; P, which drives the steps, its ciphertexts and coins:
  `protocol.Principal.checkpoint_state`).

DO owns theta (and the environment's noise); DC owns the budget and the key its result is
encrypted under.  Neither takes part in the rounds.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from contextlib import contextmanager

import numpy as np

from ppml.crypto.paillier import EncryptedArray, ObfuscatorPool, generate_keypair
from ppml.crypto.paillier.encoding import from_residues
from ppml.crypto.paillier.keys import keypair_from_factors
from ppml.runtime.checkpoints import Checkpointed

class Transcript:
    """The messages a party sent and the replies it got: (step, sender, receiver, what)."""

    def __init__(self):
        self.messages: list[tuple] = []

    def add(self, step: str, sender: str, receiver: str, what: str) -> None:
        self.messages.append((step, sender, receiver, what))


class Link:
    """``sender``'s channel to the party ``receiver`` (a role)."""

    def __init__(self, sender: str, receiver: str, party, transcript: Transcript):
        self.sender, self.receiver = sender, receiver
        self.party, self.transcript = party, transcript

    def send(self, step: str, what: str, method: str, *args, reply: tuple | None = None):
        """Deliver a message (``method(*args)`` at the receiver); ``reply`` = (step, what) logs
        the receiver's answer as a message back."""
        self.transcript.add(step, self.sender, self.receiver, what)
        out = self.party.call(method, *args)
        if reply is not None:
            self.transcript.add(reply[0], self.receiver, self.sender, reply[1])
        return out

    def fetch(self, step: str, what: str, method: str, *args):
        """Receive a message the receiver sends unprompted in the paper (``method(*args)`` there,
        logged as receiver -> sender)."""
        self.transcript.add(step, self.receiver, self.sender, what)
        return self.party.call(method, *args)


class Clock:
    """Busy seconds per step kind."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def __call__(self, kind: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[kind] += time.perf_counter() - start


class Participant(Checkpointed):
    """What every participant has: a name, a clock, operation counts and a transcript.  Its
    checkpoint holds its counts and busy seconds; the transcript lists the messages of this
    process only (a resumed run's begins at its resume)."""

    name = "party"

    def __init__(self):
        self.clock = Clock()
        self.counts: Counter = Counter()
        self.transcript = Transcript()

    def stats(self) -> dict:
        return {"name": self.name, "seconds": dict(self.clock.seconds),
                "counts": dict(self.counts), "messages": list(self.transcript.messages)}

    def checkpoint_state(self) -> dict:
        return {"counts": dict(self.counts), "seconds": dict(self.clock.seconds)}

    def restore_state(self, state: dict) -> None:
        self.counts = Counter(state["counts"])
        self.clock.seconds.clear()
        self.clock.seconds.update(state["seconds"])


def keypair(key_bits: int, insecure_key_bits_ok: bool, seed: int | None, role: str):
    """A party's Paillier key pair: OS CSPRNG, or derived from ``seed`` and the role (INSECURE)."""
    seed = None if seed is None else int.from_bytes(f"{seed}/{role}".encode(), "big")
    return generate_keypair(key_bits, insecure_key_bits_ok=insecure_key_bits_ok, seed=seed)


class DataOwner(Participant):
    """DO: owns theta, the arms and the environment's noise; step 1 outsources them to P with
    theta encrypted under Comp's key (theta* = E_Comp(theta), d fresh encryptions).  DO reads
    no stream during the rounds (the noise of every round goes to P at step 1), so its
    checkpoint holds its counts only; a resumed P asks for step 1 again."""

    name = "DO"

    def load(self, theta, arms, noise, theta_norm_bound: float) -> None:
        """DO's data, handed over by a method call (a Ray actor-creation argument would be kept
        in Ray's control store, possibly on another node)."""
        self._theta = np.asarray(theta, dtype=np.float64)
        self.arms = np.asarray(arms, dtype=np.float64)
        self.noise = np.asarray(noise, dtype=np.float64)
        if not np.linalg.norm(self._theta) <= theta_norm_bound:
            raise ValueError(f"theta_norm_bound must be >= ||theta||_2 = "
                             f"{np.linalg.norm(self._theta):.4g}, got {theta_norm_bound}")
        self.theta_norm_bound = float(theta_norm_bound)

    def outsource(self, public_key, encoding) -> dict:
        """Step 1: the arms, theta* (each coordinate bounded by the public S >= ||theta||_2), the
        noise eta that pull* adds, and the public norm bound."""
        with self.clock("1"):
            pool = ObfuscatorPool(public_key, len(self._theta))
            bound = self.theta_norm_bound
            theta = EncryptedArray.encrypt(self._theta, pool, encoding, bounds=(-bound, bound))
            self.counts["encryptions"] += len(self._theta)
            self.counts["fresh_obfuscators"] += len(self._theta)
        return {"arms": self.arms, "theta": theta, "noise": self.noise,
                "theta_norm_bound": self.theta_norm_bound}


class DataClient(Participant):
    """DC: sends the budget N (step 1) and learns the cumulative reward s, encrypted under its
    own key (step 7).  Its modulus has 2 more bits than Comp's, so that v - rand with v, rand in
    Z_(n_Comp) decrypts without wrapping and s = (v - rand) mod n_Comp exactly.  Its checkpoint
    holds its key pair (`PrivateKey.factors`): a resumed P goes on under the public key it had."""

    name = "DC"

    def __init__(self, budget: int, key_bits: int, insecure_key_bits_ok: bool = False,
                 seed: int | None = None):
        super().__init__()
        self.budget_ = budget
        self.public_key, self._private_key = keypair(key_bits + 2, insecure_key_bits_ok, seed,
                                                     "DC")
        self.sum_int: int | None = None

    def budget(self) -> int:
        return self.budget_

    def key(self):
        return self.public_key

    def receive_sum(self, ciphertext, comp_modulus: int) -> None:
        """Step 7: decrypt E_DC(v - rand) and reduce mod n_Comp to the signed sum (k = 2)."""
        with self.clock("7"):
            value = from_residues(self._private_key.decrypt_raw([ciphertext]),
                                  self.public_key.n)[0]
            self.counts["decryptions"] += 1
            self.sum_int = from_residues([value % comp_modulus], comp_modulus)[0]

    def result(self) -> int | None:
        """s at scale exponent 2 (an integer), once step 7 has happened."""
        return self.sum_int

    def checkpoint_state(self) -> dict:
        return {**super().checkpoint_state(), "key": self._private_key.factors()}

    def restore_state(self, state: dict) -> None:
        super().restore_state(state)
        self.public_key, self._private_key = keypair_from_factors(state["key"])
