"""The ad network's conversion models and their gradients for every label (slide "Our solution -
Masked aggregation"): the helpers compute, for each example i of a batch, the gradient
g_{i,c} = d loss(f_i, c, M) / d M of the model M for every label c, because they do not know
the label; the browsers' shares of the one-hot label pick the true one.

* ``logistic``: binary logistic regression, M = (w, b); g_{i,c} = (sigmoid(M . [f_i, 1]) - c)
  [f_i, 1] for c = 0, 1.
* ``softmax``: softmax regression over C classes, M = (C, features + 1);
  g_{i,c} = (softmax(M [f_i, 1]) - e_c) [f_i, 1]^T, flattened.

Each g_{i,c} is clipped to L2 norm at most ``clip`` (so one example moves a gradient sum by at
most ``clip``: the sensitivity of the helpers' noise) and encoded in fixed point with
``precision_bits`` fractional bits (`ppml.crypto.fixed.encode`, which refuses a value out of
range).  The helpers and the evaluation run `label_gradients`; the plaintext training, which
knows the labels, runs `true_label_gradients`, the same gradients of the true label alone.
"""

from __future__ import annotations

import numpy as np

MODELS = ("logistic", "softmax")


def with_bias(x: np.ndarray) -> np.ndarray:
    """[f_i, 1] for every row of ``x``."""
    return np.hstack([x, np.ones((len(x), 1))])


def parameters(model: str, features: int, classes: int) -> int:
    """How many numbers M has."""
    return features + 1 if model == "logistic" else classes * (features + 1)


def probabilities(model: str, theta: np.ndarray, x: np.ndarray, classes: int) -> np.ndarray:
    """(n, classes) predicted class probabilities of the model ``theta`` (flat)."""
    xb = with_bias(x)
    if model == "logistic":
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ theta, -500, 500)))
        return np.stack([1 - p, p], axis=1)
    logits = xb @ theta.reshape(classes, -1).T
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=1, keepdims=True)


def label_gradients(model: str, theta: np.ndarray, x: np.ndarray, classes: int,
                    clip: float) -> np.ndarray:
    """(n, classes, parameters): the gradient of the cross-entropy of every example of ``x``
    for every label, each clipped to L2 norm ``clip``."""
    xb = with_bias(x)
    p = probabilities(model, theta, x, classes)
    if model == "logistic":
        grads = (p[:, 1][:, None] - np.arange(2)[None, :])[:, :, None] * xb[:, None, :]
    else:
        residual = p[:, None, :] - np.eye(classes)[None, :, :]        # (n, label, class)
        grads = (residual[:, :, :, None] * xb[:, None, None, :]).reshape(len(x), classes, -1)
    return clipped(grads, clip)


def true_label_gradients(model: str, theta: np.ndarray, x: np.ndarray, y: np.ndarray,
                         classes: int, clip: float) -> np.ndarray:
    """(n, parameters): `label_gradients` of the true label ``y`` of every example only, the
    one gradient per example that training on known labels needs."""
    xb = with_bias(x)
    p = probabilities(model, theta, x, classes)
    if model == "logistic":
        grads = (p[:, 1] - y)[:, None] * xb
    else:
        residual = p - np.eye(classes)[y]                               # (n, class)
        grads = (residual[:, :, None] * xb[:, None, :]).reshape(len(x), -1)
    return clipped(grads, clip)


def clipped(grads: np.ndarray, clip: float) -> np.ndarray:
    """Each gradient (the last axis) scaled down to L2 norm at most ``clip``."""
    norms = np.linalg.norm(grads, axis=-1, keepdims=True)
    return grads * np.minimum(1.0, clip / np.maximum(norms, 1e-300))


def loss(model: str, theta: np.ndarray, x: np.ndarray, y: np.ndarray, classes: int) -> float:
    """Mean cross-entropy of ``theta`` on (``x``, ``y``)."""
    p = probabilities(model, theta, x, classes)
    return float(-np.mean(np.log(np.maximum(p[np.arange(len(y)), y], 1e-300))))
