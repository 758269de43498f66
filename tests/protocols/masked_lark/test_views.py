"""What a helper sees (docs/masked-lark.md, "What each role learns"), attacked on its recorded
view: the same messages whatever the browsers' values, the determined openings equal, the
masked ones and its shares uncorrelated with the values."""

import functools

import numpy as np

from ppml.protocols.masked_lark import roles as lark_roles
from ppml.protocols.masked_lark.aggregation import PUBLIC_BYTES, aggregation_program
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.noise import noise_scale
from ppml.runtime import spmd

OPTIONS = MaskedLarkOptions(reports=600, k=3, queries=4, advertisers=3, d=2, bound=1000)


class _Valued(lark_roles.Browsers):
    """The log's browsers and keys with values of the test's choosing."""

    def __init__(self, values):
        super().__init__(OPTIONS, data_seed=0, seed=4)
        self.log.values[:] = values


class _Local:
    def __init__(self, obj):
        self.obj = obj

    def call(self, method, *args):
        return getattr(self.obj, method)(*args)


def _helper_view(values, helper: int = 1) -> tuple:
    browsers, adnet = _Valued(values), lark_roles.AdNetwork(OPTIONS.queries, OPTIONS.advertisers,
                                                            seed=4)
    browsers.start(adnet.catalog())
    outs = spmd.run(functools.partial(aggregation_program, options=OPTIONS,
                                      scale=noise_scale(OPTIONS), seed=4),
                    parties=2, seed=4, record_views=True,
                    inputs={0: {"browsers": _Local(browsers), "adnet": _Local(adnet)}})
    return outs[helper]["view"], outs[helper]["shares"]


def _payloads(view, tag):
    return [p for _, _, t, _, payload in view if t == tag
            for p in (payload if isinstance(payload, list) else [payload])]


def test_a_helpers_view_does_not_depend_on_the_values():
    rng = np.random.default_rng(0)
    low = np.zeros((600, 2), dtype=np.int64)
    high = rng.integers(0, 1001, size=(600, 2))
    one, two = _helper_view(low), _helper_view(high)
    # the same messages, from the same senders, in the same rounds, of the same shapes
    shape = [(r, op, tag, sender, [np.shape(p) for p in (payload if isinstance(payload, list)
                                                          else [payload])])
             for r, op, tag, sender, payload in one[0]]
    assert shape == [(r, op, tag, sender, [np.shape(p) for p in (payload if isinstance(
        payload, list) else [payload])]) for r, op, tag, sender, payload in two[0]]
    # what the protocol opens on purpose is the same: every report opened, none out of range
    for tag in ("opened", "range check"):
        for a, b in zip(_payloads(one[0], tag), _payloads(two[0], tag)):
            assert np.array_equal(a, b)
    (a,), (b,) = _payloads(one[0], "reports"), _payloads(two[0], "reports")
    assert np.array_equal(a[:, :PUBLIC_BYTES], b[:, :PUBLIC_BYTES])   # the public parts
    # the masked openings of the comparison and the helper's own shares: no trace of values
    for tag in ("b2a",) + tuple({t for _, _, t, _, _ in one[0] if t.startswith("beaver")}):
        for masked in _payloads(two[0], tag):
            flat = (np.asarray(masked, dtype=np.uint64).ravel() >> np.uint64(11)).astype(float)
            if flat.size >= high.size and flat.std() > 0:
                assert abs(np.corrcoef(flat[:high.size], high.ravel())[0, 1]) < 0.1
    shares = (two[1] >> np.uint64(11)).astype(float).ravel()
    assert abs(np.corrcoef(shares, high.ravel())[0, 1]) < 0.1
