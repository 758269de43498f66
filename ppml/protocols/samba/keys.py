"""Where Samba's keys come from: each role makes its own, and the evaluation's replay keys.

Each participant makes its own keys inside itself (`role_key`): the Controller its permutation
key and seed_eps, Comp its own key and Enc's AES key, each DO its own key, DO 0 seed_alpha, and
every DO and Comp an X25519 key pair.  The shared ones travel sealed through the Controller
(`ppml.crypto.agreement`): Enc's key from Comp to each DO, seed_alpha from DO 0 to the others;
seed_eps, which the Controller shares with the DOs (section 4.1.2), by method call.  No key is
an actor-creation argument, and nothing derives every key from one root.

With an integer ``seed`` each role derives its keys from the public seed instead of its OS
CSPRNG: the INSECURE seeded mode, for reproducible experiments.  `SambaKeys` is the evaluation
side only: the keys a plaintext reference needs to replay a run (Theorem 2's "same seeds"),
derived from the seed, or collected from the roles after a fresh run (``collect_keys``).  The
protocol's roles never use it.  Nothing is drawn from a non-cryptographic generator (the
authors draw seeds with randint(10, 1000), which a brute force from Comp's view recovers).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ppml.crypto.rng import Stream, derive_key, fresh_key, seeded_key

RUN_ID_BYTES = 16


def _root(seed: int) -> bytes:
    return seeded_key(seed, "samba")


def role_key(seed: int | None, *label) -> bytes:
    """A role's own key named ``label``: fresh from the OS CSPRNG, or derived from an integer
    ``seed`` (INSECURE seeded mode; the caller has warned)."""
    return fresh_key() if seed is None else derive_key(_root(seed), *label)


def make_run_id(seed: int | None) -> bytes:
    """The public run identifier the Controller makes; bound into every AES-GCM associated
    data and every sealed hand-over."""
    return os.urandom(RUN_ID_BYTES) if seed is None else derive_key(_root(seed),
                                                                    "run-id")[:RUN_ID_BYTES]


@dataclass(frozen=True)
class SambaKeys:
    """EVALUATION ONLY: the stream keys a plaintext reference needs to replay a run (the
    Controller's permutations, seed_eps, Comp's draws, each DO's draws).  Made `for_seed` in the
    seeded mode, or collected from the roles after a run (`run_samba` with ``collect_keys``)."""

    controller: bytes
    explore: bytes
    comp: bytes
    owners: dict = field(default_factory=dict)
    """DO index -> its own key (a seeded instance derives any index on demand)."""
    seed: int | None = None

    @classmethod
    def for_seed(cls, seed: int) -> "SambaKeys":
        """The keys every role derives from ``seed`` (INSECURE seeded mode)."""
        return cls(role_key(seed, "controller"), role_key(seed, "explore"),
                   role_key(seed, "comp"), seed=seed)

    def controller_key(self) -> bytes:
        return self.controller

    def explore_key(self) -> bytes:
        return self.explore

    def comp_key(self) -> bytes:
        return self.comp

    def owner_key(self, i: int) -> bytes:
        if i in self.owners:
            return self.owners[i]
        if self.seed is None:
            raise KeyError(f"no key of DO {i} was collected")
        return role_key(self.seed, "owner", i)


def streams(key: bytes) -> tuple[Stream, Stream]:
    """(draws, nonces): a participant's two independent streams from its key."""
    return Stream(derive_key(key, "draws")), Stream(derive_key(key, "nonces"))
