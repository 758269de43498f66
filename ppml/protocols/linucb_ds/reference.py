"""LinUCB (Ciucanu et al., Fig. 2) and SpectralUCB (section 6; Valko et al. 2014) in plaintext.

What P of LinUCB-DS computes in the clear lives here, once, and serves three runs:

* `LinUCB` / `SpectralUCB`: the *policy*, i.e. the matrix A (A = penalty + sum x x^T), its inverse
  and the exploration terms omega_t ||x_i||_{A^-1}.  LinUCB's penalty is gamma I and
  omega_t = R sqrt(d log((1 + t L^2 / gamma) / delta)) + gamma^(1/2) S (Fig. 2); SpectralUCB's
  penalty is Lambda_L + gamma I and omega_t = 2R sqrt(d' log(1 + t / gamma) + 2 log(1 / delta)) + C
  with the effective dimension d' (section 6).  S and C default to log t, as in sections 5 and 6.
* `run_float`: the algorithm of Fig. 2 in float64 (theta_hat = A^-1 b, B_i, argmax, updates),
  inverting A and recording every round's scores and gap: the decision reference.
* `run_lean`: the same algorithm doing only what its decisions need, the plaintext baseline of
  the slowdowns (A^-1, theta_hat and every arm's x_i^T A^-1 x_i kept up to date by rank-one
  updates).
* `run_fixed_point`: the same algorithm on the integers the secure protocol encrypts
  (`FixedPoint`), so that a secure run can be compared with it exactly: same arms, same sum.
* `Coins`: the random choices of P (first arm, the permutations sigma_t whose first maximum
  breaks ties), drawn from an AES-CTR stream under a 32-byte key from the OS CSPRNG.  Giving the
  reference the key of a secure run replays its choices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ppml.crypto.paillier import Encoding
from ppml.crypto.rng import Stream

GAMMA, DELTA, NOISE = 0.01, 0.001, 0.01
"""The paper's constants gamma (regulariser), delta (confidence) and R (noise), sections 5-6."""


