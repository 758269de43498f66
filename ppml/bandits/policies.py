"""The plug-in interface of Samba (Ciucanu et al., section 4.1.2 and 4.2) and the six
algorithms of Fig. 4.

A `Policy` gives, for iteration l in [1, nb_A] of step t:

* ``compute_scores(t, l, s, n, p, draws)``: ComputeScore of several DOs at once (a DO group, or
  the reference's K arms): element i is DO_i's score from its own state s_i (sum of rewards),
  n_i (pulls), p_i (Pursuit) and its own private Beta draws ``draws[i]`` (Thompson sampling)
  only, never another entry (arm score locality, Theorem 1.1);
* ``kind(l)``: what Comp's SelectArm does with the permuted scores: ARGMAX or MATCH
  (probability matching);
* ``initial_p()``, ``after_iteration(l, p, bits)``: p_i at step 1 and each DO's local update
  of p_i with its own bit of iteration l < nb_A (Pursuit, section 4.2);
* ``explores(t, explore)``: epsilon-greedy's explore decision x <= eps_t, drawn from the
  stream seed_eps that the Controller and the DOs share (section 4.1.2), which enables the
  exploration shortcut of section 5.4 ("Algorithm-Specific Optimizations").

`select_arm(kind, scores, u)` is SelectArm over a permuted list: the first maximum (ties go to the
lowest permuted position, so the permutation sigma_t is argmax's tie-breaking randomness, as in
the proof of Theorem 2), or the first position whose cumulative score exceeds u times the total.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from ppml.bandits.samba_draws import Words

ARGMAX, MATCH = "argmax", "match"
ALGORITHMS = ("eps_greedy", "eps_greedy_decreasing", "ucb", "thompson", "softmax", "pursuit")
MIN_SOFTMAX_TAU = 1 / 600
"""e^(mu/tau) with mu <= 1 must stay finite in float64 after a mask of up to 2^32 (e^709 max)."""


def means(s: list, n: list) -> list:
    """The empirical means mu_i = s_i / n_i (Fig. 3)."""
    return [si / ni for si, ni in zip(s, n)]


@dataclass(frozen=True)
class AlgorithmSpec:
    """What DC sends at step 0 besides N: the algorithm A and its parameters (section 4.1.1).

    eps_greedy_decreasing uses f_eps(t) = min(1, eps_decay K / t) (the paper leaves f_eps open;
    this is Kuleshov & Precup's form with c / d^2 = eps_decay).
    """

    name: str
    epsilon: float = 0.1
    eps_decay: float = 1.0
    ucb_c: float = 2.0
    softmax_tau: float = 0.1
    pursuit_beta: float = 0.1

    def __post_init__(self):
        if self.name not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got "
                             f"{self.name!r}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {self.epsilon}")
        if not self.eps_decay > 0:
            raise ValueError(f"eps_decay must be > 0, got {self.eps_decay}")
        if not self.ucb_c > 0:
            raise ValueError(f"ucb_c must be > 0, got {self.ucb_c}")
        if not self.softmax_tau >= MIN_SOFTMAX_TAU:
            raise ValueError(f"softmax_tau must be >= 1/600 (e^(1/tau) overflows float64 "
                             f"below), got {self.softmax_tau}")
        if not 0.0 < self.pursuit_beta <= 1.0:
            raise ValueError(f"pursuit_beta must be in (0, 1], got {self.pursuit_beta}")

    def policy(self, arms: int) -> "Policy":
        return _POLICIES[self.name](self, arms)


class Policy:
    """ComputeScore / SelectArm of one algorithm (section 4.1.2); nb_A = ``iterations``."""

    iterations = 1
    exploring = False
    """Whether `explores` ever draws (epsilon-greedy only)."""

    def __init__(self, spec: AlgorithmSpec, arms: int):
        self.spec, self.arms = spec, arms

    def kind(self, l: int) -> str:
        return ARGMAX

    def explores(self, t: int, explore: Words) -> bool:
        return False

    def initial_p(self) -> float:
        """p_i after step 1's initial pull (Fig. 6(a)); only Pursuit uses it."""
        return 0.0

    def compute_scores(self, t: int, l: int, s: list, n: list, p: list, draws: list) -> list:
        """Each DO's ComputeScore(t, l) from its own entries of s, n, p and draws."""
        raise NotImplementedError

    def after_iteration(self, l: int, p: list, bits: list) -> list:
        """Each DO's p_i after its own pull bit of iteration l < nb_A."""
        return p


class EpsilonGreedy(Policy):
    """Fig. 4, epsilon-greedy with fixed eps: exploit argmax mu_i with probability 1 - eps."""

    exploring = True

    def epsilon(self, t: int) -> float:
        return self.spec.epsilon

    def explores(self, t, explore):
        """x from seed_eps, shared by the Controller and the DOs; x <= eps_t explores."""
        return explore.uniform() <= self.epsilon(t)

    def compute_scores(self, t, l, s, n, p, draws):
        return means(s, n)


class DecreasingEpsilonGreedy(EpsilonGreedy):
    """Fig. 4, epsilon-greedy with decreasing eps_t = f_eps(t) = min(1, eps_decay K / t)."""

    def epsilon(self, t):
        return min(1.0, self.spec.eps_decay * self.arms / t)


class UCB(Policy):
    """Fig. 4, UCB: argmax mu_i + sqrt(c ln t / n_i) (c = 2 in the paper)."""

    def compute_scores(self, t, l, s, n, p, draws):
        c, sqrt = self.spec.ucb_c * math.log(t), math.sqrt
        return [si / ni + sqrt(c / ni) for si, ni in zip(s, n)]


class Thompson(Policy):
    """Fig. 4, Thompson sampling: argmax theta_i ~ Beta(s_i + 1, n_i - s_i + 1), drawn from
    DO_i's own independent stream (the authors reseed one stream per arm: correlated draws)."""

    def compute_scores(self, t, l, s, n, p, draws):
        return [d.beta(si + 1, ni - si + 1) for si, ni, d in zip(s, n, draws)]


class Softmax(Policy):
    """Fig. 4, Softmax: arm i with probability e^(mu_i/tau) / sum_j e^(mu_j/tau)."""

    def kind(self, l):
        return MATCH

    def compute_scores(self, t, l, s, n, p, draws):
        tau, exp = self.spec.softmax_tau, math.exp
        return [exp(si / ni / tau) for si, ni in zip(s, n)]


class Pursuit(Policy):
    """Fig. 4 and section 4.2, Pursuit (nb_A = 2): l = 1 is argmax mu_i, after which each DO
    moves p_i towards its bit, p_i += beta (b_i - p_i); l = 2 matches the p_i."""

    iterations = 2

    def kind(self, l):
        return ARGMAX if l == 1 else MATCH

    def initial_p(self):
        return 1.0 / self.arms

    def compute_scores(self, t, l, s, n, p, draws):
        return means(s, n) if l == 1 else p

    def after_iteration(self, l, p, bits):
        beta = self.spec.pursuit_beta
        return [pi + beta * (bit - pi) for pi, bit in zip(p, bits)]


_POLICIES = {"eps_greedy": EpsilonGreedy, "eps_greedy_decreasing": DecreasingEpsilonGreedy,
             "ucb": UCB, "thompson": Thompson, "softmax": Softmax, "pursuit": Pursuit}


def select_arm(kind: str, scores, u: float | None = None) -> int:
    """SelectArm over a permuted list: position of the first maximum (ARGMAX), or the first
    position whose cumulative score exceeds u times the total (MATCH, u uniform in [0, 1))."""
    if kind == ARGMAX:
        return scores.index(max(scores))
    cumulative = list(itertools.accumulate(scores))
    threshold = u * cumulative[-1]
    return next((j for j, c in enumerate(cumulative) if c > threshold), len(scores) - 1)
