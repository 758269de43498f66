"""A helper's HPKE keys: one key pair per worker of the helper, each made in the process that
opens with it (`ppml.parallel.Resident.own`: this process and ``workers - 1`` Ray actors pinned
to the helper's own node), so a helper's opens spread over its workers, and over more nodes
with more workers, while no private key moves, not even to the helper's own workers.

The browsers seal report i's share for helper j to j's key number `reports.key_index` (the
first byte of the report's random id, modulo j's number of keys), so every party picks it
from the report's public parts alone.  The floor of a helper's work stays one HPKE open per
report; the workers share it out.
"""

from __future__ import annotations

import numpy as np

from ppml.crypto import hpke
from ppml.crypto.aead import MessageRejected
from ppml.parallel import Resident
from ppml.protocols.masked_lark.reports import info, key_index


class HelperKeys:
    """Helper ``helper``'s ``workers`` key pairs; `public` lists their public keys (raw
    bytes), in key order."""

    def __init__(self, helper: int, workers: int = 1):
        self.helper = helper
        self._ring = Resident.own(hpke.HpkeKey, workers)
        self.public = self._ring.each(_public, [()] * workers)

    def open(self, sealed: np.ndarray, public: np.ndarray) -> tuple:
        """Every row of ``sealed`` (n, width) uint8 opened by the key its report names, under
        its report's ``public`` parts (n, *) and this helper's number: (plaintexts (n, width -
        `hpke.OVERHEAD_BYTES`) uint8, opened (n,) bool); a row that fails to open (altered,
        moved to another report or helper) is zeros and False."""
        keys = len(self.public)
        which = key_index(public, keys)
        rows = [np.flatnonzero(which == k) for k in range(keys)]
        parts = self._ring.each(open_rows, [(sealed[r], public[r], self.helper) for r in rows])
        plain = np.zeros((len(sealed), sealed.shape[1] - hpke.OVERHEAD_BYTES), dtype=np.uint8)
        opened = np.zeros(len(sealed), dtype=bool)
        for r, (text, ok) in zip(rows, parts):
            plain[r], opened[r] = text, ok
        return plain, opened

    def close(self) -> None:
        """Stop the workers (their keys go with their processes)."""
        self._ring.close()


def _public(key: hpke.HpkeKey) -> bytes:
    return key.public


def open_rows(key: hpke.HpkeKey, sealed: np.ndarray, public: np.ndarray, helper: int) -> tuple:
    """One worker's opens (`HelperKeys.open`, on the worker that holds ``key``): the rows
    sliced from one bytes object each, the plaintexts joined once."""
    n, width = sealed.shape
    size = width - hpke.OVERHEAD_BYTES
    boxes, parts = sealed.tobytes(), public.tobytes()
    step = public.shape[1] if n else 0
    prefix = info(helper, b"")
    texts, opened = [], np.zeros(n, dtype=bool)
    for i in range(n):
        try:
            texts.append(key.open(boxes[i * width:(i + 1) * width],
                                  prefix + parts[i * step:(i + 1) * step]))
            opened[i] = True
        except MessageRejected:
            texts.append(bytes(size))
    plain = np.frombuffer(b"".join(texts), dtype=np.uint8).reshape(n, size)
    return plain, opened
