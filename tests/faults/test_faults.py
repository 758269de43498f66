"""Faults injected into real runs: a role or party killed (SIGKILL) or stopped (SIGSTOP) mid-run
ends the run with an error naming it, within ``party_timeout_s`` and a few seconds, with no
process of the run left and no Parquet file written; never a hang.  With checkpoints, the run
instead goes on from its last checkpoints (by itself, or with ``resume=<run_id>``) to the
results of an uninterrupted run.

Three cases run in every test session (CI); the whole table runs with ``PPML_FAULTS=all``
(about ten minutes on 2 cores), and ``PPML_FAULTS_REPORT=<file>`` appends each outcome to a file
as a JSON line.  The outcomes are in docs/reliability.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
import yaml

import ppml.experiments.pprl  # noqa: F401 - registers the experiment
import ppml.experiments.private_cb  # noqa: F401 - registers the experiment
from ppml.experiments import registry
from ppml.experiments.config import RunConfig
from tests.faults.harness import REPO, FaultyRun

TIMEOUT_S = 15
"""party_timeout_s of every faulty run: how long a stopped role may stay silent."""
SLACK_S = 20
"""What the run may take beyond TIMEOUT_S to notice, fail and stop its processes."""
KEYS = ["key_bits=1024", "insecure_key_bits_ok=true"]
PRIVATE_CB = ["experiment=private_cb", "parties=2", "arms=10", "dims=5", "horizon=20000",
              "seed=1"]
SAMBA = ["experiment=samba", "horizon=200000", "seed=1", "dataset=synthetic", *KEYS]
LINUCB_DS = ["experiment=linucb_ds", "horizon=3000", "seed=1", "dataset=synthetic", *KEYS]
PPRL = ["experiment=pprl", "pprl.steps_per_agent=20000", "pprl.methods=[pprl]",
        "pprl.trials=1", "seed=1", *KEYS]
ALL = os.environ.get("PPML_FAULTS") == "all"
REPORT = os.environ.get("PPML_FAULTS_REPORT")
"""A file to which each case appends its outcome as a JSON line (docs/reliability.md's table)."""

# (case, overrides, the target's command line, its CPU seconds before the fault, signal,
#  what the error must name, runs in every session)
CASES = [
    ("private_cb-ray-party-stop", PRIVATE_CB + ["runtime=ray"], r"ray::PartyActor\.run", 4,
     signal.SIGSTOP, "party", True),
    ("private_cb-federated-party-kill", PRIVATE_CB + ["runtime=federated"],
     r"-m jobs\.party party=party-1", 5, signal.SIGKILL, "party-1", True),
    ("samba-ray-comp-stop", SAMBA + ["runtime=ray"], r"ray::Comp", 4, signal.SIGSTOP,
     "Comp", True),
    ("private_cb-ray-party-kill", PRIVATE_CB + ["runtime=ray"], r"ray::PartyActor\.run", 4,
     signal.SIGKILL, "party", False),
    ("private_cb-ray-dealer-kill", PRIVATE_CB + ["runtime=ray"], r"ray::DealerActor", 3,
     signal.SIGKILL, "dealer", False),
    ("private_cb-ray-dealer-stop", PRIVATE_CB + ["runtime=ray"], r"ray::DealerActor", 3,
     signal.SIGSTOP, "dealer", False),
    ("private_cb-federated-party-stop", PRIVATE_CB + ["runtime=federated"],
     r"-m jobs\.party party=party-1", 5, signal.SIGSTOP, "party-1", False),
    ("private_cb-federated-dealer-kill", PRIVATE_CB + ["runtime=federated"],
     r"-m jobs\.party party=dealer", 4, signal.SIGKILL, "dealer", False),
    ("samba-ray-comp-kill", SAMBA + ["runtime=ray"], r"ray::Comp", 4, signal.SIGKILL, "Comp",
     False),
    ("samba-federated-comp-stop", SAMBA + ["runtime=federated"], r"-m jobs\.party party=comp",
     5, signal.SIGSTOP, "comp", False),
    ("linucb_ds-ray-comp-kill", LINUCB_DS + ["runtime=ray"], r"ray::Comp", 4, signal.SIGKILL,
     "Comp", False),
    ("linucb_ds-ray-comp-stop", LINUCB_DS + ["runtime=ray"], r"ray::Comp", 4, signal.SIGSTOP,
     "Comp", False),
    ("linucb_ds-federated-comp-stop", LINUCB_DS + ["runtime=federated"],
     r"-m jobs\.party party=comp", 5, signal.SIGSTOP, "comp", False),
    ("pprl-ray-agent-stop", PPRL + ["runtime=ray"], r"ray::TimeAgent", 4, signal.SIGSTOP,
     "agent", False),
    ("pprl-federated-agent-kill", PPRL + ["runtime=federated"],
     r"-m jobs\.party party=agent-1", 5, signal.SIGKILL, "agent-1", False),
]


@pytest.mark.slow
@pytest.mark.parametrize("case, overrides, target, cpu_s, sig, named, always", CASES,
                         ids=[case[0] for case in CASES])
def test_a_fault_ends_the_run_with_a_named_error_and_nothing_left(
        tmp_path, case, overrides, target, cpu_s, sig, named, always):
    if not (always or ALL):
        pytest.skip("on demand: PPML_FAULTS=all")
    run = FaultyRun([*overrides, f"party_timeout_s={TIMEOUT_S}"], tmp_path / "results")
    pid = run.wait_for(target)
    run.wait_until_busy(pid, cpu_s)
    run.inject(pid, sig)
    outcome = run.finish(TIMEOUT_S + SLACK_S + 60)
    tail = outcome.output[-3000:]
    if REPORT:
        error = [line for line in tail.splitlines() if "Error" in line][-1:]
        with open(REPORT, "a") as out:
            out.write(json.dumps({"case": case, "hung": outcome.hung,
                                  "returncode": outcome.returncode,
                                  "seconds": round(outcome.seconds_after_fault, 1),
                                  "named": named in tail, "leaked": len(outcome.leaked),
                                  "parquet": len(outcome.parquet_files),
                                  "error": error[0][:300] if error else ""}) + "\n")
    assert not outcome.hung, f"{case}: still running {outcome.seconds_after_fault:.0f} s " \
                             f"after the fault: {tail}"
    assert outcome.returncode != 0, tail
    assert named in tail, f"{case}: the error does not name {named!r}: {tail}"
    assert outcome.seconds_after_fault < TIMEOUT_S + SLACK_S, \
        f"{case}: took {outcome.seconds_after_fault:.0f} s after the fault: {tail}"
    assert outcome.leaked == {}, f"{case}: processes left: {outcome.leaked}"
    assert outcome.parquet_files == []


RESUMED = PRIVATE_CB[:-2] + ["horizon=1200", "seed=1", "checkpoint_every=100", "run_id=resumed"]
"""A private CB run with checkpoints, short enough to finish after a restart."""
RESUMED_PPRL = [*PPRL[:1], "pprl.steps_per_agent=1000", *PPRL[2:], "checkpoint_every=900",
                "run_id=resumed"]
"""A PPRL run (two agents by time, one trial) with checkpoints: an agent killed in the second
turn's first 800 steps resumes from step 900 (in the first turn, in the clear) and replays the
steps played since (the agents note their progress per call of up to 500 steps, so a kill
just after a checkpoint would replay none)."""
DECISIONS = {"private_cb": ("step", "arm", "reward"),
             "pprl": ("method", "trial", "steps_to_goal", "reached_goal", "q_equal_reference",
                      "action_agreement", "encryptions", "decryptions", "divisions")}
"""What must equal the uninterrupted run's, per experiment (the rows' first column orders
them)."""


def decisions(rows: list, experiment: str) -> list:
    columns = DECISIONS[experiment]
    return [tuple(row[c] for c in columns) for row in sorted(rows, key=lambda r: r[columns[0]])]

# (case, overrides, the target's command line, its CPU seconds before the fault, runs always)
RESUME_CASES = [
    ("private_cb-ray-party-kill-resumed", RESUMED + ["runtime=ray"], r"ray::PartyActor\.run",
     6, True),
    ("private_cb-federated-party-kill-resumed", RESUMED + ["runtime=federated"],
     r"-m jobs\.party party=party-1", 8, False),
    ("pprl-ray-agent-kill-resumed", RESUMED_PPRL + ["runtime=ray"], r"ray::TimeAgent", 4,
     False),
]


@pytest.fixture(scope="module")
def uninterrupted():
    """``uninterrupted(overrides)``: the `decisions` of a resumed run's settings, uninterrupted,
    each computed once (runtime=local: the same seed gives the same decisions in every
    runtime)."""
    done = {}

    def of(overrides: list) -> list:
        keys = {key: yaml.safe_load(value) for key, value in
                (item.split("=", 1) for item in overrides
                 if not item.startswith(("run_id", "check", "runtime")))}
        config = RunConfig.from_columns({**keys, "progress": False})
        if config.experiment not in done:
            rows = registry.get(config.experiment)(config).rows
            done[config.experiment] = decisions(rows, config.experiment)
        return done[config.experiment]
    return of


@pytest.mark.slow
@pytest.mark.parametrize("case, overrides, target, cpu_s, always", RESUME_CASES,
                         ids=[case[0] for case in RESUME_CASES])
def test_a_killed_party_resumes_with_identical_results(tmp_path, uninterrupted, case, overrides,
                                                       target, cpu_s, always):
    """With checkpoints, a killed party's run starts again from the last checkpoint every party
    holds (``restarts``), ends with the uninterrupted run's arms and rewards, says which steps
    it replayed, and leaves no process and no checkpoint behind."""
    if not (always or ALL):
        pytest.skip("on demand: PPML_FAULTS=all")
    run = FaultyRun([*overrides, f"party_timeout_s={TIMEOUT_S}"], tmp_path / "results")
    pid = run.wait_for(target)
    run.wait_until_busy(pid, cpu_s)
    run.inject(pid, signal.SIGKILL)
    outcome = run.finish(600)
    tail = outcome.output[-3000:]
    if REPORT:
        with open(REPORT, "a") as out:
            out.write(json.dumps({"case": case, "hung": outcome.hung,
                                  "returncode": outcome.returncode,
                                  "seconds": round(outcome.seconds_after_fault, 1),
                                  "leaked": len(outcome.leaked),
                                  "parquet": len(outcome.parquet_files)}) + "\n")
    assert outcome.returncode == 0, tail
    assert "restarting from its last checkpoints" in tail
    assert outcome.leaked == {}, f"{case}: processes left: {outcome.leaked}"
    (path,) = outcome.parquet_files
    rows = pq.read_table(path).to_pylist()
    experiment = rows[0]["experiment"]
    assert decisions(rows, experiment) == uninterrupted(overrides)
    assert any(row["replayed"] for row in rows)
    assert not (tmp_path / "results" / "checkpoints" / "resumed").exists()


@pytest.mark.slow
def test_a_killed_local_run_resumes_by_its_run_id(tmp_path, uninterrupted):
    """runtime=local: the run's one process killed mid-run; ``resume=<run_id>`` goes on from its
    last checkpoint to the uninterrupted run's arms and rewards."""
    results = tmp_path / "results"
    run = FaultyRun([*RESUMED, "runtime=local"], results)
    run.wait_until_busy(run.process.pid, 8)
    run.inject(run.process.pid, signal.SIGKILL)
    assert run.finish(60).returncode == -signal.SIGKILL
    again = subprocess.run([sys.executable, "-m", "jobs.run", *RESUMED, "runtime=local",
                            "resume=resumed", f"results_dir={results}", "progress=false"],
                           cwd=REPO, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    rows = pq.read_table(results / "resumed.parquet").to_pylist()
    assert decisions(rows, "private_cb") == uninterrupted(RESUMED)
    assert any(row["replayed"] for row in rows)
