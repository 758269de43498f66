"""Browsers' reports (slide "Example: Counting conversions"): each browser splits its value
vector v_i into additive shares modulo 2^64, one per helper, and seals each share to its helper
with HPKE (RFC 9180), as the IETF's DAP reports seal their input shares.

A report's public parts are its random ``id`` and what the helpers must see in the clear: for
a conversion report the browser's ``token`` (a random pseudonym for this time window: the
helpers count distinct users by it, and it links nothing across windows) and the opaque
aggregation ``key`` the ad network gave the browser; for a label, the example's number.  They
are the HPKE ``info`` of every share, so a share moved to another report, or under another key,
fails to open.
Arrays, not objects: a batch of n reports is a few (n, width) uint8 arrays, which the runtimes
move as they move shares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppml.crypto import hpke
from ppml.crypto.rng import Stream, fresh_key, seeded_key

ID_BYTES = TOKEN_BYTES = 16
INFO = b"ppml masked-lark report v1"


@dataclass
class Reports:
    """A batch of reports: their ``public`` parts (n, width) uint8, each row the report's id
    then what the helpers see of it, and ``sealed[j]`` (n, 8 d + HPKE overhead) uint8, helper
    j's sealed shares."""

    public: np.ndarray
    sealed: list

    @staticmethod
    def joined(batches: list) -> "Reports":
        """The batches one after the other."""
        return Reports(np.concatenate([b.public for b in batches]),
                       [np.concatenate([b.sealed[j] for b in batches])
                        for j in range(len(batches[0].sealed))])


def info(helper: int, public: bytes) -> bytes:
    """The HPKE context of helper ``helper``'s share of the report with ``public`` parts."""
    return b"|".join((INFO, helper.to_bytes(2, "big"), public))


def split(values: np.ndarray, helpers: int, stream: Stream) -> np.ndarray:
    """Additive shares modulo 2^64 of the (n, d) int64 ``values``: (helpers, n, d) uint64,
    the first helpers - 1 uniform from ``stream``, the last the difference."""
    shares = stream.uint64((helpers - 1,) + values.shape)
    last = values.astype(np.uint64) - shares.sum(axis=0, dtype=np.uint64)
    return np.concatenate([shares, last[None]])


def key_index(public: np.ndarray, keys: int) -> np.ndarray:
    """Which of a helper's ``keys`` HPKE keys each report's share is sealed to
    (`helper_keys.HelperKeys`): the first byte of the report's random id, modulo ``keys``."""
    return public[:, 0].astype(np.int64) % keys


def make_reports(values: np.ndarray, seen: np.ndarray, public_keys: list, seed: int | None,
                 batch: int) -> Reports:
    """Reports of ``values`` (n, d) with what the helpers see of them, ``seen`` (n, width)
    uint8, their shares sealed to the helpers' ``public_keys`` (per helper, its keys' raw
    bytes; each report's share to the key `key_index` names).  The shares and ids come from
    the OS CSPRNG, or (``seed``: INSECURE) from a stream derived from the seed and the
    ``batch`` number."""
    stream = Stream(fresh_key() if seed is None else seeded_key(seed, "masked-lark", batch))
    n = len(values)
    ids = np.frombuffer(stream.bytes(ID_BYTES * n), dtype=np.uint8).reshape(n, ID_BYTES)
    public = np.concatenate([ids, np.asarray(seen, dtype=np.uint8).reshape(n, -1)], axis=1)
    shares = split(np.asarray(values, dtype=np.int64), len(public_keys), stream)
    sealed = []
    for j, raws in enumerate(public_keys):
        recipients = [hpke.public_key(raw) for raw in raws]
        which = key_index(public, len(recipients)).tolist()
        rows = [hpke.seal(recipients[which[i]], shares[j, i].tobytes(),
                          info(j, public[i].tobytes())) for i in range(n)]
        sealed.append(np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(n, -1))
    return Reports(public, sealed)
