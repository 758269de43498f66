"""Masked LARK's reporting end to end against its plaintext reference: polluters, decoys,
several helpers, the seeded mode and fresh runs."""

import pytest

from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.protocol import run_aggregation

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