@dataclass(frozen=True)
class Constants:
    """gamma, delta, R and the norm bound (S of Fig. 2, C of SpectralUCB); ``norm_bound=None``
    means log t at round t, as in sections 5 and 6."""

    gamma: float = GAMMA
    delta: float = DELTA
    noise: float = NOISE
    norm_bound: float | None = None

    def __post_init__(self):
        for name in ("gamma", "delta", "noise"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.norm_bound is not None and self.norm_bound < 0:
            raise ValueError(f"norm_bound must be >= 0 or None (log t), got {self.norm_bound}")

    def norm(self, t: int) -> float:
        return math.log(t) if self.norm_bound is None else self.norm_bound


class LinearUCB:
    """A linear UCB policy: arms x_i (rows), A = penalty + sum of x x^T over the pulls so far."""

    name = "linear"

    def __init__(self, arms, penalty, constants: Constants):
        self.arms = np.array(arms, dtype=np.float64)
        if self.arms.ndim != 2 or not np.all(np.isfinite(self.arms)):
            raise ValueError(f"arms must be a finite [K, d] matrix, got shape {self.arms.shape}")
        self.constants = constants
        self.penalty = np.array(penalty, dtype=np.float64)
        self.A = self.penalty.copy()

    @property
    def K(self) -> int:
        return self.arms.shape[0]

    @property
    def d(self) -> int:
        return self.arms.shape[1]

    def pull(self, arm: int) -> None:
        """A = A + x_m x_m^T (Fig. 2; step (4).ii)."""
        x = self.arms[arm]
        self.A = self.A + np.outer(x, x)      # not in place: a policy shipped to an actor is
                                              # read-only there

    def a_inverse(self) -> np.ndarray:
        return np.linalg.inv(self.A)

    def width(self, t: int) -> float:
        raise NotImplementedError

    def exploration(self, t: int, a_inverse: np.ndarray) -> np.ndarray:
        """omega_t ||x_i||_{A^-1} for every arm."""
        quadratic = np.einsum("ij,jk,ik->i", self.arms, a_inverse, self.arms)
        return self.width(t) * np.sqrt(np.maximum(quadratic, 0.0))

    def min_penalty_eigenvalue(self) -> float:
        """A lower bound on the eigenvalues of every A (bounds |A^-1| entries by its inverse)."""
        return self.constants.gamma

    def max_penalty_eigenvalue(self) -> float:
        """The largest eigenvalue of the penalty: for every A = penalty + G,
        ||A^-1 G||_2 = ||I - A^-1 penalty||_2 <= 1 + this / `min_penalty_eigenvalue`."""
        return float(np.max(np.linalg.eigvalsh(self.penalty)))


class LinUCB(LinearUCB):
    """Fig. 2: penalty gamma I; omega_t = R sqrt(d log((1 + t L^2/gamma)/delta)) + gamma^.5 S."""

    name = "linucb"

    def __init__(self, arms, constants: Constants = Constants()):
        arms = np.asarray(arms, dtype=np.float64)
        super().__init__(arms, constants.gamma * np.eye(arms.shape[1]), constants)
        self.arm_norm = float(np.max(np.linalg.norm(self.arms, axis=1)))

    def width(self, t: int) -> float:
        c = self.constants
        inner = (1 + t * self.arm_norm**2 / c.gamma) / c.delta
        return c.noise * math.sqrt(self.d * math.log(inner)) + math.sqrt(c.gamma) * c.norm(t)


class Coins:
    """P's random choices from an AES-256-CTR stream under ``key`` (32 bytes from the OS CSPRNG
    in a secure run): the first arm (step 2) and the permutation sigma_t of every round
    (step (3).ii), whose first maximum also breaks ties (section 3, Correctness).
    ``Coins(key, position)`` goes on where coins whose ``stream`` had read ``position`` bytes
    stood (P's checkpoint keeps the stream's key and position)."""

    def __init__(self, key: bytes, position: int = 0):
        self.stream = Stream(key, position)

    def first_arm(self, arms: int) -> int:
        return int(self.stream.permutation(arms)[0])

    def permutation(self, arms: int) -> np.ndarray:
        """sigma_t: position p of the list sent to Comp holds the score of arm sigma_t[p]."""
        return self.stream.permutation(arms)


def first_maximum(values) -> int:
    """Index of the first maximum (Comp's rule on the permuted list)."""
    best = 0
    for index in range(1, len(values)):
        if values[index] > values[best]:
            best = index
    return best


def choose(scores, sigma) -> int:
    """The arm at the first maximum of the scores listed in sigma's order."""
    return int(sigma[first_maximum([scores[i] for i in sigma])])


def run_float(policy: LinearUCB, reward, horizon: int, coins: Coins) -> dict:
    """Fig. 2 in float64: ``reward(t, arm)`` draws the reward of step t.  Returns the arms,
    rewards, their sum, and each round's scores and gap between the two largest scores."""
    arm = coins.first_arm(policy.K)
    arms, rewards, gaps, all_scores = [arm], [float(reward(0, arm))], [math.inf], [None]
    b = rewards[0] * policy.arms[arm]
    policy.pull(arm)
    for t in range(1, horizon):
        a_inverse = policy.a_inverse()
        theta_hat = a_inverse @ b
        scores = policy.arms @ theta_hat + policy.exploration(t, a_inverse)
        top = np.sort(scores)[-2:]
        gaps.append(float(top[-1] - top[0]) if len(top) == 2 else math.inf)
        all_scores.append(scores)
        arm = choose(scores, coins.permutation(policy.K))
        r = float(reward(t, arm))
        arms.append(arm)
        rewards.append(r)
        b = b + r * policy.arms[arm]
        policy.pull(arm)
    return {"arms": arms, "rewards": rewards, "sum": float(np.sum(rewards)), "gaps": gaps,
            "scores": all_scores}


def run_lean(policy: LinearUCB, reward, horizon: int, coins: Coins) -> dict:
    """Fig. 2 in float64 with only the work its decisions need: after each pull of x (u =
    A^-1 x, c = 1 + x^T u) A^-1 -= u u^T / c (Sherman-Morrison), theta_hat += u (r - x^T
    theta_hat) / c (which is A^-1 b for the new A and b) and every arm's x_i^T A^-1 x_i -=
    (x_i^T u)^2 / c, so a round costs O(K d + d^2) against `run_float`'s inversion and
    O(K d^2) quadratic forms.  Does not change ``policy``.  Returns the arms, rewards and
    their sum; the same arms as `run_float` up to float64 rounding on near-ties."""
    xs = policy.arms
    a_inverse = np.linalg.inv(policy.penalty)
    quadratic = np.einsum("ij,jk,ik->i", xs, a_inverse, xs)
    theta_hat = np.zeros(policy.d)
    arms, rewards = [], []
    for t in range(horizon):
        if t == 0:
            arm = coins.first_arm(policy.K)
        else:
            scores = xs @ theta_hat + policy.width(t) * np.sqrt(np.maximum(quadratic, 0.0))
            sigma = coins.permutation(policy.K)
            arm = int(sigma[np.argmax(scores[sigma])])      # the first maximum in sigma's order
        r = float(reward(t, arm))
        arms.append(arm)
        rewards.append(r)
        x = xs[arm]
        u = a_inverse @ x
        c = 1.0 + x @ u
        theta_hat += u * ((r - x @ theta_hat) / c)
        a_inverse -= np.outer(u, u) / c
        quadratic -= (xs @ u) ** 2 / c
    return {"arms": arms, "rewards": rewards, "sum": float(np.sum(rewards))}


class FixedPoint:
    """The integers of LinUCB-DS at one public scale 2^-s (`Encoding`): theta and the arms at
    scale exponent k = 1, the noise eta at k = 2 (so rewards r = <theta, x> + eta have k = 2),
    b = sum r x = G theta + e at k = 3 (G = sum x x^T, e = sum eta x), A^-1 at k = 1.

    Fig. 2's score B_i = x_i^T A^-1 b + omega ||x_i||_{A^-1} is taken at k = 2, not at the
    k = 5 of the exact product: B_i = C_i . theta + w_i + omega_i with P's public
    C_i = x_i^T A^-1 G and w_i = x_i^T A^-1 e rounded to k = 1 and k = 2 (`score_terms`).  The
    rounding adds at most (d S + 1) 2^-(s+1) to a score, far below A^-1's own rounding, and
    cuts a packed slot from about 5s to 2s bits (docs/linucb-ds.md, "Slots at k = 2")."""

    REWARD_K, SCORE_K = 2, 2

    def __init__(self, scale_bits: int):
        self.encoding = Encoding(scale_bits=scale_bits, max_abs=2.0**60)
        self.scale_bits = scale_bits

    def ints(self, values, k: int = 1) -> np.ndarray:
        """round(x 2^(k s)) as an object array of Python ints."""
        return self.encoding.encode(np.asarray(values, dtype=np.float64), k).ints

    def a_inverse(self, policy: LinearUCB) -> tuple[np.ndarray, np.ndarray]:
        """(A^-1 at k = 1, the float A^-1 it was rounded from)."""
        a_inverse = policy.a_inverse()
        return self.ints(a_inverse), a_inverse

    def score_terms(self, a_inverse, x, G, e) -> tuple[np.ndarray, np.ndarray]:
        """(C, w): C = X A^-1 G at k = 1 and w = X A^-1 e at k = 2, each rounded (half up) from
        its exact integer product at k = 4 and k = 5, so B = C theta + w + exploration is
        x^T theta_hat of Fig. 2 at k = 2 (steps (3).i-(3).ii of Fig. 4(a))."""
        shift = 3 * self.scale_bits
        half = 1 << (shift - 1)
        rows = x.dot(a_inverse)
        return (rows.dot(G) + half) >> shift, (rows.dot(e) + half) >> shift

    def eta(self, noise, t: int, arm: int) -> int:
        """The environment's noise of pulling ``arm`` at step t, at k = 2 (a reward's scale)."""
        return int(self.ints([noise[t][arm]], self.REWARD_K)[0])

    def exploration(self, policy: LinearUCB, t: int, a_inverse: np.ndarray) -> np.ndarray:
        return self.ints(policy.exploration(t, a_inverse), self.SCORE_K)

    def reward_real(self, reward_int: int) -> float:
        return self.encoding.decode([reward_int], self.REWARD_K)[0]


def run_fixed_point(policy: LinearUCB, theta, noise, horizon: int, coins: Coins,
                    scale_bits: int) -> dict:
    """Fig. 2 on the secure protocol's integers: ``noise[t, arm]`` is eta of step t.  The same
    arms and the same integer sum as LinUCB-DS with the same coins, by construction of the
    integers (no float enters after encoding)."""
    fixed = FixedPoint(scale_bits)
    x, theta = fixed.ints(policy.arms), fixed.ints(theta)
    d = x.shape[1]
    G, e = np.full((d, d), 0, dtype=object), np.full(d, 0, dtype=object)
    arm, arms, reward_ints, all_scores = coins.first_arm(policy.K), [], [], [None]
    for t in range(horizon):
        if t > 0:
            a_inverse, a_float = fixed.a_inverse(policy)
            C, w = fixed.score_terms(a_inverse, x, G, e)
            scores = C.dot(theta) + w + fixed.exploration(policy, t, a_float)
            all_scores.append(fixed.encoding.decode(scores, fixed.SCORE_K))
            arm = choose(scores, coins.permutation(policy.K))
        eta = fixed.eta(noise, t, arm)
        arms.append(arm)
        reward_ints.append(int(np.dot(theta, x[arm])) + eta)
        G, e = G + np.outer(x[arm], x[arm]), e + eta * x[arm]
        policy.pull(arm)
    total = sum(reward_ints)
    return {"arms": arms, "rewards": [fixed.reward_real(r) for r in reward_ints],
            "sum_int": total, "sum": fixed.reward_real(total), "scores": all_scores}


def score_error(first: dict, second: dict) -> float:
    """max |B_i - B'_i| over the rounds before the two runs' arms first differ: the fixed-point
    error against float64.  Their arms agree at every round whose two largest scores are more
    than twice this apart (the tie tolerance)."""
    error = 0.0
    for t in range(1, len(first["arms"])):
        error = max(error, float(np.max(np.abs(first["scores"][t] - second["scores"][t]))))
        if first["arms"][t] != second["arms"][t]:
            break
    return error
