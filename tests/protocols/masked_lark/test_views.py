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
from ppml.runtime.roles import LocalRole

OPTIONS = MaskedLarkOptions(reports=600, k=3, queries=4, advertisers=3, d=2, bound=1000)


class _Valued(lark_roles.Browsers):
    """The log's browsers and keys with values of the test's choosing."""

    def __init__(self, values):
        super().__init__(OPTIONS, data_seed=0, seed=4)
        self.log.values[:] = values


def _helper_view(values, helper: int = 1) -> tuple:
    browsers, adnet = _Valued(values), lark_roles.AdNetwork(OPTIONS.queries, OPTIONS.advertisers,
                                                            seed=4)
    browsers.start(adnet.catalog())
    outs = spmd.run(functools.partial(aggregation_program, options=OPTIONS,
                                      scale=noise_scale(OPTIONS), seed=4),
                    parties=2, seed=4, record_views=True,
                    inputs={0: {"browsers": LocalRole(browsers, "browsers", 60.0),
                                "adnet": LocalRole(adnet, "ad network", 60.0)}})
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


def _training_view(monkeypatch, labels):
    """Helper 1's outputs of a seeded training on breast cancer whose browsers hold
    ``labels``."""
    from ppml.protocols.masked_lark import training

    class Holders(lark_roles.LabelHolders):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.labels = labels

    monkeypatch.setattr(training, "LabelHolders", Holders)
    captured, real = {}, training.spmd.run

    def run(*args, **kwargs):                  # keep the helpers' outputs for the test
        captured["outs"] = real(*args, **kwargs)
        return captured["outs"]
    monkeypatch.setattr(training.spmd, "run", run)
    options = MaskedLarkOptions(task="train", epochs=1, batch_size=128)
    training.run_training(options, "breast_cancer", 2, data_seed=0, seed=5, record_views=True)
    return captured["outs"][1]


def test_a_helpers_training_view_depends_on_the_labels_only_through_the_model(monkeypatch):
    from ppml.data.conversions import load_conversions
    labels = load_conversions("breast_cancer").y_train
    flipped = labels.copy()
    flipped[::3] ^= 1                                    # a third of the labels differ
    one, two = _training_view(monkeypatch, labels), _training_view(monkeypatch, flipped)
    (f1,), (f2,) = _payloads(one["view"], "features"), _payloads(two["view"], "features")
    assert np.array_equal(f1, f2)
    assert _payloads(one["view"], "plan") == _payloads(two["view"], "plan")
    (a,), (b,) = _payloads(one["view"], "reports"), _payloads(two["view"], "reports")
    assert np.array_equal(a[:, :24], b[:, :24])          # the labels' public parts
    models = [[p for _, _, tag, _, p in out["view"] if tag == "model"] for out in (one, two)]
    assert len(models[0]) == len(models[1]) == 4         # one a step: the model, the DP
    assert models[0][0] != models[1][0]                  # release, depends on the labels
    shares = (two["shares"][:, 1] >> np.uint64(11)).astype(float)   # its share of [y = 1]
    assert abs(np.corrcoef(shares, flipped)[0, 1]) < 0.15
