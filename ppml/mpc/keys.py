"""The keys a party holds: one per pair of parties (PRSS), and its dealer key.

In the secure default every key comes from ``os.urandom``; with ``seed`` set every key is derived
from the public seed (INSECURE, reproducible), identically in every runtime, which is what makes
the local and the Ray runtime bit-identical for the same seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ppml.crypto.rng import Stream, fresh_key, seeded_key


def pair(i: int, j: int) -> tuple:
    return (min(i, j), max(i, j))


def _key(seed, *label) -> bytes:
    return fresh_key() if seed is None else seeded_key(seed, *label)


@dataclass
class PartyKeys:
    """Keys of the parties held in one process, and the streams they key."""

    pairs: dict = field(default_factory=dict)    # (i, j) with i < j -> key
    dealer: dict = field(default_factory=dict)   # party -> key shared with the dealer

    def __post_init__(self):
        self._pair_streams = {ij: Stream(k) for ij, k in self.pairs.items()}

    def pair_stream(self, i: int, j: int) -> Stream:
        return self._pair_streams[pair(i, j)]

    def positions(self, rank: int) -> list:
        """[(i, j, bytes read)] for the pair streams ``rank`` takes part in: what a checkpoint
        keeps of them (the keys themselves are the run's, made again when it resumes)."""
        return [(i, j, stream.position) for (i, j), stream in sorted(self._pair_streams.items())
                if rank in (i, j)]

    def seek(self, positions: list) -> None:
        """Put the pair streams back where :meth:`positions` found them."""
        for i, j, position in positions:
            self._pair_streams[(i, j)] = Stream(self.pairs[(i, j)], position)


def pair_key(seed, i: int, j: int) -> bytes:
    return _key(seed, "pair", *pair(i, j))


def dealer_party_key(seed, party: int) -> bytes:
    return _key(seed, "dealer", party)


def dealer_secret_key(seed) -> bytes:
    return _key(seed, "dealer-secret")


def agreement_key(seed, holder: str) -> bytes:
    """The private X25519 key of ``holder`` ("party 3", "dealer"), for sealed hand-overs of
    the keys above (`ppml.crypto.agreement`)."""
    return _key(seed, "x25519", holder)


def local_keys(parties: int, seed, clients: int = 0) -> tuple:
    """Keys for every compute party and client in one process, and the dealer's secret key.

    Pairs cover every two ranks; only compute parties have dealer keys.
    """
    ranks = parties + clients
    keys = PartyKeys(
        pairs={(i, j): pair_key(seed, i, j) for i in range(ranks) for j in range(i + 1, ranks)},
        dealer={p: dealer_party_key(seed, p) for p in range(parties)})
    return keys, dealer_secret_key(seed)


def sealed_context(purpose: str, sender: str, receiver: int) -> bytes:
    """What a key sealed to party ``receiver`` is bound to: its purpose and both ends."""
    return f"ppml-spmd/{purpose}/{sender}->party {receiver}".encode()
