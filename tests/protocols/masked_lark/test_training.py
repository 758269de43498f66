"""Masked-gradient training: exact gradients at every step, the plaintext model without noise,
bad inputs named, a tampered label share, a training resumed from its checkpoints."""

import dataclasses

import pytest

from ppml.crypto.aead import MessageRejected
from ppml.protocols.masked_lark import roles as lark_roles
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.training import run_training
from ppml.runtime.checkpoints import CheckpointPlan


@pytest.mark.parametrize("helpers,dataset", [(2, "breast_cancer"), (3, "breast_cancer"),
                                             (2, "digits")])
def test_the_helpers_shares_add_up_to_the_fixed_point_gradient_at_every_step(helpers, dataset):
    options = MaskedLarkOptions(task="train", epochs=2, batch_size=128, epsilon=2.0)
    result = run_training(options, dataset, helpers, data_seed=1, seed=3)
    steps = result.summary["steps"]
    assert steps == result.summary["gradient_equal_plaintext_steps"] > 2
    assert all(r["gradient_equal_plaintext"] for r in result.rows if r["method"] == "masked")
    assert result.summary["epsilon_total"] > 2.0          # two epochs compose
    assert result.summary["model"] == ("softmax" if dataset == "digits" else "logistic")


def test_without_noise_the_masked_model_is_the_plaintext_model():
    options = MaskedLarkOptions(task="train", epochs=2, batch_size=64, private=False)
    rows = run_training(options, "breast_cancer", 2, data_seed=0, seed=1).rows
    by_epoch = {}
    for row in rows:
        if row["auc"] is not None:
            by_epoch.setdefault(row["epoch"], {})[row["method"]] = row["auc"]
    assert len(by_epoch) == 2
    assert all(abs(e["masked"] - e["plaintext"]) < 1e-3 for e in by_epoch.values())


class _Tampering(lark_roles.LabelHolders):
    def label_shares(self, public_keys):
        made = super().label_shares(public_keys)
        made.sealed[1][4, -1] ^= 1
        return made


def test_a_tampered_label_share_stops_the_training_naming_the_example(monkeypatch):
    monkeypatch.setattr(lark_roles, "LabelHolders", _Tampering)
    from ppml.protocols.masked_lark import training
    monkeypatch.setattr(training, "LabelHolders", _Tampering)
    with pytest.raises(MessageRejected, match="example 4's label share failed to open"):
        run_training(MaskedLarkOptions(task="train", epochs=1), "breast_cancer", 2, 0, seed=1)


def test_bad_training_options_are_named():
    with pytest.raises(ValueError, match="masked_lark.model must be one of logistic, softmax"):
        MaskedLarkOptions(model="svm")
    with pytest.raises(ValueError, match="masked_lark.clip must be a positive number"):
        MaskedLarkOptions(clip=float("inf"))
    with pytest.raises(ValueError, match="model=logistic needs two classes"):
        run_training(MaskedLarkOptions(task="train", model="logistic"), "digits", 2, 0)


class _LostAtStep(lark_roles.ModelOwner):
    """The ad network, lost (as a dead party would be) when the helpers release step 7."""

    def step(self, sealed, step):
        if step == 7:
            raise ConnectionError("the ad network went away at step 7")
        return super().step(sealed, step)


class _Uploaded(lark_roles.LabelHolders):
    def label_shares(self, public_keys):
        raise AssertionError("a resumed training asked the browsers for their labels again")


@pytest.mark.parametrize("seed", [5, None])
def test_a_training_resumes_from_its_checkpoints(tmp_path, monkeypatch, seed):
    """Cut at step 7 (of 8) with checkpoints every 3 steps, resumed from step 6: the rows of
    the uninterrupted training in seeded mode (unseeded: other noise, still exact gradients),
    step 7 (index 6) replayed, each party's files its own (the browsers keep nothing)."""
    from ppml.protocols.masked_lark import training
    options = MaskedLarkOptions(task="train", epochs=2, batch_size=128, epsilon=2.0)
    plan = CheckpointPlan(str(tmp_path), 3, tuple(training.helper_names(2)), "s")

    def train(checkpoints=None):
        return run_training(options, "breast_cancer", 2, data_seed=1, seed=seed,
                            checkpoints=checkpoints)
    monkeypatch.setattr(training, "ModelOwner", _LostAtStep)
    with pytest.raises(ConnectionError, match="step 7"):
        train(plan)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adnet", "helper-0", "helper-1"]
    assert plan.store("adnet").steps() == plan.store("helper-1").steps() == [3, 6]
    monkeypatch.setattr(training, "ModelOwner", lark_roles.ModelOwner)
    monkeypatch.setattr(training, "LabelHolders", _Uploaded)      # the helpers kept theirs
    resumed = train(dataclasses.replace(plan, resume=True))
    monkeypatch.undo()
    assert resumed.replays == [(6, 7)]
    assert resumed.summary["gradient_equal_plaintext_steps"] == resumed.summary["steps"] == 8
    if seed is not None:
        assert resumed.rows == train().rows
