"""A role's recorded view: nothing unless enabled, one row per value, exact integers kept."""

from ppml.privacy.views import VIEW_SCHEMA, ViewRecorder


def test_a_disabled_recorder_keeps_nothing():
    view = ViewRecorder(False)
    view.record(1, 1, [0.5, 0.25])
    assert not view.enabled and view.table().num_rows == 0
    assert view.table().schema == VIEW_SCHEMA


def test_rows_carry_step_iteration_position_and_the_exact_value():
    view = ViewRecorder(True)
    view.record(7, 2, [0.5, 2**100 + 1])
    rows = view.table().to_pylist()
    assert [(r["t"], r["l"], r["position"]) for r in rows] == [(7, 2, 0), (7, 2, 1)]
    assert rows[0]["value"] == 0.5 and int(rows[1]["exact"]) == 2**100 + 1


def test_an_integer_beyond_float64_keeps_its_exact_text():
    view = ViewRecorder(True)
    view.record(4, 6, [2**2100, -2**2100])                 # a 2048-bit Paillier plaintext
    rows = view.table().to_pylist()
    assert [r["value"] for r in rows] == [float("inf"), float("-inf")]
    assert int(rows[0]["exact"]) == 2**2100
