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
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from sklearn.metrics import roc_auc_score

from ppml.crypto import hpke
from ppml.crypto.fixed import encode
from ppml.data.conversions import Examples, load_conversions
from ppml.privacy import accounting
from ppml.privacy.views import ViewRecorder
from ppml.protocols.masked_lark.aggregation import (LEADER, exchange_public_keys,
                                                     from_leader, parcels, to_leader)
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.lemma import inner_product_share
from ppml.protocols.masked_lark.models import label_gradients, loss, parameters, probabilities
from ppml.protocols.masked_lark.noise import helper_noise
from ppml.protocols.masked_lark.reports import info
from ppml.protocols.masked_lark.protocol import peer_timeout
from ppml.protocols.masked_lark.roles import LabelHolders, ModelOwner, release_info
from ppml.runtime import roles, spmd


def schedule(examples: int, batch_size: int, epochs: int, seed: int) -> list:
    """The batches of every epoch: a fresh public permutation per epoch from ``seed``, cut
    into ``batch_size`` (the last batch of an epoch may be smaller)."""
    rng = np.random.default_rng([seed, 0x5D])
    out = []
    for _ in range(epochs):
        order = rng.permutation(examples)
        out += [order[k:k + batch_size].tolist() for k in range(0, examples, batch_size)]
    return out


def training_program(ctx, options: MaskedLarkOptions, model: str, classes: int,
                     precision_bits: int, scale, seed: int | None = None, browsers=None,
                     adnet=None) -> dict:
    """The helpers' masked-gradient training for every helper this process holds (see the
    module docstring); ``scale``: each helper's noise per coordinate in fixed-point units (a
    Fraction), None for none.  Returns the seconds and, EVALUATION ONLY, each held helper's
    noise per step and, when the engine records views, each held helper's label ``shares``
    and ``view`` (what it received over the engine)."""
    mine = [j for j in range(ctx.parties) if ctx.holds(j)]
    start = time.perf_counter()
    own = {j: hpke.HpkeKey() for j in mine}
    public_keys = exchange_public_keys(ctx, own)
    reports, setup, release_key = None, None, None
    if ctx.holds(LEADER):
        reports = browsers.call("label_shares", public_keys)
        setup, release_key = adnet.call("setup"), adnet.call("public_key")
    features = next(iter(from_leader(ctx, lambda j: setup[0], "features").values()))
    batches, theta = ctx.comm.broadcast(None if setup is None else
                                        (setup[1], setup[2].tolist()), LEADER, "batches")
    release_key = hpke.public_key(bytes(ctx.comm.broadcast(release_key, LEADER, "release key")))
    public, sealed = parcels(ctx, reports, 8 * classes + hpke.OVERHEAD_BYTES)
    shares = {j: _open_labels(own[j], j, sealed[j], public, classes) for j in mine}
    setup_s = time.perf_counter() - start

    start, noise = time.perf_counter(), {j: [] for j in mine}
    for step, batch in enumerate(batches):
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
    views = ctx.comm.views is not None
    return {"setup_s": setup_s, "train_s": time.perf_counter() - start,
            "noise": ctx.per_party([noise[j] for j in mine]),
            "shares": ctx.per_party([shares[j] for j in mine]) if views else None,
            "view": ctx.view() if views else None}


def _open_labels(key, helper: int, sealed: np.ndarray, public: np.ndarray,
                 classes: int) -> np.ndarray:
    """Helper ``helper``'s shares of every example's one-hot label: (n, classes) uint64.  A
    share that fails to open stops the training, naming the example."""
    out = np.zeros((len(public), classes), dtype=np.uint64)
    for i in range(len(public)):
        out[i] = np.frombuffer(key.open(sealed[i].tobytes(), info(helper, public[i].tobytes()),
                                        f"example {i}'s label share"), dtype=np.uint64)
    return out


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


def fixed_noise_scale(options: MaskedLarkOptions, params: int, precision_bits: int):
    """Each helper's noise per coordinate in fixed-point units for ``epsilon`` per epoch
    (each example is in one batch an epoch): OpenDP's scale for the sensitivity in real units
    (`_sensitivity`), times 2^L, as the exact rational of its float; None when not private."""
    if not options.private:
        return None
    real = accounting.scale_for(options.noise, options.epsilon,
                                _sensitivity(options, params, precision_bits), options.delta)
    return Fraction(real * 2.0 ** precision_bits)


