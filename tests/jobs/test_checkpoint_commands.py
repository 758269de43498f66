"""The README's checkpoint commands, run as written at a small size: the first is killed
mid-run, the second goes on with the run_id the first printed, to the results of a run that was
never interrupted."""

import re
import signal

import pyarrow.parquet as pq

from tests.faults.harness import FaultyRun
from tests.jobs.readme import readme_commands, run_small

COMMANDS = readme_commands("python -m jobs.run experiment=private_cb horizon=1797 checkpoint")
SMALL = ["horizon=600", "seed=2", "progress=false"]


def test_a_killed_run_goes_on_with_the_printed_run_id(tmp_path):
    first, again = COMMANDS
    assert again[-1] == "resume=<run_id>" and again[:-1] == first
    results = tmp_path / "results"
    run = FaultyRun([*first[3:], *SMALL], results)
    run.wait_for_file(results / "checkpoints", "party-0/step-*200.ckpt")  # all hold step 100
    run.inject(run.process.pid, signal.SIGKILL)
    outcome = run.finish(60)
    assert outcome.returncode == -signal.SIGKILL and outcome.parquet_files == []
    run_id = re.search(r"run_id: (\S+)", outcome.output).group(1)
    resumed = run_small([*again[:-1], f"resume={run_id}"], SMALL, results)
    whole = run_small(first, SMALL, tmp_path / "whole")
    rows, expected = (pq.read_table(p).sort_by("step").to_pylist() for p in (resumed, whole))
    assert resumed.stem == run_id
    assert [(r["arm"], r["reward"]) for r in rows] == [(r["arm"], r["reward"]) for r in expected]
    assert any(r["replayed"] for r in rows) and not any(r["replayed"] for r in expected)
