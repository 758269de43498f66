"""Tabular SARSA and Q-learning (Sakuma et al., section 2.1, eq. 1) in float64 and in the
protocol's fixed point, and action selection (random, greedy, epsilon-greedy; section 5).

`QTable` is the float64 learner of the plaintext baselines (CRL, IDRL, RDRL).  `FixedPointQ`
is the same learner in the integers the protocol computes with (section 4.1, eqs. 3-4): Q-values
are held scaled by L = 2^scale_bits, alpha and alpha*gamma scaled by K = 2^division_bits and
rounded to integers, and each update is

    K dQ = (alpha K) (L r) + (alpha gamma K) Q(s', a') - (alpha K) Q(s, a)      (eq. 3)
    Q(s, a) += floor(K dQ / K)                                                  (eq. 4)

with the division a floor (K a power of two: an arithmetic shift), exactly as the protocol's
private division does it, so a protocol run and this reference agree entry for entry.
Q-learning replaces Q(s', a') by max_a Q(s', a) (eq. 1, second form).

`select` draws its randomness from a numpy generator in a fixed order: epsilon-greedy one
uniform, then a random action or a greedy one; greedy a uniform permutation of the actions and
the first maximum under it (Fig. 4: B's random permutation), so ties are broken uniformly.
The encrypted protocol passes rows that find their first maximum by private comparison
(`first_maximum`), so it draws from its generator exactly what the reference draws.
"""

from __future__ import annotations

import numpy as np

from ppml.checks import check_int

LEARNERS = ("sarsa", "qlearning")
MAX_SCALE_BITS = 512
"""The largest L and K exponents: the protocol's plaintexts live in Z_N with N of 2048 bits."""
SELECTIONS = ("random", "greedy", "epsilon_greedy")


def select(kind: str, row: np.ndarray, rng: np.random.Generator, epsilon: float) -> int:
    """An action for one state's Q-values ``row`` by selection ``kind`` (`SELECTIONS`)."""
    if kind == "random":
        return int(rng.integers(len(row)))
    if kind == "epsilon_greedy" and rng.random() < epsilon:
        return int(rng.integers(len(row)))
    order = rng.permutation(len(row))
    return int(order[first_maximum(row, order)])


def select_joint(kind: str, row: np.ndarray, moves: list, rngs: list, epsilon: float,
                 coin) -> list:
    """Each agent's action for one joint state's ``row`` over the joint actions (C order over
    the agents' ``moves``), partitioned by observation, by the draws of :func:`draw_joint`; the
    greedy joint action is the first maximum in the lexicographic order of the agents' permuted
    actions (Fig. 4's permutation, which hides B's action from A, drawn by every agent)."""
    actions, orders = draw_joint(kind, moves, rngs, epsilon, coin)
    if orders is None:
        return actions
    joint = orders[0].tolist()                     # the joint actions in lexicographic order
    for order, m in zip(orders[1:], moves[1:]):
        joint = [j * m + a for j in joint for a in order.tolist()]
    values = row.tolist()                          # Python numbers: this runs every step
    return unravel(max(joint, key=values.__getitem__), moves)   # max: the first maximum


def ravel(indices, sizes: list) -> int:
    """The C-order index of ``indices`` in a grid of ``sizes`` (`np.ravel_multi_index` for
    one point, without its overhead: it runs every step)."""
    index = 0
    for i, n in zip(indices, sizes, strict=True):
        index = index * n + int(i)
    return index


def unravel(index: int, sizes: list) -> list:
    """The indices of the C-order ``index`` in a grid of ``sizes`` (inverse of `ravel`)."""
    out = []
    for n in reversed(sizes):
        index, i = divmod(index, n)
        out.append(i)
    return out[::-1]


def draw_joint(kind: str, moves: list, rngs: list, epsilon: float, coin) -> tuple:
    """What a joint selection draws, each agent from its own generator in ``rngs``:
    epsilon-greedy's coin from ``coin``, a generator of its own (public: agent 0 draws it and
    every agent follows it, so no agent ever sees an output of another's own generator), then
    each agent its own random action, or its own permutation of its actions.  Returns (the
    actions, None) for a random choice, (None, the permutations) for a greedy one; an agent
    whose generator is None (held by another process) draws nothing and gets None."""
    if kind == "random" or (kind == "epsilon_greedy" and coin.random() < epsilon):
        return [None if rng is None else int(rng.integers(m))
                for rng, m in zip(rngs, moves, strict=True)], None
    return None, [None if rng is None else rng.permutation(m)
                  for rng, m in zip(rngs, moves, strict=True)]


