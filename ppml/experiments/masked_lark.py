"""Masked LARK (Charles et al., slides): the differentially private map-reduce of conversion
reports over the synthetic click and conversion log (``masked_lark.task=aggregate``), and
conversion models trained on masked gradients (``masked_lark.task=train``, ``dataset=``
breast_cancer, digits or movielens).

Training rows: one per step (``epoch``, ``step``, the batch's ``loss`` before the step,
``gradient_equal_plaintext``: the helpers' shares before noise add up to the fixed-point
gradient of the true labels exactly), and per epoch the test ``accuracy``, ``auc`` and
``test_loss`` of the masked model and of the float64 plaintext model on the same batches
(``method``); ``replayed``: the step ran twice, after a resume (``checkpoint_every`` counts
steps; an aggregation has none to checkpoint).  Summary: the steps with equal gradients, the
total epsilon over the epochs, the seconds of the set-up, of training and of the lean float64
training (``plaintext_train_s``), and the slowdowns against it (`training_slowdowns`).

``python -m jobs.run experiment=masked_lark parties=<helpers> masked_lark.reports=...`` runs
one time window: the browsers' reports, the helpers' reduce on ppml's engine, the ad network's
release.  Rows: one per key with a counted report: ``key`` (``q<query>-a<advertiser>``),
``users``, ``suppressed``, ``true_sum`` (EVALUATION ONLY: from the browsers' records) and
``released_sum`` (None where suppressed).  The summary has whether the release equals the
plaintext reference's plus exactly the helpers' noise (``release_equal_reference``), the noise's
scale and the (epsilon, delta) and rho of one release, the reports' counts at each stage, and
the seconds of the setup, of making the reports (``generation_s``), of the helpers' phases
(``helper_*_s``) and of the whole protocol.  docs/masked-lark.md has the numbers.
"""

from __future__ import annotations

import functools

from ppml.data.conversions import load_conversions
from ppml.experiments import checkpointing
from ppml.experiments.config import RunConfig
from ppml.experiments.federation import run_parties
from ppml.experiments.registry import register
from ppml.experiments.results import RunOutput
from ppml.experiments.slowdown import slowdowns
from ppml.experiments.table import format_table
from ppml.protocols.masked_lark.plan import training_plan
from ppml.protocols.masked_lark.protocol import evaluate_aggregation, run_aggregation
from ppml.protocols.masked_lark.training import evaluate_training, helper_names, run_training

TRAINING_SHOWN = ("model", "steps", ("gradient_equal_plaintext_steps", "equal gradients"),
                  ("epsilon_total", "epsilon"), ("final_auc", "AUC"),
                  ("plaintext_auc", "plaintext AUC"), "train_s", ("slowdown_total", "slowdown"))
"""The printed summary of a training: are the gradients exact, how good is the model against
the plaintext one, how fast, how private."""
SHOWN = (("keys_released", "released"), ("keys_suppressed", "suppressed"),
         ("reports_counted", "reports"), ("release_equal_reference", "equals reference"),
         ("epsilon_release", "epsilon"), ("helper_s", "helper_s"), ("protocol_s", "protocol_s"),
         ("slowdown_total", "slowdown"))
"""The printed summary of an aggregation: is the release the reference's plus the noise, how
many keys it released, how fast, how private."""


def check_inputs(config: RunConfig):
    """The run's input check (`registry.register`), before anything starts: no checkpoints of
    an aggregation; a training run's conversion log loads (returned, for the evaluation)."""
    refuse_checkpoints(config)
    if config.masked_lark.task == "train":
        return load_conversions(config.dataset, config.data_dir, config.data_seed)
    return None


@register("masked_lark", check=check_inputs)
def masked_lark(config: RunConfig, data) -> RunOutput:
    federated = config.runtime == "federated"
    if config.masked_lark.task == "train":
        checkpointing.prepare(config)
        result = checkpointing.with_restarts(
            config, functools.partial(train_federated if federated else _train, data=data))
        mark_replayed(result)
        result.summary.update(training_slowdowns(result.summary))
        shown = TRAINING_SHOWN
    else:
        result = (aggregate_federated if federated else _aggregate)(config)
        result.summary.update(aggregation_slowdowns(result.summary))
        shown = SHOWN
    table = format_table([result.summary], shown)
    return RunOutput(rows=result.rows, summary=result.summary, table=table, views=result.views)


