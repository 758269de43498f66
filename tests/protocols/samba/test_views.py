"""What Comp and the Controller see, tried as they would attack it (mask=paper).

Comp's recorded view holds, per (t, l), the masked scores alpha_t x_i in the order sigma_t.  The
paper's mask shows Comp exactly every ratio of scores (docs/samba.md, "What Comp learns"): the
tests assert that leak, and that what the mask does hide stays hidden, the scores' scale.  The
Controller receives AES-GCM ciphertexts only.
"""

import numpy as np

from ppml.data.bernoulli_items import BernoulliArms
from ppml.protocols.samba import roles as samba_roles
from ppml.protocols.samba.config import SambaConfig
from ppml.protocols.samba.policies import AlgorithmSpec
from ppml.protocols.samba.protocol import run_samba

ARMS, HORIZON = 6, 1100


def recorded_run(monkeypatch, algorithm="ucb"):
    """A run with views recorded, and the true scores each (t, l) masked, in DO order."""
    true = {}
    masked_scores = samba_roles.masked_scores

    def spy(kind, xs, owners):
        true.setdefault(len(true), list(xs))
        return masked_scores(kind, xs, owners)

    monkeypatch.setattr(samba_roles, "masked_scores", spy)
    setup = SambaConfig(HORIZON, AlgorithmSpec(algorithm), key_bits=512,
                        insecure_key_bits_ok=True, seed=5, record_views=True, mask="paper")
    arms = BernoulliArms("toy", np.linspace(0.2, 0.8, ARMS), np.arange(1, ARMS + 1), seed=3)
    out = run_samba(arms, setup)
    return out, list(true.values())


def per_step(table) -> list:
    rows = table.to_pylist()
    steps = {}
    for r in rows:
        steps.setdefault((r["t"], r["l"]), []).append(r["value"])
    return [steps[k] for k in sorted(steps)]


def spearman(a, b) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def test_comp_learns_every_ratio_of_scores_under_the_paper_mask(monkeypatch):
    out, true = recorded_run(monkeypatch)
    seen = per_step(out.views["Comp"])
    assert len(seen) == len(true) == HORIZON - ARMS
    for masked, scores in zip(seen, true):          # the ratio attack: exact, step by step
        assert np.allclose(sorted(np.array(masked) / max(masked)),
                           sorted(np.array(scores) / max(scores)), rtol=1e-15, atol=0)


def test_comp_does_not_learn_the_scale_and_the_controller_sees_ciphertexts(monkeypatch):
    out, true = recorded_run(monkeypatch)
    comp_best = [max(m) for m in per_step(out.views["Comp"])]
    true_best = [max(s) for s in true]
    assert len(comp_best) >= 1000 and abs(spearman(comp_best, true_best)) < 0.1
    controller = per_step(out.views["Controller"])
    first_do = [c[0] for c in controller]                    # DO 0's sealed score, each step
    assert abs(spearman(first_do, [s[0] for s in true])) < 0.1