def _sensitivity(options, params: int, precision_bits: int, epochs: int = 1) -> float:
    """How far one example moves the released gradients of ``epochs`` epochs, in real units:
    its clipped gradient (``clip`` in L2, ``clip`` sqrt(params) in L1) plus the encoding's
    rounding, half a unit of 2^-L per coordinate."""
    unit = 2.0 ** -precision_bits
    return accounting.sensitivity(options.noise, options.clip + math.sqrt(params) * unit / 2,
                                  options.clip * math.sqrt(params) + params * unit / 2, epochs)


def run_training(options: MaskedLarkOptions, dataset: str, helpers: int, data_seed: int,
                 data_dir=None, precision_bits: int = 20, seed: int | None = None,
                 runtime: str = "local", workers: int = 1, record_views: bool = False,
                 timeout_s: float = roles.DEFAULT_TIMEOUT_S) -> TrainingResult:
    """Train on ``dataset`` (`ppml.data.conversions`) with ``helpers`` helpers: the browsers
    load their labels and the ad network its features, each in its own role; the evaluation
    loads both (EVALUATION ONLY) to check every step against the fixed-point gradient of the
    true labels, and every epoch against the float64 plaintext training on the same
    batches."""
    data = load_conversions(dataset, data_dir, data_seed)
    model = options.model or ("logistic" if data.classes == 2 else "softmax")
    if model == "logistic" and data.classes != 2:
        raise ValueError(f"masked_lark.model=logistic needs two classes; the data has "
                         f"{data.classes}: use softmax")
    params = parameters(model, data.x_train.shape[1], data.classes)
    batches = schedule(len(data.x_train), options.batch_size, options.epochs, data_seed)
    scale = fixed_noise_scale(options, params, precision_bits)
    adnet = roles.spawn(ModelOwner, runtime, dataset, data_dir, data_seed, params, batches,
                        options.learning_rate, precision_bits, timeout_s=timeout_s)
    browsers = roles.spawn(LabelHolders, runtime, dataset, data_dir, data_seed, seed, workers,
                           timeout_s=timeout_s)
    try:
        program = functools.partial(training_program, options=options, model=model,
                                    classes=data.classes, precision_bits=precision_bits,
                                    scale=scale, seed=seed)
        start = time.perf_counter()
        outs = spmd.run(program, parties=helpers, runtime=runtime, seed=seed,
                        record_views=record_views,
                        inputs={LEADER: {"browsers": browsers, "adnet": adnet}},
                        **peer_timeout(runtime, timeout_s))
        run_s = time.perf_counter() - start
        thetas, released = adnet.call("history")
    finally:
        roles.teardown([adnet, browsers])
    plain, plain_s = plaintext_training(model, data, batches, options, precision_bits)
    return _evaluate(options, data, model, batches, precision_bits, outs, thetas, released,
                     plain, plain_s, run_s, scale, params)


def plaintext_training(model: str, data: Examples, batches: list, options: MaskedLarkOptions,
                       precision_bits: int) -> tuple:
    """The same model, batches and clipping in float64 on the true labels: the model before
    each step, and the seconds of each epoch (the leanest honest loop: one clipped gradient
    per example)."""
    theta = np.zeros(parameters(model, data.x_train.shape[1], data.classes))
    per_epoch = len(batches) // options.epochs
    thetas, seconds, start = [], [], time.perf_counter()
    for step, batch in enumerate(batches):
        thetas.append(theta)
        y = data.y_train[batch]
        grads = label_gradients(model, theta, data.x_train[batch], data.classes, options.clip)
        theta = theta - options.learning_rate * grads[np.arange(len(y)), y].sum(axis=0) / len(y)
        if (step + 1) % per_epoch == 0:
            seconds.append(time.perf_counter() - start)
            start = time.perf_counter()
    thetas.append(theta)
    return thetas, seconds


def _metrics(model: str, theta: np.ndarray, data: Examples) -> dict:
    p = probabilities(model, theta, data.x_test, data.classes)
    auc = roc_auc_score(data.y_test, p[:, 1]) if data.classes == 2 else \
        roc_auc_score(data.y_test, p, multi_class="ovr")
    return {"accuracy": float(np.mean(p.argmax(axis=1) == data.y_test)), "auc": float(auc),
            "test_loss": loss(model, theta, data.x_test, data.y_test, data.classes)}


def _evaluate(options, data, model, batches, precision_bits, outs, thetas, released, plain,
              plain_s, run_s, scale, params) -> TrainingResult:
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
                                   _sensitivity(options, params, precision_bits, options.epochs),
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
               "plaintext_epoch_s": float(np.mean(plain_s)),
               "epoch_slowdown": max(out["train_s"] for out in outs) / options.epochs
               / float(np.mean(plain_s))}
    return TrainingResult(rows, summary, {f"helper-{j}": model_view(out["view"])
                                          for j, out in enumerate(outs) if out["view"]})


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
