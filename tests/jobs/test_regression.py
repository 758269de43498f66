"""Every experiment still takes the decisions and rewards it recorded (jobs/regression.py).

Every case runs in this process.  The local cases all run; of the cases on Ray and on
federated processes, one per family and runtime (`REMOTE_IN_SUITE`) runs, the Ray ones on the
session's Ray instance.  Each other such case records a run whose local twin is checked here
and which a protocol test proves equal to the local run
(tests/protocols/<family>/test_protocol_ray.py and test_protocol_federated.py,
tests/protocols/pprl/test_shares.py); a private Ray instance per case cost some 20 s each, and
a federated case its parties' processes.  ``python -m jobs.regression check`` still runs every
case, each Ray case on a private instance as a user's run starts it.
"""

import json

import pytest

from jobs import regression

REMOTE_IN_SUITE = ("private_cb_ray", "linucb_ds_ray", "samba_mpc_ray", "pprl_time_shares_ray",
                   "masked_lark_aggregate_ray", "pprl_time_shares_federated",
                   "masked_lark_aggregate_federated")
"""The Ray and federated cases of every test session: one per family and runtime."""


def runtime(case) -> str:
    return next((o.partition("=")[2] for o in case.overrides if o.startswith("runtime=")),
                "local")


def param(case):
    """``case`` as a test case: a Ray case is slow and uses the session's Ray instance, a
    federated one is slow (a process per party)."""
    marks = {"local": [], "ray": [pytest.mark.slow, pytest.mark.ray],
             "federated": [pytest.mark.slow]}[runtime(case)]
    return pytest.param(case, id=case.name, marks=marks)


CASES = [param(case) for case in regression.CASES
         if runtime(case) == "local" or case.name in REMOTE_IN_SUITE]


def test_the_remote_cases_of_the_suite_are_recorded_cases_one_per_family_and_runtime():
    chosen = [case for case in regression.CASES if case.name in REMOTE_IN_SUITE]
    assert len(chosen) == len(REMOTE_IN_SUITE)
    assert all(runtime(case) != "local" for case in chosen)
    assert len({(case.overrides[0], runtime(case)) for case in chosen}) == len(chosen)


@pytest.mark.parametrize("case", CASES)
def test_a_case_takes_its_recorded_decisions(case, tmp_path, request):
    if not regression.data_available(case):
        pytest.skip(f"needs {', '.join(case.needs)} in PPML_DATA")
    if runtime(case) == "ray":
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
