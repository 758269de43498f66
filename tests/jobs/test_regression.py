"""Every experiment still takes the decisions and rewards it recorded (jobs/regression.py).

Every case runs in this process.  The local cases all run; of the Ray cases, one per family
(`RAY_IN_SUITE`) runs on the session's Ray instance: each other Ray case records a run whose
local twin is checked here and whose Ray run a protocol test proves equal to the local one
(tests/protocols/<family>/test_protocol_ray.py, tests/protocols/pprl/test_shares.py), and
starting a private Ray instance per case cost some 20 s each.  ``python -m jobs.regression
check`` still runs every case, each Ray case on a private instance as a user's run starts it.
"""

import json

import pytest

from jobs import regression

RAY_IN_SUITE = ("private_cb_ray", "linucb_ds_ray", "samba_mpc_ray", "pprl_time_shares_ray",
                "masked_lark_aggregate_ray")
"""The Ray cases of every test session: one real-actor run per family."""


def on_ray(case) -> bool:
    return "runtime=ray" in case.overrides


def param(case):
    """``case`` as a test case: a Ray case is slow and uses the session's Ray instance."""
    return pytest.param(case, id=case.name,
                        marks=[pytest.mark.slow, pytest.mark.ray] if on_ray(case) else [])


CASES = [param(case) for case in regression.CASES
         if not on_ray(case) or case.name in RAY_IN_SUITE]


def test_the_ray_cases_of_the_suite_are_recorded_ray_cases():
    assert {case.name for case in regression.CASES if on_ray(case)} >= set(RAY_IN_SUITE)


@pytest.mark.parametrize("case", CASES)
def test_a_case_takes_its_recorded_decisions(case, tmp_path, request):
    if not regression.data_available(case):
        pytest.skip(f"needs {', '.join(case.needs)} in PPML_DATA")
    if on_ray(case):
        request.getfixturevalue("ray_cluster")
    expected = json.loads(regression.record_path(case).read_text())
    assert regression.differences(expected, regression.run_case(case, str(tmp_path))) == []


def test_differences_name_the_column_and_the_first_row():
    assert regression.differences({"arm": [1, 2, 3]}, {"arm": [1, 5, 3]}) == [
        "column 'arm' differs (first at row 1)"]
    assert regression.differences({"arm": [1]}, {}) == ["column 'arm' is missing"]
    assert regression.differences({"x": [float("nan")]}, {"x": [float("nan")], "new": [1]}) == []


def test_floats_agree_to_the_machines_last_bits_and_decisions_exactly():
    assert regression.differences({"loss": [0.11803561938905079, 6.273276918905557e-07]},
                                  {"loss": [0.11803561938905077, 6.273276676876938e-07]}) == []
    assert regression.differences({"loss": [0.118]}, {"loss": [0.119]}) == [
        "column 'loss' differs (first at row 0)"]
    assert regression.differences({"sum": [[1.0, 2]]}, {"sum": [[1.0, 3]]}) == [
        "column 'sum' differs (first at row 0)"]
    assert regression.differences({"arm": [3]}, {"arm": [3.0000001]}) != []
