"""The public plan of a conversion model's training (slide "Our solution - Masked
aggregation"): the ad network fixes it from what it knows (the features, the number of
classes, the config) and the helpers take it from the ad network.

* `schedule`: the batches of every epoch;
* `fixed_noise_scale`: each helper's noise per coordinate, in fixed-point units, for
  ``epsilon`` per epoch;
* `Plan` / `training_plan`: all of it for one dataset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ppml.data.conversions import Examples
from ppml.privacy import accounting
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.models import parameters


@dataclass(frozen=True)
class Plan:
    """A training's public plan: the ``model``, the number of ``classes`` and of ``params``,
    the ``batches`` of every epoch and each helper's noise ``scale`` per coordinate in
    fixed-point units (None: not private)."""

    model: str
    classes: int
    params: int
    batches: list
    scale: Fraction | None

    def wire(self) -> list:
        """The plan as Python literals (the engine's broadcast carries literals only)."""
        scale = None if self.scale is None else [self.scale.numerator, self.scale.denominator]
        return [self.model, self.classes, self.params, self.batches, scale]

    @staticmethod
    def from_wire(values) -> "Plan":
        model, classes, params, batches, scale = values
        return Plan(model, classes, params, batches,
                    None if scale is None else Fraction(*scale))


def training_plan(options: MaskedLarkOptions, data: Examples, data_seed: int,
                  precision_bits: int) -> Plan:
    """The plan of training on ``data`` (its shapes only: features and classes); ValueError
    for a model that does not fit the number of classes."""
    model = options.model or ("logistic" if data.classes == 2 else "softmax")
    if model == "logistic" and data.classes != 2:
        raise ValueError(f"masked_lark.model=logistic needs two classes; the data has "
                         f"{data.classes}: use softmax")
    params = parameters(model, data.x_train.shape[1], data.classes)
    return Plan(model, data.classes, params,
                schedule(len(data.x_train), options.batch_size, options.epochs, data_seed),
                fixed_noise_scale(options, params, precision_bits))


def schedule(examples: int, batch_size: int, epochs: int, seed: int) -> list:
    """The batches of every epoch: a fresh public permutation per epoch from ``seed``, cut
    into ``batch_size`` (the last batch of an epoch may be smaller)."""
    rng = np.random.default_rng([seed, 0x5D])
    out = []
    for _ in range(epochs):
        order = rng.permutation(examples)
        out += [order[k:k + batch_size].tolist() for k in range(0, examples, batch_size)]
    return out


def fixed_noise_scale(options: MaskedLarkOptions, params: int, precision_bits: int):
    """Each helper's noise per coordinate in fixed-point units for ``epsilon`` per epoch
    (each example is in one batch an epoch): OpenDP's scale for the sensitivity in real units
    (`sensitivity`), times 2^L, as the exact rational of its float; None when not private."""
    if not options.private:
        return None
    real = accounting.scale_for(options.noise, options.epsilon,
                                sensitivity(options, params, precision_bits), options.delta)
    return Fraction(real * 2.0 ** precision_bits)


def sensitivity(options: MaskedLarkOptions, params: int, precision_bits: int,
                epochs: int = 1) -> float:
    """How far one example moves the released gradients of ``epochs`` epochs, in real units:
    its clipped gradient (``clip`` in L2, ``clip`` sqrt(params) in L1) plus the encoding's
    rounding, half a unit of 2^-L per coordinate."""
    unit = 2.0 ** -precision_bits
    return accounting.sensitivity(options.noise, options.clip + math.sqrt(params) * unit / 2,
                                  options.clip * math.sqrt(params) + params * unit / 2, epochs)
