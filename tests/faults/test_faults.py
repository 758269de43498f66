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

import functools
import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest
from hydra import compose, initialize_config_dir

from ppml.experiments import registry
from ppml.experiments.config import load_config
from tests.faults.harness import REPO, FaultyRun, can_cut_links, cut_link

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
LARK = ["experiment=masked_lark", "masked_lark.reports=100000", "seed=1"]
LARK_TRAIN = ["experiment=masked_lark", "masked_lark.task=train", "masked_lark.epochs=50",
              "seed=1"]
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
    # every other role of every family, on demand
    ("private_cb-ray-world-kill", PRIVATE_CB + ["runtime=ray"], r"ray::World", 2,
     signal.SIGKILL, "world", False),
    ("private_cb-federated-puller-kill", PRIVATE_CB + ["runtime=federated"],
     r"-m jobs\.party party=puller", 5, signal.SIGKILL, "puller", False),
    ("private_cb-federated-rewarder-stop", PRIVATE_CB + ["runtime=federated"],
     r"-m jobs\.party party=rewarder", 5, signal.SIGSTOP, "rewarder", False),
    ("private_cb-federated-world-kill", PRIVATE_CB + ["runtime=federated"],
     r"-m jobs\.party party=world", 4, signal.SIGKILL, "world", False),
    ("samba-ray-do-group-kill", SAMBA + ["runtime=ray"], r"ray::DataOwnerGroup", 3,
     signal.SIGKILL, "DO", False),
    ("samba-ray-customer-kill", SAMBA + ["runtime=ray"], r"ray::DataCustomer", 3,
     signal.SIGKILL, "DC", False),
    ("samba-federated-do-kill", SAMBA + ["runtime=federated"], r"-m jobs\.party party=do-0",
     5, signal.SIGKILL, "do-0", False),
    ("samba-federated-dc-stop", SAMBA + ["runtime=federated"], r"-m jobs\.party party=dc", 5,
     signal.SIGSTOP, "dc", False),
    ("samba-federated-controller-kill", SAMBA + ["runtime=federated"],
     r"-m jobs\.party party=controller", 5, signal.SIGKILL, "controller", False),
    ("linucb_ds-ray-dc-kill", LINUCB_DS + ["runtime=ray"], r"ray::DataClient", 0.5,
     signal.SIGKILL, "DC", False),
    ("linucb_ds-ray-p-kill", LINUCB_DS + ["runtime=ray"], r"ray::Principal", 4,
     signal.SIGKILL, "P", False),
    ("linucb_ds-ray-do-stop", LINUCB_DS + ["runtime=ray"], r"ray::DataOwner", 2,
     signal.SIGSTOP, "DO", False),
    ("linucb_ds-federated-dc-kill", LINUCB_DS + ["runtime=federated"],
     r"-m jobs\.party party=dc", 5, signal.SIGKILL, "dc", False),
    ("linucb_ds-federated-p-kill", LINUCB_DS + ["runtime=federated"],
     r"-m jobs\.party party=p", 5, signal.SIGKILL, "p", False),
    ("linucb_ds-federated-do-kill", LINUCB_DS + ["runtime=federated"],
     r"-m jobs\.party party=do", 5, signal.SIGKILL, "do", False),
    ("pprl-ray-dealer-kill", PPRL + ["runtime=ray"], r"ray::EngineDealer", 3, signal.SIGKILL,
     "dealer", False),
    ("pprl-ray-agent-kill", PPRL + ["runtime=ray"], r"ray::TimeAgent", 4, signal.SIGKILL,
     "agent", False),
    ("pprl-federated-dealer-kill", PPRL + ["runtime=federated"], r"-m jobs\.party party=dealer",
     4, signal.SIGKILL, "dealer", False),
    ("pprl-federated-agent-stop", PPRL + ["runtime=federated"],
     r"-m jobs\.party party=agent-0", 5, signal.SIGSTOP, "agent-0", False),
    ("masked_lark-ray-browsers-kill", LARK + ["runtime=ray"], r"ray::Browsers", 4,
     signal.SIGKILL, "browsers", False),
    ("masked_lark-ray-adnet-kill", LARK + ["runtime=ray"], r"ray::AdNetwork", 0.5,
     signal.SIGKILL, "ad network", False),
    ("masked_lark-ray-helper-stop", LARK + ["runtime=ray"], r"ray::PartyActor\.run", 4,
     signal.SIGSTOP, "party", False),
    ("masked_lark-ray-dealer-kill", LARK + ["runtime=ray"], r"ray::DealerActor", 0.5,
     signal.SIGKILL, "dealer", False),
    ("masked_lark-federated-helper-kill", LARK + ["runtime=federated"],
     r"-m jobs\.party party=helper-0", 5, signal.SIGKILL, "helper-0", False),
    ("masked_lark-federated-browsers-stop", LARK + ["runtime=federated"],
     r"-m jobs\.party party=browsers", 5, signal.SIGSTOP, "browsers", False),
    ("masked_lark-federated-dealer-kill", LARK + ["runtime=federated"],
     r"-m jobs\.party party=dealer", 4, signal.SIGKILL, "dealer", False),
    ("masked_lark_train-ray-model-owner-kill", LARK_TRAIN + ["runtime=ray"],
     r"ray::ModelOwner", 4, signal.SIGKILL, "ad network", False),
    ("masked_lark_train-ray-label-holders-stop", LARK_TRAIN + ["runtime=ray"],
     r"ray::LabelHolders", 0.5, signal.SIGSTOP, "browsers", False),
]


