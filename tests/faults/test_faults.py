"""Faults injected into real runs: a role or party killed (SIGKILL) or stopped (SIGSTOP) mid-run
ends the run with an error naming it, within ``party_timeout_s`` and a few seconds, with no
process of the run left and no Parquet file written; never a hang.  With checkpoints, the run
instead goes on from its last checkpoints (by itself, or with ``resume=<run_id>``) to the
results of an uninterrupted run.  A local run killed and resumed with ``resume=<run_id>`` is the
README's checkpoint commands' test (tests/jobs/test_checkpoint_commands.py).

`ROLES` lists every role of every family and runtime; each is killed (SIGKILL) and stopped
(SIGSTOP).  Three cases run in every test session (CI); the whole table runs with
``PPML_FAULTS=all`` (about an hour and a half on 2 cores; ``-k <family>`` picks a part), and
``PPML_FAULTS_REPORT=<file>`` appends each outcome to a file as a JSON line, which
``python -m tests.faults.report <file>`` turns into docs/reliability.md's tables.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
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
LARK_TRAIN = ["experiment=masked_lark", "masked_lark.task=train", "masked_lark.epochs=300",
              "seed=1"]
ALL = os.environ.get("PPML_FAULTS") == "all"
REPORT = os.environ.get("PPML_FAULTS_REPORT")
"""A file to which each case appends its outcome as a JSON line (docs/reliability.md's table)."""

PPRL_OBSERVATION = ["experiment=pprl", "pprl.task=load_balancing", "pprl.partition=observation",
                    "pprl.episodes=200", "pprl.methods=[pprl]", "pprl.trials=1", "seed=1", *KEYS]
PPRL_SHARES = [*PPRL, "pprl.backend=shares", "pprl.scale_bits=30"]


def party(name: str) -> str:
    """The command line of a federated run's party ``name``."""
    return rf"-m jobs\.party party={name}\b"


# run -> (its overrides, {runtime: [(role, its process's command line, its CPU seconds before
# the fault, what the error must name)]}): every role of every family, each killed and stopped
ROLES = {
    "private_cb": (PRIVATE_CB, {
        "ray": [("party", r"ray::PartyActor\.run", 4, "party"),
                ("dealer", r"ray::DealerActor", 3, "dealer"),
                ("world", r"ray::World", 2, "world")],
        "federated": [(name, party(name), cpu, name) for name, cpu in (
            ("party-0", 5), ("party-1", 5), ("puller", 4), ("rewarder", 4), ("dealer", 4),
            ("world", 4))]}),
    "samba": (SAMBA, {
        "ray": [("comp", r"ray::Comp", 4, "Comp"), ("do-group", r"ray::DataOwnerGroup", 3, "DO"),
                ("dc", r"ray::DataCustomer", 3, "DC")],
        "federated": [(name, party(name), cpu, name) for name, cpu in (
            ("comp", 5), ("dc", 3), ("do-0", 5), ("controller", 5))]}),
    "linucb_ds": (LINUCB_DS, {
        "ray": [("comp", r"ray::Comp", 4, "Comp"), ("dc", r"ray::DataClient", 0.5, "DC"),
                ("p", r"ray::Principal", 4, "P"), ("do", r"ray::DataOwner", 0.5, "DO")],
        "federated": [(name, party(name), cpu, name) for name, cpu in (
            ("comp", 5), ("dc", 1.5), ("p", 5), ("do", 1.5))]}),
    "pprl": (PPRL, {
        "ray": [("agent", r"ray::TimeAgent", 4, "agent"),
                ("dealer", r"ray::EngineDealer", 1, "dealer")],
        "federated": [(name, party(name), cpu, name) for name, cpu in (
            ("agent-0", 5), ("agent-1", 5), ("dealer", 3))]}),
    "pprl_observation": (PPRL_OBSERVATION, {
        "ray": [("agent", r"ray::ObservationAgent", 4, "agent"),
                ("world", r"ray::World", 1, "world"),
                ("dealer", r"ray::KeyDealer", 0.5, "dealer")],
        "federated": [(name, party(name), cpu, name) for name, cpu in (
            ("agent-0", 5), ("agent-1", 5), ("world", 2), ("dealer", 2))]}),
    "pprl_shares": (PPRL_SHARES, {
        "ray": [("party", r"ray::PartyActor\.run", 4, "party"),
                ("dealer", r"ray::DealerActor", 2, "dealer")],
        "federated": [(name, party(name), cpu, name) for name, cpu in (
            ("agent-0", 5), ("agent-1", 5), ("dealer", 3))]}),
    "masked_lark": (LARK, {
        "ray": [("helper", r"ray::PartyActor\.run", 4, "party"),
                ("browsers", r"ray::Browsers", 4, "browsers"),
                ("adnet", r"ray::AdNetwork", 0.5, "ad network"),
                ("dealer", r"ray::DealerActor", 0.5, "dealer")],
        "federated": [(name, party(name), cpu, name) for name, cpu in (
            ("helper-0", 5), ("helper-1", 5), ("browsers", 5), ("adnet", 1), ("dealer", 2))]}),
    "masked_lark_train": (LARK_TRAIN, {
        "ray": [("helper", r"ray::PartyActor\.run", 4, "party"),
                ("model-owner", r"ray::ModelOwner", 4, "ad network"),
                ("label-holders", r"ray::LabelHolders", 0.5, "browsers"),
                ("dealer", r"ray::DealerActor", 0.5, "dealer")],
        "federated": [(name, party(name), cpu, name) for name, cpu in (
            ("helper-0", 5), ("helper-1", 5), ("browsers", 1), ("adnet", 4), ("dealer", 1))]}),
}
SIGNALS = {"kill": signal.SIGKILL, "stop": signal.SIGSTOP}
ALWAYS = {"private_cb-ray-party-stop", "private_cb-federated-party-1-kill", "samba-ray-comp-stop"}
"""The cases of every test session (CI); the others run on demand."""
# (case, overrides, the target's command line, its CPU seconds before the fault, signal,
#  what the error must name, runs in every session)
CASES = [(f"{run}-{runtime}-{role}-{verb}", [*overrides, f"runtime={runtime}"], target, cpu_s,
          sig, named, f"{run}-{runtime}-{role}-{verb}" in ALWAYS)
         for run, (overrides, by_runtime) in ROLES.items()
         for runtime, roles in by_runtime.items()
         for role, target, cpu_s, named in roles
         for verb, sig in SIGNALS.items()]


def inject(run: FaultyRun, case: str, target: str, cpu_s: float, sig: int) -> None:
    """``sig`` to the run's first process matching ``target`` once it has used ``cpu_s`` seconds
    of CPU; a run that ends first is recorded as never injected (`record`)."""
    try:
        pid = run.busy(target, cpu_s)
    except AssertionError as exc:
        record(case, injected=False, error=str(exc).splitlines()[0][:300])
        raise
    run.inject(pid, sig)


def record(case: str, outcome=None, **more) -> None:
    """Append a case's outcome to ``PPML_FAULTS_REPORT`` as a JSON line (`tests.faults.report`
    makes docs/reliability.md's tables from them)."""
    if not REPORT:
        return
    seen = {} if outcome is None else {
        "injected": True, "hung": outcome.hung, "returncode": outcome.returncode,
        "seconds": round(outcome.seconds_after_fault, 1), "leaked": len(outcome.leaked),
        "parquet": len(outcome.parquet_files)}
    with open(REPORT, "a") as out:
        out.write(json.dumps({"case": case, **seen, **more}) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("case, overrides, target, cpu_s, sig, named, always", CASES,
                         ids=[case[0] for case in CASES])
def test_a_fault_ends_the_run_with_a_named_error_and_nothing_left(
        tmp_path, case, overrides, target, cpu_s, sig, named, always):
    if not (always or ALL):
        pytest.skip("on demand: PPML_FAULTS=all")
    run = FaultyRun([*overrides, f"party_timeout_s={TIMEOUT_S}"], tmp_path / "results")
    inject(run, case, target, cpu_s, sig)
    outcome = run.finish(TIMEOUT_S + SLACK_S + 60)
    tail = outcome.output[-3000:]
    error = [line for line in tail.splitlines()              # the run's own exception
             if re.search(r"\w(Error|Failed): ", line)][-1:]
    record(case, outcome, named=named in tail, error=error[0][:300] if error else "")
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
RESUMED_PPRL_OBSERVATION = [
    *PPRL[:1], "pprl.task=load_balancing", "pprl.partition=observation", "pprl.episodes=4",
    "pprl.episode_steps=50", *PPRL[2:], "checkpoint_every=40", "run_id=resumed"]
"""A PPRL run by observation (two agents, 4 x 50 steps, one trial) with checkpoints: an agent
killed some 60 steps in resumes from step 40 (each agent's key share its own: the table stays
decryptable) and replays the steps played since."""
RESUMED_PPRL_SHARES = [*PPRL[:1], "pprl.steps_per_agent=1000", "pprl.methods=[pprl]",
                       "pprl.trials=2", "seed=1", "pprl.backend=shares", "pprl.scale_bits=30",
                       "checkpoint_every=200", "run_id=resumed-shares"]
"""PPRL on the shares backend (two agents by time, two trials on one set of Ray actors: 2,000
learning steps on the shares) with checkpoints: an agent killed mid-run resumes from the last
step both agents hold."""
DECISIONS = {"private_cb": ("step", "arm", "reward"), "samba": ("step", "arm", "reward"),
             "linucb_ds": ("step", "arm", "reward"),
             "masked_lark": ("step", "method", "loss", "accuracy", "auc", "test_loss"),
             "pprl": ("method", "trial", "episode", "steps_to_goal", "reached_goal",
                      "episode_reward", "q_equal_reference", "action_agreement", "encryptions",
                      "decryptions", "divisions")}
"""What a resumed run must repeat exactly, per experiment: the bandits' arms and rewards per
step, Masked LARK's losses and test metrics (of the masked and the plaintext model), PPRL's
per-trial (by observation: per-episode) outcomes and counts."""


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
    ("pprl-federated-agent-kill-resumed", RESUMED_PPRL + ["runtime=federated"],
     r"-m jobs\.party party=agent-1", 5, False),
    ("pprl-ray-observation-agent-kill-resumed", RESUMED_PPRL_OBSERVATION + ["runtime=ray"],
     r"ray::ObservationAgent", 8, False),
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
    inject(run, case, target, cpu_s, signal.SIGKILL)
    outcome = run.finish(600)
    tail = outcome.output[-3000:]
    rows = [] if len(outcome.parquet_files) != 1 else \
        pq.read_table(outcome.parquet_files[0]).to_pylist()
    identical = bool(rows) and decisions(rows, rows[0]["experiment"]) == \
        uninterrupted(tuple(overrides))
    record(case, outcome, identical=identical,
           restarted="restarting from its last checkpoints" in outcome.output)
    assert outcome.returncode == 0, tail
    assert "restarting from its last checkpoints" in outcome.output
    assert outcome.leaked == {}, f"{case}: processes left: {outcome.leaked}"
    assert len(outcome.parquet_files) == 1 and identical
    assert any(row["replayed"] for row in rows)
    run_id = next(item for item in overrides if item.startswith("run_id="))[len("run_id="):]
    assert not (tmp_path / "results" / "checkpoints" / run_id).exists()


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
    rows = pq.read_table(outcome.parquet_files[0]).to_pylist() \
        if len(outcome.parquet_files) == 1 else []
    record(f"private_cb-federated-link-cut-{'resumed' if checkpoints else 'error'}", outcome,
           identical=bool(rows) and decisions(rows, "private_cb") == uninterrupted(
               tuple(RESUMED)), error=tail.strip().splitlines()[-1][:300])
    assert not outcome.hung and outcome.leaked == {}, tail
    if checkpoints:
        assert outcome.returncode == 0, tail
        assert "restarting from its last checkpoints" in outcome.output
        assert rows and decisions(rows, "private_cb") == uninterrupted(tuple(RESUMED))
    else:
        assert outcome.returncode != 0 and outcome.parquet_files == []
        assert "party-0" in tail or "party-1" in tail or "party 1" in tail, tail
        assert outcome.seconds_after_fault < TIMEOUT_S + SLACK_S, tail