def refuse_checkpoints(config: RunConfig) -> None:
    """Checkpoints are for training, whose steps are its batches; an aggregation is one
    release of one time window, each phase over all reports at once (docs/masked-lark.md):
    ValueError naming checkpoint_every (or resume) there."""
    if config.masked_lark.task == "aggregate" and (config.checkpoint_every or config.resume):
        key = "resume" if config.resume else "checkpoint_every"
        raise ValueError(f"{key}: masked_lark.task=aggregate is one release with no steps to "
                         f"checkpoint (checkpoints are for masked_lark.task=train); set "
                         f"checkpoint_every=0 and no resume")


def training_total_s(summary: dict) -> float:
    """Everything a training pays: the whole protocol (``protocol_s``: the label shares' set-up,
    the engine's and the steps; at least ``setup_s + train_s``, since in a federated run
    ``protocol_s`` is the leader's, which may end a moment before another helper's slower
    set-up or steps)."""
    return max(summary["protocol_s"], summary["setup_s"] + summary["train_s"])


def training_slowdowns(summary: dict) -> dict:
    """A training's slowdowns against the lean float64 training of the same model, batches and
    clipping (``plaintext_train_s``): online, the helpers' steps (``train_s``); in total,
    `training_total_s`."""
    return slowdowns(summary["train_s"], training_total_s(summary), summary["plaintext_train_s"])


def aggregation_slowdowns(summary: dict) -> dict:
    """An aggregation's slowdowns against a trusted curator's plaintext release of the same
    reports (``plaintext_aggregate_s``, `reference.curator_release`): online, the helpers' own
    work (``helper_s``); in total, the roles' set-up and the whole protocol, the browsers'
    reports (shares, sealing) included (``setup_s + protocol_s``)."""
    return slowdowns(summary["helper_s"], summary["setup_s"] + summary["protocol_s"],
                     summary["plaintext_aggregate_s"])


def mark_replayed(result) -> None:
    """Each training row's ``replayed``: its step ran twice, after a resume (the plaintext
    reference's rows never do)."""
    replayed = checkpointing.replayed(result.replays, result.summary["steps"])
    for row in result.rows:
        row["replayed"] = row["method"] == "masked" and replayed[row["step"]]


def _train(config: RunConfig, data):
    return run_training(config.masked_lark, config.dataset, config.parties, config.data_seed,
                        data_dir=config.data_dir, precision_bits=config.precision_bits,
                        seed=config.seed, runtime=config.runtime, workers=config.workers,
                        record_views=config.record_views, timeout_s=config.party_timeout_s,
                        checkpoints=checkpointing.plan(config, helper_names(config.parties)),
                        data=data)


def _aggregate(config: RunConfig):
    return run_aggregation(config.masked_lark, config.parties, config.data_seed,
                           seed=config.seed, runtime=config.runtime, workers=config.workers,
                           record_views=config.record_views, timeout_s=config.party_timeout_s)


def aggregate_federated(config: RunConfig):
    """Every party its own process on loopback (`masked_lark_parties`), then the evaluation
    of any runtime on the helpers' outputs and the browsers' records (EVALUATION ONLY)."""
    outs = run_parties(config)
    helpers = [outs[f"helper-{j}"] for j in range(config.parties)]
    browsers = outs["browsers"]
    return evaluate_aggregation(config.masked_lark, [h["out"] for h in helpers],
                                browsers["audit_truth"], browsers["setup_s"],
                                helpers[0]["protocol_s"], browsers["seconds"])


def train_federated(config: RunConfig, data):
    """Every party its own process on loopback, then the evaluation of any runtime on the
    helpers' outputs and the ad network's history; the harness makes the plan itself from the
    examples ``data`` (`check_inputs` loaded them: EVALUATION ONLY)."""
    options = config.masked_lark
    plan = training_plan(options, data, config.data_seed, config.precision_bits)
    outs = run_parties(config)
    helpers = [outs[f"helper-{j}"] for j in range(config.parties)]
    return evaluate_training(options, data, plan, config.precision_bits,
                             [h["out"] for h in helpers], outs["adnet"]["thetas"],
                             outs["adnet"]["released"], helpers[0]["protocol_s"])
