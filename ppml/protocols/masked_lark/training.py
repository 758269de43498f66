"""Conversion models trained on masked gradients (slide "Our solution - Masked aggregation"),
one SPMD program for the helpers, and a run end to end against the plaintext references.

Browser i sends helper k its share s_{i,k} of the one-hot label e_{y_i} (mod 2^64), sealed to
helper k, once.  At every step the helpers know the model M (the ad network's, public to them)
and the batch's features f_i (which the ad network provides); each helper computes the
gradient g_{i,c} for every label c (`models.label_gradients`, clipped, in fixed point) and its
share G_k = sum_i sum_c s_{i,k,c} g_{i,c} (mod 2^64).  By bilinearity (the slides' lemma)
sum_k G_k = sum_i g_{i,y_i}: the fixed-point gradient of the true labels, bit for bit.  Each
helper adds its own noise and seals G_k + noise_k to the ad network, through the leader; the ad
network adds them up and takes the SGD step.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np

from ppml.crypto import hpke
from ppml.crypto.aead import MessageRejected
from ppml.crypto.fixed import encode
from ppml.data.conversions import Examples, load_conversions
from ppml.privacy import accounting
from ppml.privacy.views import ViewRecorder
from ppml.protocols.masked_lark.aggregation import (LEADER, exchange_public_keys,
                                                     from_leader, parcels, to_leader)
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.helper_keys import HelperKeys
from ppml.protocols.masked_lark.lemma import inner_product_share
from ppml.protocols.masked_lark.models import (label_gradients, loss, parameters, probabilities,
                                               true_label_gradients)
from ppml.protocols.masked_lark.noise import helper_noise
from ppml.protocols.masked_lark.plan import Plan, sensitivity, training_plan
from ppml.protocols.masked_lark.roles import LabelHolders, ModelOwner, release_info
from ppml.runtime import progress, roles, spmd
from ppml.runtime.checkpoints import CheckpointPlan, RankCheckpoints
from ppml.runtime.cluster import ensure_ray

ADNET = "adnet"
"""The ad network's checkpoint folder, and its party's name in a federated run."""


def training_program(ctx, options: MaskedLarkOptions, precision_bits: int,
                     seed: int | None = None, browsers=None, adnet=None, workers: int = 1,
                     checkpoints: CheckpointPlan | None = None) -> dict:
    """The helpers' masked-gradient training for every helper this process holds (see the
    module docstring); ``browsers`` and ``adnet`` are the leader's (None at the other
    helpers): the ad network's plan (`plan.Plan`), features and model reach every helper
    from it; ``workers``: each helper's, over which it opens the label shares.  Returns the
    seconds, ``replays`` (`RankCheckpoints.replays`) and, EVALUATION ONLY, each held helper's
    noise per step and, when the engine records views, each held helper's label ``shares``
    and ``view`` (what it received over the engine).

    ``checkpoints`` (a `CheckpointPlan`): a step is one SGD step (one batch's release); every
    ``every`` steps the ad network saves its model and history and each helper its shares of
    the labels and its noise so far, each to its own store (`_checkpoint`); a resumed plan goes
    on from the last step all of them hold (`_resume`), without the label shares' upload."""
    mine = [j for j in range(ctx.parties) if ctx.holds(j)]
    if ctx.holds(LEADER) and (browsers is None or adnet is None):
        raise ValueError("the leader (helper 0) needs the browsers and the ad network")
    start = time.perf_counter()
    with progress.stage("masked_lark set-up (plan, label shares)", enabled=ctx.holds(LEADER)):
        saving = checkpoints and RankCheckpoints(checkpoints, ctx)
        first, states = _resume(ctx, saving, adnet)
        features, plan, theta, release_key = _setup(ctx, adnet)
        if first:
            shares = {j: state["labels"] for j, state in zip(ctx.comm.held_ranks, states)}
            noise = {j: state["noise"].tolist() for j, state in zip(ctx.comm.held_ranks,
                                                                    states)}
        else:
            shares = _label_shares(ctx, mine, workers, browsers, plan.classes)
            noise = {j: [] for j in mine}
    model, classes, scale = plan.model, plan.classes, plan.scale
    setup_s = time.perf_counter() - start

    start = time.perf_counter()
    for step in progress.track(range(first, len(plan.batches)), "masked_lark steps",
                               len(plan.batches), initial=first, enabled=ctx.holds(LEADER)):
        batch = plan.batches[step]
        grads = encode(label_gradients(model, np.asarray(theta), features[batch], classes,
                                       options.clip), precision_bits, "a label's gradient")
        boxes = {}
        for j in mine:
            share = inner_product_share(shares[j][batch].ravel(),
                                        grads.reshape(-1, grads.shape[2]))      # the lemma
            drawn = np.zeros(grads.shape[2], np.int64) if scale is None else helper_noise(
                options.noise, scale, (grads.shape[2],), seed, j, step)
            noise[j].append(drawn.tolist())
            boxes[j] = np.frombuffer(hpke.seal(release_key, (share + drawn.astype(np.uint64))
                                               .tobytes(), release_info(j, step)), np.uint8)
        theta = _step(ctx, adnet, boxes, step)
        if saving:
            _checkpoint(ctx, saving, adnet, step + 1, shares, noise)
    views = ctx.comm.views is not None
    return {"setup_s": setup_s, "train_s": time.perf_counter() - start,
            "replays": saving.replays if saving else [],
            "noise": ctx.per_party([noise[j] for j in mine]),
            "shares": ctx.per_party([shares[j] for j in mine]) if views else None,
            "view": ctx.view() if views else None}


def _resume(ctx, saving: RankCheckpoints | None, adnet) -> tuple:
    """The step to go on from and each held helper's state then (0 and empty states for a
    fresh run): the last step every helper and the ad network hold.  The leader asks the ad
    network which steps it holds (public numbers, broadcast to the helpers) and has it restore
    its own state; no helper reads another's, nor the ad network's."""
    if not (saving and saving.plan.resume):
        return 0, [{} for _ in ctx.comm.held_ranks]
    held = adnet.call("checkpoint_steps") if ctx.holds(LEADER) else None
    first, states = saving.start([ctx.comm.broadcast(held, LEADER, "ad network's checkpoints")])
    if first and ctx.holds(LEADER):
        adnet.call("load_checkpoint", first)
    return first, states


def _checkpoint(ctx, saving: RankCheckpoints, adnet, step: int, shares: dict,
                noise: dict) -> None:
    """After ``step`` steps: note the progress and, when due, have the ad network save its
    own state (the leader asks it, `ModelOwner.checkpoint_state`) and each held helper its
    shares of the one-hot labels (the slide's alpha_{i,k}, beta_{i,k}) and its noise so far
    (EVALUATION ONLY output; in seeded mode each step's draw is derived from the step)."""
    if saving.plan.due(step):
        if ctx.holds(LEADER):
            adnet.call("save_checkpoint", step)
        saving.save(step, [{"labels": shares[j], "noise": np.asarray(noise[j], np.int64)}
                           for j in ctx.comm.held_ranks])
    saving.reached(step)


def _setup(ctx, adnet) -> tuple:
    """What every helper takes from the ad network through the leader: the features, the
    public plan (`plan.Plan`), the model and the release key."""
    setup, release_key = None, None
    if ctx.holds(LEADER):
        setup, release_key = adnet.call("setup"), adnet.call("public_key")
    features = next(iter(from_leader(ctx, lambda j: setup[0], "features").values()))
    wired, theta = ctx.comm.broadcast(None if setup is None else
                                      (setup[1], np.asarray(setup[2]).tolist()), LEADER,
                                      "plan")
    release_key = hpke.public_key(bytes(ctx.comm.broadcast(release_key, LEADER, "release key")))
    return features, Plan.from_wire(wired), theta, release_key


def _label_shares(ctx, mine: list, workers: int, browsers, classes: int) -> dict:
    """Each held helper's shares of every example's one-hot label, (n, ``classes``) uint64,
    opened with its own HPKE keys (made here, gone after) from the browsers' reports through
    the leader.  A share that fails to open stops the training, naming the example."""
    own = {j: HelperKeys(j, workers) for j in mine}
    try:
        public_keys = exchange_public_keys(ctx, own)
        reports = browsers.call("label_shares", public_keys) if ctx.holds(LEADER) else None
        public, sealed = parcels(ctx, reports, 8 * classes + hpke.OVERHEAD_BYTES)
        shares = {}
        for j, keys in own.items():
            plain, opened = keys.open(sealed[j], public)
            if not opened.all():
                raise MessageRejected(f"example {int(np.argmin(opened))}'s label share failed "
                                      f"to open at helper {j} (altered, sealed to another key "
                                      f"or for another context)")
            shares[j] = plain.view(np.uint64).reshape(len(public), classes)
    finally:
        for keys in own.values():
            keys.close()
    return shares


def _step(ctx, adnet, boxes: dict, step: int):
    """The helpers' sealed shares reach the ad network through the leader; its new model
    comes back to every helper (one broadcast)."""
    gathered = to_leader(ctx, boxes, "gradient")
    theta = None if gathered is None else adnet.call("step", gathered, step).tolist()
    return ctx.comm.broadcast(theta, LEADER, "model")          # floats: exact as literals


@dataclass
class TrainingResult:
    """A training run's rows (one per step, and per epoch the test metrics) and summary."""

    rows: list
    summary: dict
    views: dict = field(default_factory=dict)
    replays: list = field(default_factory=list)
    """(the step a resume went on from, the last step finished before), per resume
    (`RankCheckpoints.replays`): the steps in between ran twice."""


def run_training(options: MaskedLarkOptions, dataset: str, helpers: int, data_seed: int,
                 data_dir=None, precision_bits: int = 20, seed: int | None = None,
                 runtime: str = "local", workers: int = 1, record_views: bool = False,
                 timeout_s: float = roles.DEFAULT_TIMEOUT_S,
                 checkpoints: CheckpointPlan | None = None,
                 data: Examples | None = None) -> TrainingResult:
    """Train on ``dataset`` (`ppml.data.conversions`) with ``helpers`` helpers: the browsers
    load their labels and the ad network its features, each in its own role; the evaluation
    (`evaluate_training`) uses both, ``data`` if the caller loaded them already, else loaded
    here (EVALUATION ONLY).  ``checkpoints``: the plan of the helpers (named `helper_names`)
    and the ad network (`ADNET`), see `training_program`."""
    data = load_conversions(dataset, data_dir, data_seed) if data is None else data
    plan = training_plan(options, data, data_seed, precision_bits)     # fails before any role
    if workers > 1:
        ensure_ray()                   # the browsers' tasks and the helpers' workers
    adnet = roles.spawn(ModelOwner, runtime, options, dataset, data_dir, data_seed,
                        precision_bits, timeout_s=timeout_s)
    browsers = roles.spawn(LabelHolders, runtime, dataset, data_dir, data_seed, seed, workers,
                           timeout_s=timeout_s)
    try:
        if checkpoints:
            adnet.call("use_checkpoints", checkpoints, ADNET)
        program = functools.partial(training_program, options=options,
                                    precision_bits=precision_bits, seed=seed, workers=workers,
                                    checkpoints=checkpoints)
        start = time.perf_counter()
        outs = spmd.run(program, parties=helpers, runtime=runtime, seed=seed,
                        record_views=record_views,
                        inputs={LEADER: {"browsers": browsers, "adnet": adnet}},
                        timeout_s=timeout_s)
        run_s = time.perf_counter() - start
        thetas, released = adnet.call("history")
    finally:
        roles.teardown([adnet, browsers])
    return evaluate_training(options, data, plan, precision_bits, outs, thetas, released, run_s)


def helper_names(helpers: int) -> list:
    """The helpers by rank: their checkpoint folders, and their parties' names in a federated
    run."""
    return [f"helper-{j}" for j in range(helpers)]


def plaintext_training(model: str, data: Examples, batches: list, options: MaskedLarkOptions,
                       precision_bits: int) -> tuple:
    """The same model, batches and clipping in float64 on the true labels: the model before
    each step, and the seconds of the whole training (the leanest honest loop: one clipped
    gradient per example, its true label's, `true_label_gradients`)."""
    theta = np.zeros(parameters(model, data.x_train.shape[1], data.classes))
    thetas, start = [], time.perf_counter()
    for batch in batches:
        thetas.append(theta)
        grads = true_label_gradients(model, theta, data.x_train[batch], data.y_train[batch],
                                     data.classes, options.clip)
        theta = theta - options.learning_rate * grads.sum(axis=0) / len(batch)
    seconds = time.perf_counter() - start
    thetas.append(theta)
    return thetas, seconds


def _metrics(model: str, theta: np.ndarray, data: Examples) -> dict:
    p = probabilities(model, theta, data.x_test, data.classes)
    from sklearn.metrics import roc_auc_score   # imported here: see ppml/data/__init__.py
    auc = roc_auc_score(data.y_test, p[:, 1]) if data.classes == 2 else \
        roc_auc_score(data.y_test, p, multi_class="ovr")
    return {"accuracy": float(np.mean(p.argmax(axis=1) == data.y_test)), "auc": float(auc),
            "test_loss": loss(model, theta, data.x_test, data.y_test, data.classes)}


def evaluate_training(options: MaskedLarkOptions, data: Examples, plan: Plan,
                      precision_bits: int, outs: list, thetas: list, released: list,
                      run_s: float) -> TrainingResult:
    """EVALUATION ONLY: the rows and summary of a training from the helpers' outputs (by
    helper) and the ad network's history: every step's released gradient against the
    fixed-point gradient of the true labels plus the helpers' noise, every epoch's test
    metrics against the float64 plaintext training on the same batches (`plaintext_training`,
    timed here)."""
    model, batches, scale, params = plan.model, plan.batches, plan.scale, plan.params
    plain, plain_s = plaintext_training(model, data, batches, options, precision_bits)
    noise = np.sum([np.asarray(out["noise"], dtype=np.int64) for out in outs], axis=0)
    per_epoch = len(batches) // options.epochs
    rows, equal = [], 0
    for step, batch in enumerate(batches):
        theta, y = np.asarray(thetas[step]), data.y_train[batch]
        truth = encode(label_gradients(model, theta, data.x_train[batch], data.classes,
                                       options.clip)[np.arange(len(y)), y], precision_bits)
        exact = bool(np.array_equal(truth.sum(axis=0, dtype=np.uint64),
                                    released[step] - noise[step].astype(np.uint64)))
        equal += exact
        row = {"epoch": step // per_epoch, "step": step,
               "loss": loss(model, theta, data.x_train[batch], y, data.classes),
               "gradient_equal_plaintext": exact, "method": "masked",
               "accuracy": None, "auc": None, "test_loss": None}
        if (step + 1) % per_epoch == 0:
            row.update(_metrics(model, np.asarray(thetas[step + 1]), data))
            rows.append(row)
            rows.append({"epoch": step // per_epoch, "step": step, "method": "plaintext",
                         "loss": None, "gradient_equal_plaintext": None,
                         **_metrics(model, plain[step + 1], data)})
        else:
            rows.append(row)
    privacy = accounting.guarantee(options.noise, float(scale) / 2.0 ** precision_bits,
                                   sensitivity(options, params, precision_bits, options.epochs),
                                   options.delta) if scale else \
        {"epsilon": None, "delta": None, "rho": None}
    final = {method: next(row["auc"] for row in reversed(rows)
                          if row["method"] == method and row["auc"] is not None)
             for method in ("masked", "plaintext")}
    summary = {"model": model, "steps": len(batches),
               "final_auc": final["masked"], "plaintext_auc": final["plaintext"],
               "gradient_equal_plaintext_steps": equal,
               "epsilon_total": privacy["epsilon"], "delta_total": privacy["delta"],
               "protocol_s": run_s,
               "setup_s": max(out["setup_s"] for out in outs),
               "train_s": max(out["train_s"] for out in outs),
               "plaintext_train_s": plain_s}
    return TrainingResult(rows, summary, {f"helper-{j}": model_view(out["view"])
                                          for j, out in enumerate(outs) if out["view"]},
                          outs[0]["replays"])


def model_view(entries: list):
    """A helper's view table (`ppml.privacy.views.VIEW_SCHEMA`) of what in it depends on the
    labels: the model the ad network sends after every step (t = the step, position = the
    parameter).  The rest of what it receives is the features, the batches, the labels'
    public parts and sealed shares, and the release key, none of which depends on a label
    (tests/protocols/masked_lark/test_views.py)."""
    recorder = ViewRecorder(True)
    models = [payload for _, _, tag, _, payload in entries if tag == "model"]
    for step, theta in enumerate(models):
        recorder.record(step + 1, 0, list(theta))
    return recorder.table()
