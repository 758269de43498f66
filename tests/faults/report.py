"""docs/reliability.md's fault tables from a ``PPML_FAULTS_REPORT`` file (`test_faults.record`):
``python -m tests.faults.report <file>`` prints the counts per family and runtime, one row per
case (the last outcome of each) and the totals: faults injected, resumed with identical results,
clear errors (and how many took longer than the suite's bound), hangs, runs that left processes
or wrote a Parquet file, and cases whose fault was never injected."""

from __future__ import annotations

import json
import sys


def outcomes(path: str) -> dict:
    """case -> its last recorded outcome (a case run again replaces its earlier outcome)."""
    found = {}
    with open(path) as lines:
        for line in lines:
            if line.strip():
                outcome = json.loads(line)
                found[outcome["case"]] = outcome
    return found


def verdict(outcome: dict) -> str:
    """What a case came to: ``resumed, identical``, ``clear error``, ``hang``, ``leak``,
    ``never injected``, or what went wrong otherwise."""
    if not outcome.get("injected", True):
        return "never injected"
    if outcome["hung"]:
        return "hang"
    if outcome["leaked"]:
        return "leak"
    if "identical" in outcome:
        if outcome["returncode"] == 0:
            return "resumed, identical" if outcome["identical"] else "resumed, DIFFERENT"
        return "clear error" if outcome.get("error") else "failed"
    if outcome["returncode"] == 0 or outcome["parquet"]:
        return "NO ERROR"
    return "clear error" if outcome.get("named") else "error not naming the role"


def summary(found: dict, bound_s: float) -> str:
    """Counts per family and runtime (a case is ``<family>-<runtime>-<role>-<kill|stop>``);
    ``bound_s``: the seconds after the fault within which the suite wants the run to end."""
    groups: dict = {}
    for case, outcome in found.items():
        family, runtime = next((case[:case.index(f"-{r}-")], r) for r in ("ray", "federated")
                               if f"-{r}-" in case)
        groups.setdefault((family, runtime), []).append(outcome)
    rows = ["| family | runtime | injected | clear errors | of them after more than "
            f"{bound_s:g} s | hangs | processes left | Parquet | never injected |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (family, runtime), outcomes_ in groups.items():
        verdicts = [verdict(o) for o in outcomes_]
        slow = sum(1 for o, v in zip(outcomes_, verdicts)
                   if v == "clear error" and o["seconds"] > bound_s)
        rows.append(f"| {family} | {runtime} | {len(verdicts) - verdicts.count('never injected')}"
                    f" | {verdicts.count('clear error')} | {slow} | {verdicts.count('hang')} | "
                    f"{verdicts.count('leak')} | "
                    f"{sum(1 for o in outcomes_ if o.get('parquet'))} | "
                    f"{verdicts.count('never injected')} |")
    return "\n".join(rows)


def table(found: dict) -> str:
    """The per-case markdown table and the totals line."""
    rows = ["| case | outcome | s after the fault | processes left | Parquet | the error |",
            "| --- | --- | --- | --- | --- | --- |"]
    for case, outcome in found.items():
        error = outcome.get("error", "").replace("|", "\\|")
        rows.append(f"| {case} | {verdict(outcome)} | {outcome.get('seconds', '')} | "
                    f"{outcome.get('leaked', '')} | {outcome.get('parquet', '')} | "
                    f"{'`' + error + '`' if error else ''} |")
    counts = [verdict(o) for o in found.values()]
    injected = len(counts) - counts.count("never injected")
    named = ("resumed, identical", "clear error", "hang", "leak", "never injected")
    other = sorted({c for c in counts if c not in named})
    totals = (f"**{injected} faults injected: {counts.count('resumed, identical')} resumed with "
              f"identical results, {counts.count('clear error')} clear errors, "
              f"{counts.count('hang')} hangs, {counts.count('leak')} runs leaving processes"
              + "".join(f", {counts.count(c)} {c}" for c in other)
              + f"; {counts.count('never injected')} never injected.**")
    return "\n".join(rows) + "\n\n" + totals


if __name__ == "__main__":
    found = outcomes(sys.argv[1])
    print(summary(found, float(sys.argv[2]) if len(sys.argv) > 2 else 35.0) + "\n")
    print(table(found))
