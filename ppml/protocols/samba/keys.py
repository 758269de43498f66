"""Every secret and random stream of a Samba run, derived from one root key per run.

In a deployment each participant draws its own keys from its OS CSPRNG; the DOs agree on the
mask key among themselves, and the AES key of ``Enc`` is agreed by Comp and the DOs (section 4),
neither ever reaching the Controller.  Here one root key per run (``os.urandom``, or the
INSECURE seeded key when ``seed`` is an int) is split into independent sub-keys (keyed BLAKE2b,
`ppml.crypto.rng.derive_key`) so that the plaintext reference (ppml/protocols/samba/reference.py)
can be driven by the very streams the participants used, which is what Theorem 2's "same seeds"
asks.  Only the evaluation harness holds the root; each participant receives only its own
sub-keys.  Nothing is drawn from a non-cryptographic generator (the authors draw seeds with
randint(10, 1000), which a brute force from Comp's view recovers).
"""

from __future__ import annotations

from dataclasses import dataclass

from ppml.crypto.rng import Stream, derive_key, fresh_key, seeded_key, warn_insecure


@dataclass(frozen=True)
class SambaKeys:
    root: bytes

    @classmethod
    def for_seed(cls, seed: int | None) -> "SambaKeys":
        if seed is None:
            return cls(fresh_key())
        warn_insecure(seed)
        return cls(seeded_key(seed, "samba"))

    @property
    def run_id(self) -> bytes:
        """A public 16-byte run identifier bound into every AES-GCM associated data."""
        return derive_key(self.root, "run-id")[:16]

    def aes_key(self) -> bytes:
        """Enc's AES-256 key, shared by Comp and the DOs (never the Controller)."""
        return derive_key(self.root, "aes-gcm")

    def mask_key(self) -> bytes:
        """seed_alpha: the per-step masks, shared by the DOs only (not Comp, not Controller)."""
        return derive_key(self.root, "masks")

    def explore_key(self) -> bytes:
        """seed_eps: epsilon-greedy's explore draws, shared by the Controller and the DOs."""
        return derive_key(self.root, "explore")

    def owner_key(self, i: int) -> bytes:
        """DO_i's private key: its own draws (Thompson sampling) and its nonces."""
        return derive_key(self.root, "owner", i)

    def controller_key(self) -> bytes:
        """The Controller's private key: the permutations sigma_t."""
        return derive_key(self.root, "controller")

    def comp_key(self) -> bytes:
        """Comp's private key: probability-matching draws u and its nonces."""
        return derive_key(self.root, "comp")


def streams(key: bytes) -> tuple[Stream, Stream]:
    """(draws, nonces): a participant's two independent streams from its key."""
    return Stream(derive_key(key, "draws")), Stream(derive_key(key, "nonces"))
