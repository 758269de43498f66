"""The offline obfuscator pool: precomputed r^n mod n^2 (or DJN obfuscators), each handed out once.

r^n does not depend on the message, so it is computed offline, in batches (as Ray tasks pinned
to this node when ``workers > 1``); online, Enc(m) = (1 + m n) r^n and re-randomisation c r^n
are one multiplication each.  This makes the encryptions of LinUCB-DS (Ciucanu et al., Fig. 5:
d + 1 at initialisation, one per round, and the exploration terms E(omega ||x_i||) of step
(3).ii) cheap online.

* ``obfuscator``: ``"full"`` (default; r^n for r uniform in Z_n^*, hiding perfectly even from
  the key owner), ``"multibase"`` (`multibase.MultiBase`: within 2^-128 of r^n, statistically,
  even against the key owner; 3-4x cheaper each after 260 r^n made once) or ``"djn"``
  (`djn.ShortExponentBase`: cheaper still, under an extra assumption, and only about 80-bit
  secure against the key owner at 2048 bits);
* ``stream=True`` (with ``workers > 1``): pinned Ray generator tasks fill the pool while the
  caller works, and `take` computes a value in-process only when none has arrived;
* a value leaves the pool exactly once (`ObfuscatorPool.take`); a pool that runs dry refills or
  raises (``on_empty``) and cannot be pickled or copied.  Exponents come from ``secrets`` in the
  process that computes the batch: obfuscators are secrets of the encrypting party.

Design and measurements: docs/paillier.md, "The obfuscator pool (offline phase)" and
"Short-exponent obfuscators".
"""

from __future__ import annotations

from collections.abc import Callable

import gmpy2

from ppml.checks import check_int
from ppml.crypto.paillier.keys import PublicKey
from ppml.crypto.paillier.djn import (COMPLEMENT_BASES, ShortExponentBase, random_unit,
                                      short_exponent_obfuscators)
from ppml.crypto.paillier.multibase import (STATISTICAL_BITS, MultiBase, base_count,
                                            multibase_obfuscators)
from ppml.parallel import Streams, check_workers, run_batches, split

ON_EMPTY = ("refill", "raise")
OBFUSCATORS = ("full", "djn", "multibase")
STREAM_CHUNK = 16
"""Values per message of a streaming task: about 0.17 s of r^n at 2048 bits."""


class PoolExhaustedError(RuntimeError):
    """An obfuscator pool with ``on_empty="raise"`` had fewer values than requested."""


def fresh_obfuscators(public_key, count: int) -> list:
    """``count`` values r^n mod n^2 for fresh uniform r in Z_n^* from the OS CSPRNG."""
    n, nsquare = public_key.n, public_key.nsquare
    return [gmpy2.powmod(random_unit(n), n, nsquare) for _ in range(count)]


