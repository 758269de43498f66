"""Every experiment still takes the decisions and rewards it recorded (jobs/regression.py).

The local cases run in this process; the Ray cases run ``python -m jobs.regression check`` in a
subprocess, so each starts and stops its own private Ray instance as a user's run does.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jobs import regression

REPO = Path(__file__).resolve().parents[2]
LOCAL = [case for case in regression.CASES if "runtime=ray" not in case.overrides]
RAY = [case for case in regression.CASES if "runtime=ray" in case.overrides]


@pytest.mark.parametrize("case", LOCAL, ids=lambda case: case.name)
def test_local_case_takes_its_recorded_decisions(case, tmp_path):
    if not regression.data_available(case):
        pytest.skip(f"needs {', '.join(case.needs)} in PPML_DATA")
    expected = json.loads(regression.record_path(case).read_text())
    assert regression.differences(expected, regression.run_case(case, str(tmp_path))) == []


@pytest.mark.slow
@pytest.mark.ray
def test_ray_cases_take_their_recorded_decisions():
    done = subprocess.run([sys.executable, "-m", "jobs.regression", "check",
                           *(case.name for case in RAY)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


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
