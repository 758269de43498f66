"""The plug-in interface of Samba (Ciucanu et al., section 4.1.2 and 4.2) and the six
algorithms of Fig. 4.

A `Policy` gives, for iteration l in [1, nb_A] of step t:

* ``compute_scores(t, l, arms)``: ComputeScore of several DOs at once (a DO group's
  `DataOwner` objects, or the reference's K `Arm` objects): element i is DO_i's score from its
  own object's s_i (sum of rewards), n_i (pulls), p_i (Pursuit) and its own private Beta draws
  (Thompson sampling) only, never another object's (arm score locality, Theorem 1.1);
* ``kind(l)``: what Comp's SelectArm does with the permuted scores: ARGMAX or MATCH
  (probability matching);
* ``initial_p()``, ``after_iteration(l, arms, bits)``: p_i at step 1 and each DO's local
  update of its own p_i with its own bit of iteration l < nb_A (Pursuit, section 4.2);
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

from ppml.checks import check_real
from ppml.protocols.samba.draws import Words

ARGMAX, MATCH = "argmax", "match"
ALGORITHMS = ("eps_greedy", "eps_greedy_decreasing", "ucb", "thompson", "softmax", "pursuit")
MIN_SOFTMAX_TAU = 1 / 600
"""e^(mu/tau) with mu <= 1 must stay finite in float64 after a mask of up to 2^32 (e^709 max)."""


class Arm:
    """What ComputeScore reads of one arm: s_i (sum of rewards), n_i (pulls), p_i (Pursuit) and
    ``draws``, the arm's own Beta draws (Thompson sampling; a `BetaDraws`).  The plaintext
    reference holds K of them; Samba's `DataOwner` is one, plus its secrets."""

    __slots__ = ("s", "n", "p", "draws")

    def __init__(self, draws):
        self.s = self.n = 0
        self.p = 0.0
        self.draws = draws

    def record(self, reward: int) -> None:
        """A pull of this arm and its reward."""
        self.s += reward
        self.n += 1


def means(arms: list) -> list:
    """The empirical means mu_i = s_i / n_i (Fig. 3)."""
    return [a.s / a.n for a in arms]


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
        check_real("epsilon", self.epsilon, 0.0, 1.0)
        check_real("eps_decay", self.eps_decay, 0.0, low_open=True)
        check_real("ucb_c", self.ucb_c, 0.0, low_open=True)
        check_real("softmax_tau", self.softmax_tau, MIN_SOFTMAX_TAU,
                   why="1/600: e^(1/tau) overflows float64 below")
        check_real("pursuit_beta", self.pursuit_beta, 0.0, 1.0, low_open=True)

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

    def match_bound(self) -> float:
        """An upper bound of every probability-matching score (the fixed point of the
        selection on shares, `ppml.protocols.samba.selection`)."""
        return 1.0

    def compute_scores(self, t: int, l: int, arms: list) -> list:
        """Each DO's ComputeScore(t, l) from its own `Arm` (s, n, p, draws) only."""
        raise NotImplementedError

    def after_iteration(self, l: int, arms: list, bits: list) -> None:
        """Each DO updates its own p_i with its own pull bit of iteration l < nb_A."""


class EpsilonGreedy(Policy):
    """Fig. 4, epsilon-greedy with fixed eps: exploit argmax mu_i with probability 1 - eps."""

    exploring = True

    def epsilon(self, t: int) -> float:
        return self.spec.epsilon

    def explores(self, t, explore):
        """x from seed_eps, shared by the Controller and the DOs; x <= eps_t explores."""
        return explore.uniform() <= self.epsilon(t)

    def compute_scores(self, t, l, arms):
        return means(arms)


class DecreasingEpsilonGreedy(EpsilonGreedy):
    """Fig. 4, epsilon-greedy with decreasing eps_t = f_eps(t) = min(1, eps_decay K / t)."""

    def epsilon(self, t):
        return min(1.0, self.spec.eps_decay * self.arms / t)


class UCB(Policy):
    """Fig. 4, UCB: argmax mu_i + sqrt(c ln t / n_i) (c = 2 in the paper)."""

    def compute_scores(self, t, l, arms):
        c, sqrt = self.spec.ucb_c * math.log(t), math.sqrt
        return [a.s / a.n + sqrt(c / a.n) for a in arms]


class Thompson(Policy):
    """Fig. 4, Thompson sampling: argmax theta_i ~ Beta(s_i + 1, n_i - s_i + 1), drawn from
    DO_i's own independent stream (the authors reseed one stream per arm: correlated draws)."""

    def compute_scores(self, t, l, arms):
        return [a.draws.beta(a.s + 1, a.n - a.s + 1) for a in arms]


class Softmax(Policy):
    """Fig. 4, Softmax: arm i with probability e^(mu_i/tau) / sum_j e^(mu_j/tau)."""

    def kind(self, l):
        return MATCH

    def compute_scores(self, t, l, arms):
        tau, exp = self.spec.softmax_tau, math.exp
        return [exp(a.s / a.n / tau) for a in arms]

    def match_bound(self):
        """e^(mu/tau) <= e^(1/tau), for means mu <= 1."""
        return math.exp(1.0 / self.spec.softmax_tau)


class Pursuit(Policy):
    """Fig. 4 and section 4.2, Pursuit (nb_A = 2): l = 1 is argmax mu_i, after which each DO
    moves p_i towards its bit, p_i += beta (b_i - p_i); l = 2 matches the p_i."""

    iterations = 2

    def kind(self, l):
        return ARGMAX if l == 1 else MATCH

    def initial_p(self):
        return 1.0 / self.arms

    def compute_scores(self, t, l, arms):
        return means(arms) if l == 1 else [a.p for a in arms]

    def after_iteration(self, l, arms, bits):
        beta = self.spec.pursuit_beta
        for a, bit in zip(arms, bits):
            a.p += beta * (bit - a.p)


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