@pytest.mark.slow
@pytest.mark.parametrize("case, overrides, target, cpu_s, sig, named, always", CASES,
                         ids=[case[0] for case in CASES])
def test_a_fault_ends_the_run_with_a_named_error_and_nothing_left(
        tmp_path, case, overrides, target, cpu_s, sig, named, always):
    if not (always or ALL):
        pytest.skip("on demand: PPML_FAULTS=all")
    run = FaultyRun([*overrides, f"party_timeout_s={TIMEOUT_S}"], tmp_path / "results")
    pid = run.busy(target, cpu_s)
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
SAMBA_RESUMED = SAMBA[:1] + ["horizon=3000", *SAMBA[2:], "checkpoint_every=200",
                             "run_id=samba-resumed"]
"""A Samba run with checkpoints (its secure run first: Comp's first process is its own)."""
LINUCB_DS_RESUMED = LINUCB_DS[:1] + ["horizon=1500"] + LINUCB_DS[2:] + [
    "checkpoint_every=100", "run_id=resumed"]
"""A LinUCB-DS run with checkpoints: Comp is killed a few hundred steps in."""
LARK_RESUMED = ["experiment=masked_lark", "parties=2", "masked_lark.task=train",
                "dataset=digits", "masked_lark.epochs=4", "masked_lark.batch_size=16", "seed=1",
                "checkpoint_every=20", "run_id=resumed"]
"""A Masked LARK training with checkpoints (360 steps), short enough to finish after a restart."""
RESUMED_PPRL = [*PPRL[:1], "pprl.steps_per_agent=1000", *PPRL[2:], "checkpoint_every=900",
                "run_id=resumed"]
"""A PPRL run (two agents by time, one trial) with checkpoints: an agent killed in the second
turn's first 800 steps resumes from step 900 (in the first turn, in the clear) and replays the
steps played since (the agents note their progress per call of up to 500 steps, so a kill
just after a checkpoint would replay none)."""
RESUMED_PPRL_SHARES = [*PPRL[:1], "pprl.steps_per_agent=1000", "pprl.methods=[pprl]",
                       "pprl.trials=2", "seed=1", "pprl.backend=shares", "pprl.scale_bits=30",
                       "checkpoint_every=200", "run_id=resumed-shares"]
"""PPRL on the shares backend (two agents by time, two trials on one set of Ray actors: 2,000
learning steps on the shares) with checkpoints: an agent killed mid-run resumes from the last
step both agents hold."""
DECISIONS = {"private_cb": ("step", "arm", "reward"), "samba": ("step", "arm", "reward"),
             "linucb_ds": ("step", "arm", "reward"),
             "masked_lark": ("step", "method", "loss", "accuracy", "auc", "test_loss"),
             "pprl": ("method", "trial", "steps_to_goal", "reached_goal", "q_equal_reference",
                      "action_agreement", "encryptions", "decryptions", "divisions")}
"""What a resumed run must repeat exactly, per experiment: the bandits' arms and rewards per
step, Masked LARK's losses and test metrics (of the masked and the plaintext model), PPRL's
per-trial outcomes and counts."""


def decisions(rows: list, experiment: str) -> list:
    """The `DECISIONS` columns of each row, in a fixed order."""
    return sorted((tuple(row.get(c) for c in DECISIONS[experiment]) for row in rows), key=repr)


