"""The participants of Masked LARK's reporting other than the helpers: the ad network and the
browsers (slides "General View: Differentially private Map-Reduce" and "Example: Counting
conversions").

* `AdNetwork`: makes its opaque aggregation keys Enc_AdNet(q, a), a deterministic
  authenticated encryption (AES-SIV, RFC 5297) under its own key, so equal (q, a) give equal
  keys that the helpers cannot read and it alone can; it hands them to the browsers with its
  ads (`catalog`).  It gets the helpers' releases sealed to its own HPKE key and adds them up:
  the only aggregate anyone sees, after the noise (`release`).
* `Browsers`: the population of browsers of one time window, simulated in bulk (a Ray task per
  batch with ``workers`` > 1): each browser's record of the synthetic log, its pseudonymous
  token, its report (`reports.make_reports`) and, as an option, decoy reports of zero under
  other keys (the notes' fake self-cancelling records).

Keys are made inside the role that uses them, from the OS CSPRNG (or, with ``seed``, INSECURE
keys derived from it); nothing secret is an argument of a role's creation.
"""

from __future__ import annotations

import time

import numpy as np
from cryptography.hazmat.primitives.ciphers.aead import AESSIV

from ppml.crypto import hpke
from ppml.crypto.rng import Stream, derive_key, fresh_key, seeded_key
from ppml.data.conversion_log import conversion_log
from ppml.data.conversions import load_conversions
from ppml.parallel import run_batches, split
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.plan import training_plan
from ppml.protocols.masked_lark.reports import TOKEN_BYTES, Reports, make_reports
from ppml.runtime.checkpoints import Checkpointed

PAIR_BYTES = 8
"""A (query, advertiser) pair as two big-endian uint32 before encryption."""
KEY_BYTES = 16 + PAIR_BYTES
"""An opaque aggregation key: AES-SIV's 16-byte synthetic IV and the encrypted pair."""
BATCH = 5_000
"""Reports made per batch (a Ray task's share with ``workers`` > 1)."""


def _root(seed: int | None, role: str) -> bytes:
    return fresh_key() if seed is None else seeded_key(seed, "masked-lark", role)


class AdNetwork:
    """The ad network: its AES-SIV key for the opaque keys and its HPKE key for the releases."""

    name = "ad network"

    def __init__(self, queries: int, advertisers: int, seed: int | None = None):
        root = _root(seed, "ad network")
        self._siv = AESSIV(derive_key(root, "siv", 0) + derive_key(root, "siv", 1))
        self._hpke = hpke.HpkeKey()
        self.queries, self.advertisers = queries, advertisers

    def catalog(self) -> np.ndarray:
        """The opaque key of every (query, advertiser), query-major: (queries x advertisers,
        `KEY_BYTES`) uint8, for the browsers."""
        pairs = [q.to_bytes(4, "big") + a.to_bytes(4, "big")
                 for q in range(self.queries) for a in range(self.advertisers)]
        return np.frombuffer(b"".join(self._siv.encrypt(p, None) for p in pairs),
                             dtype=np.uint8).reshape(len(pairs), KEY_BYTES)

    def public_key(self) -> bytes:
        """The HPKE public key the helpers seal their releases to."""
        return self._hpke.public

    def pair(self, key: bytes) -> tuple:
        """The (query, advertiser) of an opaque key."""
        plain = self._siv.decrypt(key, None)
        return int.from_bytes(plain[:4], "big"), int.from_bytes(plain[4:], "big")

    def release(self, sealed: list, d: int) -> list:
        """The helpers' releases (each sealed to this role by its helper: the keys kept and
        the helper's noisy shares of their sums): the released rows [query, advertiser, sums].
        The helpers must have kept the same keys."""
        opened = [np.frombuffer(self._hpke.open(bytes(box), release_info(j),
                                                f"helper {j}'s release"), dtype=np.uint8)
                  for j, box in enumerate(sealed)]
        keys, sums = zip(*(unpack_release(data, d) for data in opened))
        if any(not np.array_equal(keys[0], other) for other in keys[1:]):
            raise ValueError("the helpers released different keys")
        total = np.sum(np.stack(sums), axis=0, dtype=np.uint64).view(np.int64)
        return [[*self.pair(keys[0][i].tobytes()), total[i].tolist()]
                for i in range(len(keys[0]))]


def release_info(helper: int, step: int = 0) -> bytes:
    """The HPKE context of helper ``helper``'s release (of training step ``step``)."""
    return b"ppml masked-lark release v1|" + helper.to_bytes(2, "big") + step.to_bytes(8, "big")


def pack_release(keys: np.ndarray, sums: np.ndarray) -> bytes:
    """A helper's release as bytes: the kept keys (m, `KEY_BYTES`) then its shares (m, d)."""
    return keys.tobytes() + sums.astype(np.uint64).tobytes()


