"""The helpers' reduce as a program on the engine (`aggregation.aggregation_program`), run
without roles: tampered reports, the range check at the ring's edges and in chunks, one report
per browser and key, k-anonymity, and ballot stuffing."""

import functools

import numpy as np
import pytest

from ppml.mpc.context import EngineConfig
from ppml.mpc.local import in_process
from ppml.protocols.masked_lark import aggregation
from ppml.protocols.masked_lark import roles as lark_roles
from ppml.protocols.masked_lark.aggregation import (ID_BYTES, PUBLIC_BYTES, TOKEN_BYTES,
                                                     aggregation_program)
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.noise import noise_scale
from ppml.protocols.masked_lark.reference import aggregate
from ppml.runtime import spmd
from ppml.runtime.roles import LocalRole

SMALL = MaskedLarkOptions(reports=400, k=4, queries=6, advertisers=4)


def _role(obj):
    return LocalRole(obj, obj.name, 60.0)


def _program(options, browsers, adnet, seed: int, helpers: int = 2) -> list:
    return spmd.run(functools.partial(aggregation_program, options=options,
                                      scale=noise_scale(options), seed=seed),
                    parties=helpers, seed=seed,
                    inputs={0: {"browsers": _role(browsers), "adnet": _role(adnet)}})


def _shares(values: np.ndarray, seed: int = 0) -> np.ndarray:
    """Two helpers' additive shares of ``values`` (uint64), stacked as the program holds
    them."""
    r = np.random.default_rng(seed).integers(0, 2**64, values.shape, dtype=np.uint64)
    return np.stack([r, values.astype(np.uint64) - r])


def test_the_range_check_is_exact_at_the_edges_of_the_ring():
    ctx = in_process(EngineConfig(2, seed=3), None)
    edges = np.array([0, 5, 6, -1, 2**62, 2**63 - 1, -(2**63), 3], dtype=np.int64)
    values = np.stack([edges, np.full(8, 2)], axis=1)             # d = 2
    ok = aggregation._range_check(ctx, _shares(values.view(np.uint64)), 5)
    assert ok.tolist() == [True, True, False, False, False, False, False, True]


def test_the_range_check_in_chunks_decides_as_at_once(monkeypatch):
    values = np.random.default_rng(1).integers(-3, 9, (300, 3))
    whole = aggregation._range_check(in_process(EngineConfig(2, seed=3), None),
                                     _shares(values), 6)
    monkeypatch.setattr(aggregation, "RANGE_CHUNK", 64)
    chunked = aggregation._range_check(in_process(EngineConfig(2, seed=3), None),
                                       _shares(values), 6)
    assert chunked.tolist() == whole.tolist() == np.all((values >= 0) & (values <= 6),
                                                        axis=1).tolist()


def _public(tokens: list, keys: list) -> np.ndarray:
    rows = np.zeros((len(tokens), PUBLIC_BYTES), dtype=np.uint8)
    rows[:, ID_BYTES] = tokens
    rows[:, ID_BYTES + TOKEN_BYTES] = keys
    return rows


def test_a_token_counts_once_per_key_and_rare_keys_are_dropped():
    public = _public([1, 1, 2, 3, 4, 5, 5], [7, 7, 7, 7, 8, 8, 9])
    valid = np.array([True] * 6 + [False])
    group, first, users, counted = aggregation._groups(public, valid, k=2)
    assert users == [3, 2] and counted == 5 and first.tolist() == [0, 4]
    assert group.tolist() == [0, -1, 0, 0, 1, 1, -1]     # a repeat and an invalid report
    group, first, users, _ = aggregation._groups(public, valid, k=3)
    assert users == [3] and group.tolist() == [0, -1, 0, 0, -1, -1, -1]


class _Tampering(lark_roles.Browsers):
    """Browsers whose reports an attacker alters on the way: one share's ciphertext, one
    report's key, one report's token."""

    def reports(self, public_keys):
        made = super().reports(public_keys)
        made.sealed[1][3, 40] ^= 1
        made.public[5, 32:] = made.public[6, 32:]  # moved under another key
        made.public[7, 16] ^= 1                    # another browser's token
        return made


def test_tampered_reports_are_dropped_by_every_helper():
    options = SMALL
    adnet = lark_roles.AdNetwork(options.queries, options.advertisers, seed=2)
    browsers = _Tampering(options, 0, seed=2)
    browsers.start(adnet.catalog())
    outs = _program(options, browsers, adnet, seed=2)
    assert outs[0]["opened"] == outs[1]["opened"] == 400 - 3
    browsers_, keys, values = browsers.truth()
    keep = np.ones(400, dtype=bool)
    keep[[3, 5, 7]] = False
    expected = aggregate(browsers_[keep], [k for k, kept in zip(keys, keep) if kept],
                         values[keep], options.bound, options.k)
    released = {(q, a): sums for q, a, sums in outs[0]["released"]}
    noise = np.add(*(np.asarray(out["noise"]).reshape(-1, options.d) for out in outs))
    assert sorted(released) == sorted(key for key, agg in expected.items() if not agg.suppressed)
    for row, (key, sums) in enumerate(released.items()):
        assert list(np.asarray(sums) - noise[row]) == expected[key].sum


class _Stuffed(lark_roles.Browsers):
    """The browsers and ``sybils`` browsers of the ad network that report zeros under the key
    ``victim``."""

    def __init__(self, options, data_seed, victim, sybils):
        super().__init__(options, data_seed, seed=6)
        self.victim, self.sybils = victim, sybils

    def records(self):
        browsers, keys, values = super().records()
        return (np.concatenate([browsers, len(browsers) + np.arange(self.sybils)]),
                np.concatenate([keys, np.full(self.sybils, self.victim, dtype=np.int64)]),
                np.concatenate([values, np.zeros((self.sybils, self.options.d), np.int64)]))

    def truth(self):
        browsers, keys, values = self.records()
        return browsers, [self.log.pair(key) for key in keys], values


def test_ballot_stuffing_passes_k_anonymity_but_not_the_noise():
    """The ad network makes k - 1 browsers of its own report zeros under the key of one real
    browser: the key passes the threshold, and its release is that browser's value plus the
    helpers' noise alone, at the scale the published epsilon sets."""
    options = MaskedLarkOptions(reports=300, k=6, queries=30, advertisers=10, d=2)
    counts = np.bincount(lark_roles.Browsers(options, 4).log.keys, minlength=300)
    victim = int(np.flatnonzero(counts == 1)[0])           # a key one browser reports
    adnet = lark_roles.AdNetwork(options.queries, options.advertisers, seed=6)
    released = {}
    for sybils in (0, options.k - 1):
        browsers = _Stuffed(options, 4, victim, sybils)
        browsers.start(adnet.catalog())
        outs = _program(options, browsers, adnet, seed=6)
        released[sybils] = {(q, a): (row, sums)
                            for row, (q, a, sums) in enumerate(outs[0]["released"])}
    pair = browsers.log.pair(victim)
    assert pair not in released[0]                     # k-anonymity hides the browser alone,
    row, sums = released[options.k - 1][pair]          # but not against k - 1 sybils:
    value = browsers.log.values[browsers.log.keys == victim][0]
    noise = np.add(*(np.asarray(out["noise"]).reshape(-1, 2) for out in outs))[row]
    assert list(np.asarray(sums) - value) == list(noise)   # what is left to hide it: the noise
    assert float(noise_scale(options)) > 5 * options.bound  # epsilon = 1: sigma about 8 B
