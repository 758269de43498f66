"""Placement: which custom resources pin the party actors and the dealer."""

import pytest

from ppml.runtime.placement import DEALER_UNITS, PARTY_UNITS, resources


def test_no_placement_asks_for_no_custom_resources():
    assert resources(None, 3) == {}


def test_true_pins_each_party_and_the_dealer_to_its_own_node_type():
    assert resources(True, 2) == {0: {"party_0": PARTY_UNITS}, 1: {"party_1": PARTY_UNITS},
                                  "dealer": {"dealer": DEALER_UNITS}}


def test_a_dict_names_the_resource_of_each_pinned_actor():
    assert resources({0: "gpu_node", "dealer": "dealer"}, 2) == {
        0: {"gpu_node": PARTY_UNITS}, "dealer": {"dealer": DEALER_UNITS}}


@pytest.mark.parametrize("placement, match", [
    ({3: "party_3"}, "placement keys must be party indices 0..2"),
    ({True: "party_1"}, "placement keys"),
    ({0: ""}, r"placement\[0\] must be a resource name"),
    ("party_0", "placement must be None, True or a dict"),
])
def test_bad_placement_is_refused(placement, match):
    with pytest.raises(ValueError, match=match):
        resources(placement, 3)
