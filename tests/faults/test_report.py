"""The fault tables made from a report file (tests/faults/report.py)."""

import json

from tests.faults.report import outcomes, summary, table, verdict

SEEN = {"injected": True, "hung": False, "returncode": 1, "seconds": 3.0, "leaked": 0,
        "parquet": 0}


def test_each_outcome_gets_its_verdict():
    assert verdict({**SEEN, "named": True}) == "clear error"
    assert verdict({**SEEN, "named": False}) == "error not naming the role"
    assert verdict({**SEEN, "hung": True, "returncode": None}) == "hang"
    assert verdict({**SEEN, "named": True, "leaked": 2}) == "leak"
    assert verdict({**SEEN, "returncode": 0, "parquet": 1}) == "NO ERROR"
    assert verdict({**SEEN, "returncode": 0, "parquet": 1, "identical": True}) == \
        "resumed, identical"
    assert verdict({**SEEN, "returncode": 0, "identical": False}) == "resumed, DIFFERENT"
    assert verdict({"case": "c", "injected": False}) == "never injected"


def test_a_case_run_again_keeps_its_last_outcome_and_the_totals_count_each_kind(tmp_path):
    path = tmp_path / "report.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in (
        {"case": "a", **SEEN, "hung": True, "returncode": None},
        {"case": "a", **SEEN, "named": True, "error": "RoleError: a | b died"},
        {"case": "b", "injected": False, "error": "no process"},
        {"case": "c", **SEEN, "returncode": 0, "parquet": 1, "identical": True})))
    found = outcomes(str(path))
    assert list(found) == ["a", "b", "c"] and verdict(found["a"]) == "clear error"
    text = table(found)
    assert "`RoleError: a \\| b died`" in text
    assert text.endswith("**2 faults injected: 1 resumed with identical results, 1 clear "
                         "errors, 0 hangs, 0 runs leaving processes; 1 never injected.**")


def test_the_summary_counts_each_family_and_runtime():
    found = {"pprl_shares-ray-party-kill": {**SEEN, "named": True, "seconds": 40.0},
             "pprl_shares-ray-party-stop": {**SEEN, "hung": True, "returncode": None},
             "pprl-federated-agent-0-stop": {"injected": False}}
    assert summary(found, 35.0).splitlines()[2:] == [
        "| pprl_shares | ray | 2 | 1 | 1 | 1 | 0 | 0 | 0 |",
        "| pprl | federated | 0 | 0 | 0 | 0 | 0 | 0 | 1 |"]