# (case, overrides, the target's command line, its CPU seconds before the fault, runs always)
RESUME_CASES = [
    ("private_cb-ray-party-kill-resumed", RESUMED + ["runtime=ray"], r"ray::PartyActor\.run",
     6, True),
    ("private_cb-federated-party-kill-resumed", RESUMED + ["runtime=federated"],
     r"-m jobs\.party party=party-1", 8, False),
    ("samba-ray-comp-kill-resumed", SAMBA_RESUMED + ["runtime=ray"], r"ray::Comp", 6, False),
    ("linucb_ds-ray-comp-kill-resumed", LINUCB_DS_RESUMED + ["runtime=ray"], r"ray::Comp", 4,
     False),
    ("linucb_ds-federated-comp-kill-resumed", LINUCB_DS_RESUMED + ["runtime=federated"],
     r"-m jobs\.party party=comp", 5, False),
    ("masked_lark-ray-helper-kill-resumed", LARK_RESUMED + ["runtime=ray"],
     r"ray::PartyActor\.run", 6, False),
    ("pprl-ray-agent-kill-resumed", RESUMED_PPRL + ["runtime=ray"], r"ray::TimeAgent", 4,
     False),
    ("pprl_shares-ray-agent-kill-resumed", RESUMED_PPRL_SHARES + ["runtime=ray"],
     r"ray::PartyActor\.run", 4, False),
]


@pytest.fixture(scope="module")
def uninterrupted():
    """The decisions (`decisions`) of a resumed case's settings, uninterrupted (runtime=local:
    the same seed gives the same decisions in every runtime), composed by Hydra as jobs.run
    composes them, once per setting."""
    @functools.cache
    def of(overrides: tuple) -> list:
        keys = tuple(item for item in overrides
                     if not item.startswith(("run_id", "check", "runtime"))) + ("progress=false",)
        with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
            config = load_config(compose("config", overrides=list(keys)))
        return decisions(registry.get(config.experiment)(config).rows,
                         config.experiment)
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
    pid = run.busy(target, cpu_s)
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
    assert "restarting from its last checkpoints" in outcome.output
    assert outcome.leaked == {}, f"{case}: processes left: {outcome.leaked}"
    (path,) = outcome.parquet_files
    rows = pq.read_table(path).to_pylist()
    assert decisions(rows, rows[0]["experiment"]) == uninterrupted(tuple(overrides))
    assert any(row["replayed"] for row in rows)
    run_id = next(item for item in overrides if item.startswith("run_id="))[len("run_id="):]
    assert not (tmp_path / "results" / "checkpoints" / run_id).exists()


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
    assert decisions(rows, "private_cb") == uninterrupted(tuple(RESUMED))
    assert any(row["replayed"] for row in rows)


@pytest.mark.slow
@pytest.mark.parametrize("checkpoints", [False, True], ids=["named-error", "resumed"])
def test_a_link_cut_mid_round(tmp_path, uninterrupted, checkpoints):
    """The TCP connection between two feature parties of a federated run destroyed mid-run (as
    a network failure would, `cut_link`): without checkpoints a clear error naming the peer,
    with them a restart to the uninterrupted run's results; never a hang or a leak."""
    if not ALL:
        pytest.skip("on demand: PPML_FAULTS=all")
    if not can_cut_links():
        pytest.skip("ss -K cannot destroy sockets here (needs ss, root, INET_DIAG_DESTROY)")
    overrides = RESUMED if checkpoints else [*PRIVATE_CB, "run_id=cut"]
    run = FaultyRun([*overrides, "runtime=federated", f"party_timeout_s={TIMEOUT_S}"],
                    tmp_path / "results")
    first, second = (run.wait_for(rf"-m jobs\.party party=party-{p}") for p in (0, 1))
    run.wait_until_busy(first, 8)
    cut_link(first, second)
    run.fault_at = time.monotonic()
    outcome = run.finish(600 if checkpoints else TIMEOUT_S + SLACK_S + 60)
    tail = outcome.output[-3000:]
    if REPORT:
        with open(REPORT, "a") as out:
            out.write(json.dumps({"case": f"private_cb-federated-link-cut-"
                                          f"{'resumed' if checkpoints else 'error'}",
                                  "hung": outcome.hung, "returncode": outcome.returncode,
                                  "seconds": round(outcome.seconds_after_fault, 1),
                                  "leaked": len(outcome.leaked),
                                  "parquet": len(outcome.parquet_files),
                                  "error": tail.strip().splitlines()[-1][:300]}) + "\n")
    assert not outcome.hung and outcome.leaked == {}, tail
    if checkpoints:
        assert outcome.returncode == 0, tail
        assert "restarting from its last checkpoints" in outcome.output
        rows = pq.read_table(outcome.parquet_files[0]).to_pylist()
        assert decisions(rows, "private_cb") == uninterrupted(tuple(RESUMED))
    else:
        assert outcome.returncode != 0 and outcome.parquet_files == []
        assert "party-0" in tail or "party-1" in tail or "party 1" in tail, tail
        assert outcome.seconds_after_fault < TIMEOUT_S + SLACK_S, tail
