"""Bulk Paillier work of one party: dot tables split into chunks, the key owner's decryptor, and
a threshold key share's (`PartialDecryptor`).

LinUCB-DS spends its time in three steps (Ciucanu et al., section 5, Fig. 6): theta_hat*
(d encrypted dot products), the list of B_i* (K dot products) and Comp's K decryptions.  The
authors parallelise them with ``multiprocessing`` and ship the secret key to the worker
processes every round.  Here the chunks run as Ray tasks pinned to the owner's node
(`ppml.parallel.run_batches`), and a private key is loaded once into pinned actors
(`ppml.parallel.Resident`), never as a task or actor-creation argument: docs/paillier.md.
"""

from __future__ import annotations

from ppml.crypto.paillier import ops
from ppml.crypto.paillier.threshold import DecryptionShare
from ppml.parallel import Resident, run_batches, split


def dot_table(public_key, encrypted_rows, plain_rows, workers: int = 1) -> list:
    """`ops.dot_table` split over ``workers`` chunks of the longer of the two row lists."""
    if len(encrypted_rows) >= len(plain_rows):
        parts = run_batches(ops.dot_table, [(public_key, chunk, plain_rows)
                                            for chunk in split(encrypted_rows, workers)], workers)
        return [row for part in parts for row in part]
    parts = run_batches(ops.dot_table, [(public_key, encrypted_rows, chunk)
                                        for chunk in split(plain_rows, workers)], workers)
    return [[c for part in parts for c in part[row]] for row in range(len(encrypted_rows))]


class Decryptor:
    """Bulk CRT decryption by the key owner, in-process or split over this process and
    ``workers - 1`` actors (`Resident`).

    Make it once, inside the key owner's process (its party actor); the actors sit on that
    process's node.  Pick ``workers`` no larger than the cores the owner may use.
    ``decrypt_raw`` has the signature of `keys.PrivateKey.decrypt_raw`, so either can decrypt an
    `EncryptedArray`.  A Decryptor cannot be pickled: the key stays with its owner.
    """

    def __init__(self, private_key, workers: int = 1):
        self.public_key = private_key.public_key
        self._holder = Resident(private_key, workers)
        self.workers = workers

    def decrypt_raw(self, ciphertexts) -> list:
        """Residues in [0, n) of the ciphertexts, in order (see `keys.PrivateKey.decrypt_raw`)."""
        chunks = split(ciphertexts, self.workers)
        parts = self._holder.map("decrypt_raw", [(chunk,) for chunk in chunks])
        return [m for part in parts for m in part]

    def close(self) -> None:
        """Stop the actors (their copies of the key go with their processes)."""
        self._holder.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        raise TypeError("a Decryptor holds a private key and cannot be pickled; make one inside "
                        "the key owner's process")


class PartialDecryptor:
    """Bulk decryption shares of one agent's threshold key share (`threshold.KeyShare`), as
    `Decryptor` does for a whole key: in-process, or split over this process and
    ``workers - 1`` pinned actors, the share loaded into each once.  It cannot be pickled."""

    def __init__(self, key_share, workers: int = 1):
        self.public_key, self.index, self.parties = \
            key_share.public_key, key_share.index, key_share.parties
        self._holder = Resident(key_share, workers)
        self.workers = workers

    def partial_decrypt(self, ciphertexts) -> DecryptionShare:
        """This agent's `threshold.DecryptionShare` of ``ciphertexts``."""
        chunks = split(ciphertexts, self.workers)
        parts = self._holder.map("partial_decrypt", [(chunk,) for chunk in chunks])
        return DecryptionShare(self.index, self.parties, [v for part in parts
                                                          for v in part.values])

    def close(self) -> None:
        self._holder.close()

    def __reduce__(self):
        raise TypeError("a PartialDecryptor holds a key share and cannot be pickled")
