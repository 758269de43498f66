"""The ad network's public plan of a training: batches, the model for the classes, the noise's
scale, and the plan as the literals the helpers receive."""

from fractions import Fraction

import pytest

from ppml.data.conversions import load_conversions
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.plan import Plan, schedule, training_plan


def test_batches_cover_every_example_once_an_epoch():
    batches = schedule(10, 4, 2, seed=0)
    assert [len(b) for b in batches] == [4, 4, 2] * 2
    assert sorted(sum(batches[:3], [])) == list(range(10))


def test_the_plan_fits_the_model_to_the_classes_and_crosses_as_literals():
    digits = load_conversions("digits")
    plan = training_plan(MaskedLarkOptions(task="train", epochs=1), digits, 0, 20)
    assert (plan.model, plan.classes, plan.params) == ("softmax", 10, 10 * 65)
    assert isinstance(plan.scale, Fraction) and plan.scale > 2**20       # fixed-point units
    assert Plan.from_wire(plan.wire()) == plan
    assert training_plan(MaskedLarkOptions(task="train", private=False), digits, 0,
                         20).scale is None
    with pytest.raises(ValueError, match="masked_lark.model=logistic needs two classes"):
        training_plan(MaskedLarkOptions(task="train", model="logistic"), digits, 0, 20)


def test_more_privacy_means_more_noise():
    data = load_conversions("breast_cancer")
    scales = [training_plan(MaskedLarkOptions(task="train", epsilon=e), data, 0, 20).scale
              for e in (0.5, 1.0, 4.0)]
    assert scales[0] > scales[1] > scales[2]