class ObfuscatorPool:
    """``size`` precomputed obfuscators for ``public_key``, computed when the pool is made, of
    kind ``obfuscator`` (``"full"`` r^n, ``"multibase"`` or ``"djn"``; see the module's
    docstring).

    ``on_empty="refill"`` (default) computes the shortfall plus a fresh ``size`` when a request
    exceeds what is left (counted in ``refills``); ``"raise"`` raises `PoolExhaustedError`.
    ``made(k)``, if given, is told that k more of the values asked for so far are ready: after
    every `STREAM_CHUNK` values per worker computed in place, or, streamed, as the tasks' values
    arrive (each `take` collects all that have); a progress bar's count, nothing secret.
    """

    def __init__(self, public_key, size: int = 1024, *, on_empty: str = "refill",
                 workers: int = 1, obfuscator: str = "full", stream: bool = False,
                 made: Callable[[int], None] | None = None):
        size = check_int("size", size, 0, what="an integer")
        if not isinstance(public_key, PublicKey):
            raise TypeError(f"public_key must be a Paillier PublicKey, got "
                            f"{type(public_key).__name__}")
        if on_empty not in ON_EMPTY:
            raise ValueError(f"on_empty must be one of {ON_EMPTY}, got {on_empty!r}")
        if obfuscator not in OBFUSCATORS:
            raise ValueError(f"obfuscator must be one of {OBFUSCATORS}, got {obfuscator!r}")
        self.public_key = public_key
        self.size = size
        self.on_empty = on_empty
        self.workers = check_workers(workers)
        self.obfuscator = obfuscator
        self.stream = stream and self.workers > 1
        self.refills = 0
        self._made = made
        self._asked = self._ready = 0     # values asked for by fill(), and made of those
        self._values: list = []
        self._owed = 0          # values promised by fill() and not yet handed out or arrived
        self._streams = Streams()
        self._maker = (fresh_obfuscators, public_key)
        if obfuscator == "djn":
            complement = self._compute(fresh_obfuscators, public_key, COMPLEMENT_BASES)
            self._maker = (short_exponent_obfuscators, ShortExponentBase(public_key, complement))
        elif obfuscator == "multibase":
            bases = self._compute(fresh_obfuscators, public_key, base_count(STATISTICAL_BITS))
            self._maker = (multibase_obfuscators, MultiBase(public_key, bases))
        self.fill(size)

    def _compute(self, make, source, count: int) -> list:
        """``count`` values ``make(source, c)``, in ``workers`` batches of c values each."""
        batches = [(source, len(chunk)) for chunk in split(range(count), self.workers)]
        return [value for batch in run_batches(make, batches, self.workers) for value in batch]

    def fill(self, count: int) -> None:
        """Precompute ``count`` more obfuscators (offline), in ``workers`` batches; streamed,
        start tasks that make up to ``count`` of them in the background."""
        self._asked += count
        if not self.stream:
            step = max(count if self._made is None else STREAM_CHUNK * self.workers, 1)
            for begin in range(0, count, step):
                self._add(self._compute(*self._maker, min(step, count - begin)))
            return
        self._owed += count
        parts = split(range(count), self.workers - 1)
        for part in parts:
            self._streams.start(*self._maker, len(part), STREAM_CHUNK)

    def take(self, count: int) -> list:
        """Remove and return ``count`` obfuscators, each never handed out again."""
        count = check_int("count", count, 0, what="an integer")
        if count > len(self):
            if self.on_empty == "raise":
                raise PoolExhaustedError(
                    f"obfuscator pool has {len(self)} precomputed r^n left but {count} are "
                    f"needed (size={self.size}); fill() it offline or use on_empty='refill'")
            self.refills += 1
            self.fill(count - len(self) + self.size)
        while arrived := self._streams.arrived():     # streamed: all that has arrived,
            self._add(arrived)
        while len(self._values) < count:              # then, if short, what comes or one made
            self._add(self._streams.arrived() or self._compute(*self._maker, 1))
        self._owed -= min(count, self._owed)
        start = len(self._values) - count
        out = self._values[start:]
        del self._values[start:]
        return out

    def _add(self, values: list) -> None:
        """``values`` join the pool; `made` hears how many more of those asked for are ready (a
        value made in place when none had arrived counts once: the total never passes what
        was asked)."""
        self._values.extend(values)
        ready = min(self._ready + len(values), self._asked)
        if self._made is not None and ready > self._ready:
            self._made(ready - self._ready)
        self._ready = ready

    def close(self) -> None:
        """Stop the streaming tasks and drop every value not handed out."""
        self._streams.close()
        self._owed, self._values = 0, []

    def __len__(self) -> int:
        """Obfuscators this pool can still hand out without a refill (streamed: arrived or not
        made yet)."""
        return max(len(self._values), self._owed)

    def __reduce__(self):
        raise TypeError("an ObfuscatorPool cannot be pickled or copied: a copy would hand out the "
                        "same r^n twice")
