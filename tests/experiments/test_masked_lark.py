"""The masked_lark experiment's checkpoints: a training resumed by its run_id says which steps
it ran twice; an aggregation, which has no steps, refuses checkpoints, naming the key; a
training's and an aggregation's slowdowns."""

import datetime as dt

import pyarrow.parquet as pq
import pytest

from ppml.experiments.config import RunConfig
from ppml.experiments.masked_lark import (SHOWN, TRAINING_SHOWN, masked_lark,
                                          training_slowdowns)
from ppml.experiments.results import write_run
from ppml.protocols.masked_lark import training
from tests.experiments.summaries import fits
from tests.protocols.masked_lark.test_training import _LostAtStep
from tests.runtime.bars import complete


def config(tmp_path, **keys) -> RunConfig:
    base = {"experiment": "masked_lark", "results_dir": str(tmp_path), "run_id": "lark",
            "progress": False, "parties": 2, "seed": 5, "dataset": "breast_cancer",
            "masked_lark.task": "train", "masked_lark.epochs": 2,
            "masked_lark.batch_size": 128}
    return RunConfig.from_columns({**base, **keys})


def test_a_resumed_training_says_which_steps_it_replayed(tmp_path, monkeypatch):
    monkeypatch.setattr(training, "ModelOwner", _LostAtStep)
    with pytest.raises(ConnectionError, match="step 7"):       # runtime=local: no restart
        masked_lark(config(tmp_path, checkpoint_every=3))
    monkeypatch.undo()
    resumed = config(tmp_path, checkpoint_every=3, resume="lark", run_id=None)
    path = write_run(tmp_path, resumed.columns(), masked_lark(resumed),
                     started_at=dt.datetime.now(dt.timezone.utc))
    rows = pq.read_table(path).to_pylist()
    assert {(row["step"], row["method"]) for row in rows if row["replayed"]} == {(6, "masked")}
    uninterrupted = masked_lark(config(tmp_path))
    assert all(row["replayed"] is False for row in uninterrupted.rows)
    assert fits(uninterrupted.table)       # the compact summary
    assert "equal gradients" in uninterrupted.table and "\n\n" not in uninterrupted.table


def test_a_training_has_both_slowdowns_against_the_lean_loop_and_shows_the_total(tmp_path):
    out = masked_lark(config(tmp_path))
    s = out.summary
    assert 0 < s["setup_s"] + s["train_s"] <= s["protocol_s"] and s["plaintext_train_s"] > 0
    assert s["slowdown_online"] == s["train_s"] / s["plaintext_train_s"]
    assert s["slowdown_total"] == s["protocol_s"] / s["plaintext_train_s"]
    assert ("slowdown_total", "slowdown") in TRAINING_SHOWN and "slowdown" in out.table
    assert not {"epoch_slowdown", "plaintext_epoch_s"} & set(s)


def test_a_training_total_holds_at_least_the_set_up_and_the_steps():
    seconds = {"protocol_s": 4.0, "setup_s": 1.5, "train_s": 3.0, "plaintext_train_s": 0.5}
    assert training_slowdowns(seconds) == {"slowdown_online": 6.0, "slowdown_total": 9.0}


def test_an_aggregation_has_both_slowdowns_against_the_curators_release(tmp_path):
    out = masked_lark(config(tmp_path, **{"masked_lark.task": "aggregate",
                                          "masked_lark.reports": 400}))
    s = out.summary
    assert s["release_equal_reference"] and s["plaintext_aggregate_s"] > 0
    assert s["slowdown_online"] == s["helper_s"] / s["plaintext_aggregate_s"]
    assert s["slowdown_total"] == (s["setup_s"] + s["protocol_s"]) / s["plaintext_aggregate_s"]
    assert ("slowdown_total", "slowdown") in SHOWN and "slowdown" in out.table


@pytest.mark.parametrize("named, keys", [
    ("checkpoint_every", {"checkpoint_every": 2}),
    ("resume", {"checkpoint_every": 2, "resume": "lark", "run_id": None})])
def test_an_aggregation_refuses_checkpoints_naming_the_key(tmp_path, named, keys):
    with pytest.raises(ValueError, match=f"{named}: masked_lark.task=aggregate is one release"):
        masked_lark(config(tmp_path, **{"masked_lark.task": "aggregate", **keys}))


@pytest.mark.parametrize("task, phases", [
    ("train", ("masked_lark set-up (plan, label shares)", "masked_lark steps")),
    ("aggregate", ("masked_lark reports (browsers)", "masked_lark reduce"))])
def test_progress_draws_a_bar_per_phase_and_false_draws_none(tmp_path, capfd, task, phases):
    small = {"masked_lark.task": task, "masked_lark.epochs": 1, "masked_lark.reports": 200}
    masked_lark(config(tmp_path, progress=True, **small))
    shown = capfd.readouterr().err
    assert all(complete(shown, phase) for phase in phases)
    masked_lark(config(tmp_path, **small))
    assert "masked_lark" not in capfd.readouterr().err