def unpack_release(data: np.ndarray, d: int) -> tuple:
    """The inverse of `pack_release`."""
    m = len(data) // (KEY_BYTES + 8 * d)
    if m * (KEY_BYTES + 8 * d) != len(data):
        raise ValueError(f"a release of {len(data)} bytes is not whole rows of "
                         f"{KEY_BYTES} + 8 d bytes (d = {d})")
    keys = data[:m * KEY_BYTES].reshape(m, KEY_BYTES)
    return keys, data[m * KEY_BYTES:].view(np.uint64).reshape(m, d)


class Browsers:
    """The browsers of one time window: the synthetic log from the public ``data_seed``; each
    browser's token, decoys and shares from its own randomness (the OS CSPRNG, or ``seed``:
    INSECURE)."""

    name = "browsers"

    def __init__(self, options: MaskedLarkOptions, data_seed: int, seed: int | None = None,
                 workers: int = 1):
        self.options, self.seed, self.workers = options, seed, workers
        self.data_seed = data_seed
        self.log = conversion_log(options.reports, options.d, options.bound, options.queries,
                                  options.advertisers, options.zipf, options.click_rate,
                                  options.conversion_rate, data_seed)
        self._own, self._records = Stream(_root(seed, "browsers")), None
        self.catalog, self._seconds = None, 0.0

    def start(self, catalog: np.ndarray) -> None:
        """The ad network's opaque keys, which the browsers got with its ads."""
        catalog = np.asarray(catalog, dtype=np.uint8)
        if catalog.shape != (self.log.catalog, KEY_BYTES):
            raise ValueError(f"the catalog must be ({self.log.catalog}, {KEY_BYTES}) opaque "
                             f"keys, got {catalog.shape}")
        self.catalog = catalog

    def records(self) -> tuple:
        """Every report's browser, catalog key and value (made at the first call,
        `_make_records`, and the same afterwards)."""
        if self._records is None:
            self._records = self._make_records()
        return self._records

    def _make_records(self) -> tuple:
        """Each browser's own record, with ``polluters`` browsers out of range (every
        coordinate B + 1: which ones is the experiment's public choice, from ``data_seed``),
        and ``fake_records`` decoys of zero per browser, each under a key other than the
        browser's others, drawn as popular as the log's keys and put among the real reports
        in a random order; the decoys' keys and the order are the browsers' own randomness, so
        no helper can tell a decoy from its browser's real report."""
        options, log = self.options, self.log
        values = log.values.copy()
        chosen = np.random.default_rng([self.data_seed, 0xFA4E]).choice(
            len(values), options.polluters, replace=False)
        values[chosen] = options.bound + 1
        browsers = np.arange(len(values))
        if not options.fake_records:
            return browsers, log.keys, values
        decoys = _decoy_keys(log.keys, options.fake_records, log.catalog,
                             self._own.child("decoys"))
        order = self._own.child("order").permutation(len(browsers) + decoys.size)
        return (np.concatenate([browsers, np.repeat(browsers, options.fake_records)])[order],
                np.concatenate([log.keys, decoys.ravel()])[order],
                np.concatenate([values, np.zeros((decoys.size, options.d), np.int64)])[order])

    def reports(self, public_keys: list) -> Reports:
        """Every browser's report sealed to the helpers' ``public_keys``, made in batches of
        `BATCH` (Ray tasks with ``workers`` > 1)."""
        if self.catalog is None:
            raise RuntimeError("the browsers have no opaque keys: call start(catalog) first")
        browsers, keys, values = self.records()
        tokens = np.frombuffer(self._own.child("tokens").bytes(
            TOKEN_BYTES * (int(browsers.max()) + 1)), dtype=np.uint8)      # one per browser
        tokens = tokens.reshape(-1, TOKEN_BYTES)[browsers]
        seen = np.concatenate([tokens, self.catalog[keys]], axis=1)
        batches = [(values[b], seen[b], list(public_keys), self.seed, k)
                   for k, b in enumerate(split(range(len(values)), -(-len(values) // BATCH)))]
        start = time.perf_counter()
        made = Reports.joined(run_batches(make_reports, batches, self.workers))
        self._seconds += time.perf_counter() - start
        return made

    def seconds(self) -> float:
        """The seconds spent making reports (their shares and sealing)."""
        return self._seconds

    def truth(self) -> tuple:
        """EVALUATION ONLY: every report's browser, (query, advertiser) and value, as sent
        (`records`), for the plaintext reference."""
        browsers, keys, values = self.records()
        return browsers, [self.log.pair(key) for key in keys], values


def _decoy_keys(keys: np.ndarray, count: int, catalog: int, stream: Stream) -> np.ndarray:
    """(browsers, ``count``) decoy keys: for each browser ``count`` distinct keys other than
    its own ``keys[i]``, drawn from the empirical distribution of ``keys`` with ``stream``
    (indices modulo the number of keys: a bias below 2^-40, which only tilts which popular key
    a decoy takes)."""
    if count > catalog - 1:
        raise ValueError(f"masked_lark.fake_records must be below the catalog's {catalog} keys "
                         f"(queries x advertisers), got {count}")
    out = np.empty((len(keys), count), dtype=np.int64)
    candidates = keys[stream.uint64((len(keys), 4 * count + 4)) % np.uint64(len(keys))]
    for b, own in enumerate(keys.tolist()):
        chosen = list(dict.fromkeys(k for k in candidates[b].tolist() if k != own))[:count]
        while len(chosen) < count:                          # rare: a browser of a rare draw
            k = int(stream.uint64() % np.uint64(catalog))
            if k != own and k not in chosen:
                chosen.append(k)
        out[b] = chosen
    return out


class LabelHolders:
    """The browsers of a conversion model's training examples: each holds its example's label
    alone (slide "Our solution - Masked aggregation") and sends each helper its share of the
    label's one-hot vector (the slide's alpha_{i,k}, beta_{i,k}), sealed to that helper, once
    for the whole training."""

    name = "browsers"

    def __init__(self, dataset: str, data_dir, data_seed: int, seed: int | None = None,
                 workers: int = 1):
        data = load_conversions(dataset, data_dir, data_seed)   # each browser its own label
        self.labels, self.classes = data.y_train, data.classes
        self.seed, self.workers = seed, workers

    def label_shares(self, public_keys: list) -> Reports:
        """Every example's one-hot label, shared and sealed to the helpers' ``public_keys``;
        the public part of example i's report is its number i (8 bytes)."""
        one_hot = np.eye(self.classes, dtype=np.int64)[self.labels]
        numbers = np.arange(len(one_hot), dtype=">u8").view(np.uint8).reshape(-1, 8)
        parts = split(range(len(one_hot)), -(-len(one_hot) // BATCH))
        return Reports.joined(run_batches(make_reports, [
            (one_hot[b], numbers[b], list(public_keys), self.seed, k)
            for k, b in enumerate(parts)], self.workers))


class ModelOwner(Checkpointed):
    """The ad network training its conversion model: it knows the examples' features (it
    provides them to the helpers), fixes the public plan (`plan.training_plan`: the model, the
    batches, the noise's scale), and takes each SGD step on the gradient the helpers release
    to it alone (their sealed, noisy shares added up).  Its checkpoint (`checkpoint_state`)
    is its model and history; not its HPKE key: a resumed run's helpers seal to its new one."""

    name = "ad network"

    def __init__(self, options: MaskedLarkOptions, dataset: str, data_dir, data_seed: int,
                 precision_bits: int):
        data = load_conversions(dataset, data_dir, data_seed)
        self.features = data.x_train                  # the labels are the browsers' alone
        self.plan = training_plan(options, data, data_seed, precision_bits)
        self.theta = np.zeros(self.plan.params)
        self.learning_rate, self.precision_bits = options.learning_rate, precision_bits
        self._hpke = hpke.HpkeKey()
        self.thetas, self.released = [], []

    def public_key(self) -> bytes:
        return self._hpke.public

    def setup(self) -> tuple:
        """What the helpers get from the ad network: the features, the plan (`Plan.wire`) and
        the model."""
        return self.features, self.plan.wire(), self.theta

    def step(self, sealed: list, step: int) -> np.ndarray:
        """One SGD step on the released gradient sum (each helper's noisy share, sealed to
        this role): theta -= learning_rate * sum / batch size.  Returns the new model."""
        shares = [np.frombuffer(self._hpke.open(bytes(box), release_info(j, step),
                                                f"helper {j}'s gradient at step {step}"),
                                dtype=np.uint64) for j, box in enumerate(sealed)]
        total = np.sum(np.stack(shares), axis=0, dtype=np.uint64)
        self.thetas.append(self.theta.copy())
        self.released.append(total)
        gradient = total.view(np.int64).astype(np.float64) / 2.0 ** self.precision_bits
        self.theta = self.theta - self.learning_rate * gradient / len(self.plan.batches[step])
        return self.theta

    def checkpoint_state(self) -> dict:
        """The model after the last step and the history (`history`): what the ad network
        alone holds; the features and the plan it makes again from the data."""
        return {"theta": self.theta, "thetas": self.thetas, "released": self.released}

    def restore_state(self, state: dict) -> None:
        self.theta, self.thetas, self.released = (state["theta"], list(state["thetas"]),
                                                  list(state["released"]))

    def history(self) -> tuple:
        """The model before each step and after the last, and each step's released gradient
        (ring elements)."""
        return self.thetas + [self.theta], self.released
