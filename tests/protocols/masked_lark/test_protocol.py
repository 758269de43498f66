"""Masked LARK's reporting against its plaintext reference, in one process and with Ray actors;
tampered reports, polluters, decoys and ballot stuffing."""

import functools

import numpy as np
import pytest

from ppml.protocols.masked_lark import roles as lark_roles
from ppml.protocols.masked_lark.aggregation import aggregation_program
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.noise import noise_scale
from ppml.protocols.masked_lark.protocol import run_aggregation
from ppml.protocols.masked_lark.reference import aggregate
from ppml.runtime import spmd

SMALL = MaskedLarkOptions(reports=400, k=4, queries=6, advertisers=4)


def _released(result) -> dict:
    return {row["key"]: row["released_sum"] for row in result.rows if not row["suppressed"]}


@pytest.mark.parametrize("helpers", [2, 3])
def test_the_release_is_the_references_plus_the_helpers_noise(helpers):
    options = MaskedLarkOptions(reports=400, k=4, queries=6, advertisers=4, polluters=7,
                                fake_records=2, d=3, bound=5)
    result = run_aggregation(options, helpers, data_seed=1, seed=5)
    s = result.summary
    assert s["release_equal_reference"]
    assert s["reports_sent"] == 400 * 3 and s["reports_opened"] == 1200
    assert s["reports_in_range"] == 1200 - 7 == s["reports_counted"]
    assert s["keys_released"] + s["keys_suppressed"] == len(result.rows)
    assert all((row["released_sum"] is None) == row["suppressed"] for row in result.rows)
    assert all(row["users"] >= 4 for row in result.rows if not row["suppressed"])


def test_a_seeded_run_repeats_itself_and_fresh_runs_differ_only_in_noise():
    one, two = (run_aggregation(SMALL, 2, data_seed=0, seed=9) for _ in range(2))
    assert one.rows == two.rows
    fresh = run_aggregation(SMALL, 2, data_seed=0)
    assert fresh.summary["release_equal_reference"]
    assert [r["true_sum"] for r in fresh.rows] == [r["true_sum"] for r in one.rows]


def test_decoys_change_no_released_sum():
    plain = run_aggregation(SMALL, 2, data_seed=3, seed=1)
    decoyed = run_aggregation(MaskedLarkOptions(reports=400, k=4, queries=6, advertisers=4,
                                                fake_records=3), 2, data_seed=3, seed=1)
    assert decoyed.summary["release_equal_reference"]
    truth = {row["key"]: row["true_sum"] for row in plain.rows}
    for row in decoyed.rows:                       # the decoys are zeros: no sum moves
        assert row["true_sum"] == truth.get(row["key"], [0] * SMALL.d)
    assert decoyed.summary["reports_counted"] == 4 * 400


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
    outs = spmd.run(functools.partial(aggregation_program, options=options,
                                      scale=noise_scale(options), seed=2),
                    parties=2, seed=2, inputs={0: {"browsers": _Local(browsers),
                                                   "adnet": _Local(adnet)}})
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


class _Local:
    """A role object as `roles.call` sees it, for a program run without roles."""

    def __init__(self, obj):
        self.obj = obj

    def call(self, method, *args):
        return getattr(self.obj, method)(*args)


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
        outs = spmd.run(functools.partial(aggregation_program, options=options,
                                          scale=noise_scale(options), seed=6),
                        parties=2, seed=6, inputs={0: {"browsers": _Local(browsers),
                                                       "adnet": _Local(adnet)}})
        released[sybils] = {(q, a): (row, sums)
                            for row, (q, a, sums) in enumerate(outs[0]["released"])}
    pair = browsers.log.pair(victim)
    assert pair not in released[0]                     # k-anonymity hides the browser alone,
    row, sums = released[options.k - 1][pair]          # but not against k - 1 sybils:
    value = browsers.log.values[browsers.log.keys == victim][0]
    noise = np.add(*(np.asarray(out["noise"]).reshape(-1, 2) for out in outs))[row]
    assert list(np.asarray(sums) - value) == list(noise)   # what is left to hide it: the noise
    assert float(noise_scale(options)) > 5 * options.bound  # epsilon = 1: sigma about 8 B