def first_maximum(row, order: np.ndarray) -> int:
    """The position in ``order`` of the first maximum of ``row`` read in that order: numpy's
    argmax for a plaintext row, the row's own private comparison for a private one
    (`PrivateRow`)."""
    if isinstance(row, np.ndarray):
        return int(np.argmax(row[order]))
    return row.first_maximum(order)


class QTable:
    """Float64 Q-values of ``states`` x ``actions``, learned by ``learner`` (`LEARNERS`)."""

    def __init__(self, states: int, actions: int, alpha: float, gamma: float, learner: str):
        if learner not in LEARNERS:
            raise ValueError(f"pprl.learner must be one of {', '.join(LEARNERS)}, got {learner!r}")
        self.q = np.zeros((check_int("states", states, 1), check_int("actions", actions, 1)))
        self.alpha, self.gamma, self.learner = alpha, gamma, learner

    def target(self, state: int, action: int):
        """Q(s', a') for SARSA, max_a Q(s', a) for Q-learning."""
        return self.q[state, action] if self.learner == "sarsa" else self.q[state].max()

    def update(self, s: int, a: int, r: float, s2: int, a2: int) -> None:
        """Eq. 1 for the transition (s, a, r, s', a')."""
        self.q[s, a] += self.alpha * (r + self.gamma * self.target(s2, a2) - self.q[s, a])


class FixedPointQ(QTable):
    """The protocol's integers: Q scaled by 2^``scale_bits``, the update's division by
    2^``division_bits`` a floor (eqs. 3-4).  ``alpha_k`` and ``alpha_gamma_k`` are alpha K and
    alpha gamma K rounded to integers: the alpha and gamma the protocol actually uses."""

    def __init__(self, states: int, actions: int, alpha: float, gamma: float, learner: str,
                 scale_bits: int, division_bits: int):
        super().__init__(states, actions, alpha, gamma, learner)
        self.scale_bits = check_int("pprl.scale_bits", scale_bits, 1, MAX_SCALE_BITS)
        self.division_bits = check_int("pprl.division_bits", division_bits, 1, MAX_SCALE_BITS)
        self.alpha_k = round(alpha * 2**division_bits)
        self.alpha_gamma_k = round(alpha * gamma * 2**division_bits)
        if self.alpha_k < 1:
            raise ValueError(f"pprl.alpha * 2^pprl.division_bits must round to >= 1, got "
                             f"{alpha} * 2^{division_bits}")
        self.q = np.zeros(self.q.shape, dtype=object)          # Python integers: exact at any L

    def scaled_reward(self, r: float) -> int:
        """L r, which must be an integer (the protocol encrypts it)."""
        numerator, denominator = float(r).as_integer_ratio()
        if (numerator << self.scale_bits) % denominator:
            raise ValueError(f"a reward of {r!r} times 2^pprl.scale_bits is not an integer; "
                             "raise pprl.scale_bits")
        return (numerator << self.scale_bits) // denominator

    def update(self, s: int, a: int, r: float, s2: int, a2: int) -> None:
        k_delta = (self.alpha_k * self.scaled_reward(r) + self.alpha_gamma_k
                   * self.target(s2, a2) - self.alpha_k * self.q[s, a])             # eq. 3
        self.q[s, a] += k_delta >> self.division_bits                                # eq. 4

    def values(self) -> np.ndarray:
        """The Q-values as reals (Q / L)."""
        return np.array([[v / 2**self.scale_bits for v in row] for row in self.q], dtype=float)


class PrivateRow:
    """What selection reads of a state's row in a private table (encrypted or shared): its
    length, and its first maximum under an order by the table's private selection
    (``table.first_maximum(state, order)``); no Q-value."""

    def __init__(self, table, state: int):
        self.table, self.state = table, state

    def __len__(self) -> int:
        return self.table.actions

    def first_maximum(self, order) -> int:
        return self.table.first_maximum(self.state, order)


class PrivateRows:
    """A private table as `select` reads it (``table.q[state]``): a `PrivateRow` per state."""

    def __init__(self, table):
        self.table = table

    def __getitem__(self, state: int) -> PrivateRow:
        return PrivateRow(self.table, state)
