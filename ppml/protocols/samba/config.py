"""Samba's parameters (Ciucanu et al., sections 4 and 6): the `samba` config group and the
validated object a run of the protocol takes.

`SambaOptions` is what a user sets (``samba.algorithm=ucb``...): the algorithm of Fig. 4 and
its parameters, the datasets' reward threshold, and how DOs share actors.  `SambaConfig` is one
run: the budget N, the algorithm as DC sends it at step 0 (`AlgorithmSpec`), the run's keys,
runtime and Paillier key size.  Each value is checked once, when the object is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ppml.checks import check_bool, check_int, check_positive, check_real
from ppml.crypto.paillier.keys import DEFAULT_KEY_BITS, check_key_bits
from ppml.data.bernoulli_items import DENOMINATORS
from ppml.protocols.samba.policies import AlgorithmSpec
from ppml.runtime.checkpoints import CheckpointPlan, check_plan
from ppml.runtime.roles import DEFAULT_TIMEOUT_S, RUNTIMES


MASKS = ("mpc", "paper")
"""How the DOs hide their scores from Comp: ``mpc`` (the default), secret shares between the
Controller and Comp, who select on them (`ppml.protocols.samba.selection`: Comp learns the
selected position only); ``paper``, y = alpha_t x (section 4.1.2), which shows Comp every ratio
of scores (docs/samba.md, "What each role learns")."""


@dataclass
class SambaOptions:
    """The ``samba`` config group."""

    algorithm: str = "ucb"
    """One of `policies.ALGORITHMS`."""
    epsilon: float = 0.1
    """eps_greedy: the exploration probability."""
    eps_decay: float = 1.0
    """eps_greedy_decreasing: eps_t = min(1, eps_decay K / t)."""
    ucb_c: float = 2.0
    """UCB: mu_i + sqrt(ucb_c ln t / n_i)."""
    softmax_tau: float = 0.1
    """Softmax temperature tau."""
    pursuit_beta: float = 0.1
    """Pursuit learning rate beta."""
    threshold: Optional[float] = None
    """Datasets: a rating above it is a reward of 1 (None: the dataset's default)."""
    denominator: str = "ratings"
    """Datasets: an item's mean is liked / 'ratings' of the item or / 'users'."""
    min_ratings: int = 20
    """Datasets: items with fewer ratings are not arms (1 keeps all: then MovieLens's top 43
    items are movies with 1-8 ratings, all liked, at mean 1.0)."""
    owners_per_actor: Optional[int] = None
    """On Ray: DOs per actor (None: one each while there is a CPU per DO)."""
    mask: str = "mpc"
    """How the DOs hide their scores from Comp, one of `MASKS`."""

    def __post_init__(self) -> None:
        try:
            self.spec()                     # the algorithm and its parameters, with their bounds
        except ValueError as exc:           # each message starts with the key's own name
            raise type(exc)(f"samba.{exc}") from None
        if self.threshold is not None:
            check_real("samba.threshold", self.threshold)
        if self.mask not in MASKS:
            raise ValueError(f"samba.mask must be one of {', '.join(MASKS)}; got {self.mask!r}")
        if self.denominator not in DENOMINATORS:
            raise ValueError(f"samba.denominator must be one of {', '.join(DENOMINATORS)}; "
                             f"got {self.denominator!r}")
        check_int("samba.min_ratings", self.min_ratings, 1)
        if self.owners_per_actor is not None:
            check_int("samba.owners_per_actor", self.owners_per_actor, 1)

    def spec(self) -> AlgorithmSpec:
        """What DC sends at step 0 besides N: the algorithm and its parameters."""
        return AlgorithmSpec(self.algorithm, epsilon=self.epsilon, eps_decay=self.eps_decay,
                             ucb_c=self.ucb_c, softmax_tau=self.softmax_tau,
                             pursuit_beta=self.pursuit_beta)


@dataclass(frozen=True)
class SambaConfig:
    """One run: budget N, algorithm, runtime and placement, Paillier key size, and the seed
    from which every role derives its keys in the INSECURE seeded mode (None: each role draws
    its own from its OS CSPRNG)."""

    horizon: int
    spec: AlgorithmSpec
    runtime: str = "local"
    mask: str = "mpc"
    """One of `MASKS`."""
    crypto: bool = True
    """False: the same participants and messages with every Enc and E removed (A_no-enc in the
    proof of Theorem 2), to measure what the cryptography costs."""
    owners_per_actor: Optional[int] = None
    key_bits: int = DEFAULT_KEY_BITS
    insecure_key_bits_ok: bool = False
    seed: Optional[int] = None
    """An integer: every role derives its keys from this public seed (DC its Paillier key too):
    INSECURE, for reproducible experiments only."""
    record_views: bool = False
    """Every role records what it receives (`ppml.privacy.views`): the Controller its sealed
    messages, Comp the masked scores, each DO its pull bits, DC the decrypted total."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """How long a role may stay silent before the run fails naming it (the run key
    ``party_timeout_s``; `ppml.runtime.roles`)."""
    collect_keys: bool = False
    """EVALUATION ONLY: after the run, collect each role's own keys so that a plaintext
    reference can replay its draws (`SambaRun.replay_keys`); the seeded mode needs none."""
    checkpoints: Optional[CheckpointPlan] = None
    """Every ``checkpoints.every`` steps each role saves its own state in its own store, the
    Controller driving (`ppml.runtime.checkpoints.RoleCheckpoints`); a resumed plan goes on
    from the last step every role holds."""

    def __post_init__(self) -> None:
        check_int("horizon", self.horizon, 1)
        check_plan(self.checkpoints)
        if not isinstance(self.spec, AlgorithmSpec):
            raise TypeError(f"spec must be an AlgorithmSpec, got {type(self.spec).__name__}")
        for name in ("crypto", "insecure_key_bits_ok", "record_views", "collect_keys"):
            check_bool(name, getattr(self, name))
        if self.runtime not in RUNTIMES + ("federated",):
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)} or federated; got "
                             f"{self.runtime!r}")
        if self.mask not in MASKS:
            raise ValueError(f"samba.mask must be one of {', '.join(MASKS)}; got {self.mask!r}")
        check_key_bits(self.key_bits, self.insecure_key_bits_ok)
        check_positive("party_timeout_s", self.timeout_s)
        if self.owners_per_actor is not None:
            check_int("owners_per_actor", self.owners_per_actor, 1)
        if self.seed is not None:
            check_int("seed", self.seed, 0)
