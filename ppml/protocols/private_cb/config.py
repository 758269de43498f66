"""The private contextual bandit's parameters (Hannun et al., sections 3 and 7): the
`private_cb` config group and the public parameters every party of a run knows.

`PrivateCBOptions` is what a user sets (``private_cb.epsilon=0.1``...); `PrivateCBConfig` adds
the run's sizes (parties, arms, dims, horizon).  Each value is checked once, when the object is
made; the protocol trusts it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ppml.checks import check_int, check_one_of, check_real
from ppml.mpc.functions import RECIPROCAL_METHODS, START_VALUES
from ppml.mpc.protocols.argmax import METHODS


@dataclass
class PrivateCBOptions:
    """The ``private_cb`` config group: Algorithm 1's own keys."""

    epsilon: float = 0.1
    """Exploration probability of epsilon-greedy (Theorem 1: eta = log(|A| / epsilon))."""
    regularizer: float = 0.0
    """Diagonal regulariser delta: W_a starts at (1 + delta) I (section 7)."""
    refresh_every: int = 0
    """Recompute the exact inverse every k steps (0: never, as in the paper; section 7)."""
    reciprocal: Optional[str] = None
    """Eq. 1's reciprocal: 'window' (one opening and a dealer one-hot over a table: 2 rounds and
    a product), 'newton' (the paper's Newton-Raphson, with the next two keys) or 'auto' (window
    where it fits the domain and precision); None: newton when nr_iterations or
    reciprocal_start=paper is set, else auto."""
    nr_iterations: Optional[int] = None
    """reciprocal=newton: its iterations (None: enough for precision_bits)."""
    reciprocal_start: str = "linear"
    """reciprocal=newton: its start value, 'linear' (minimax on the domain) or 'paper'."""
    argmax_method: str = "auto"
    """Secure argmax: 'pairwise' (Algorithm 2: fewest rounds, memory and bytes quadratic in the
    arms), 'tournament' (linear) or 'auto' (pairwise up to 128 arms, tournament above)."""
    reward_bound: float = 1.0
    """Public: p'' refuses a reward r_t with |r_t| above it."""
    checkpoints: int = 0
    """Shares of (W^-1, b) each feature party keeps during the run for the membership-inference
    audit of the experiment (0: none)."""

    def __post_init__(self) -> None:
        check_real("private_cb.epsilon", self.epsilon, 0.0, 1.0)
        check_real("private_cb.regularizer", self.regularizer, 0.0)
        check_real("private_cb.reward_bound", self.reward_bound, 0.0, low_open=True)
        check_int("private_cb.refresh_every", self.refresh_every, 0)
        if self.nr_iterations is not None:
            check_int("private_cb.nr_iterations", self.nr_iterations, 0)
        check_one_of("private_cb.reciprocal_start", self.reciprocal_start, START_VALUES)
        if self.reciprocal is not None:
            check_one_of("private_cb.reciprocal", self.reciprocal, RECIPROCAL_METHODS)
        if self.reciprocal in ("window", "auto") and (self.nr_iterations is not None
                                            or self.reciprocal_start != "linear"):
            raise ValueError("private_cb.nr_iterations and private_cb.reciprocal_start set "
                             "Newton's reciprocal: they need private_cb.reciprocal=newton (or "
                             f"unset), got nr_iterations={self.nr_iterations}, reciprocal_start="
                             f"{self.reciprocal_start!r} with reciprocal={self.reciprocal}")
        check_one_of("private_cb.argmax_method", self.argmax_method, METHODS)
        check_int("private_cb.checkpoints", self.checkpoints, 0)


@dataclass(kw_only=True)
class PrivateCBConfig(PrivateCBOptions):
    """The public parameters every party knows: the options and the run's sizes."""

    parties: int
    arms: int
    dims: int
    horizon: int

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("parties", self.parties, 2)
        check_int("arms", self.arms, 1)
        check_int("horizon", self.horizon, 1)
        check_int("dims", self.dims, 1)
        if self.dims < self.parties:
            raise ValueError(f"dims must be >= parties ({self.parties}) so that every feature party"
                             f" owns a feature, got dims={self.dims}")

    @classmethod
    def of(cls, options: PrivateCBOptions, *, parties: int, arms: int, dims: int,
           horizon: int) -> "PrivateCBConfig":
        """The config of a run with these options and sizes."""
        fields = {name: getattr(options, name) for name in PrivateCBOptions.__dataclass_fields__}
        return cls(**fields, parties=parties, arms=arms, dims=dims, horizon=horizon)

    @property
    def puller(self) -> int:
        return self.parties

    @property
    def rewarder(self) -> int:
        return self.parties + 1

    @functools.cached_property
    def feature_blocks(self) -> list:
        """The columns each feature party owns: contiguous, as equal as possible."""
        return np.array_split(np.arange(self.dims), self.parties)

    @property
    def reciprocal_method(self) -> str:
        """The reciprocal the run asks for: ``reciprocal``, or when unset newton if one of
        Newton's keys is set, else auto."""
        if self.reciprocal is not None:
            return self.reciprocal
        newton = self.nr_iterations is not None or self.reciprocal_start != "linear"
        return "newton" if newton else "auto"

    def reciprocal_options(self) -> dict:
        """The keyword arguments of eq. 1's reciprocal: the method, and Newton's own."""
        if self.reciprocal_method == "newton":
            return {"method": "newton", "iterations": self.nr_iterations,
                    "start": self.reciprocal_start}
        return {"method": self.reciprocal_method}

    def denominator_domain(self) -> tuple:
        return (1.0, 1.0 + 1.0 / (1.0 + self.regularizer))

    def wide(self, precision_bits: int, truncation: str) -> bool:
        """Whether W_a^-1, b_a and the scores s~ are kept at scale 2L (else L).

        At 2L, u_a = W_a^-1 x is a product at 3L and is truncated by 2L bits, which the bounded
        and exact truncations do correctly when |u_a| 2^(3L) < 2^62: |u_a| <= 1 because
        W_a >= I and |x_t| <= 1, so 3L <= 60.  b_a holds at most T rewards times x_t, so
        T reward_bound 2^(2L) must stay below 2^61.  The argmax compares the keys
        s~ A + gamma at 2L: the ridge estimate has |w_a| <= sqrt(T) reward_bound / 2 and an
        explored score is below 1, so |s~| <= max(sqrt(T) reward_bound, 1), and that times
        A 2^(2L) must stay below 2^60.
        The probabilistic truncation fails with probability |value| / 2^64 and keeps L.
        """
        L, bound = precision_bits, self.reward_bound
        return (truncation != "probabilistic" and 3 * L <= 60
                and self.horizon * bound < 2.0 ** (61 - 2 * L)
                and max(math.sqrt(self.horizon) * bound, 1.0) * self.arms < 2.0 ** (60 - 2 * L))
