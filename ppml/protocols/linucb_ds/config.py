"""LinUCB-DS's parameters (Ciucanu et al., sections 3 and 5): the `linucb_ds` config group and
the validated object a run of the protocol takes.

`LinUCBDSOptions` is what a user sets (``linucb_ds.scale_bits=28``...); `LinUCBDSConfig` is
one run of the protocol: those options with the run's budget N, key size, runtime and workers.
Each value is checked once, when the object is made; the protocol trusts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ppml.checks import check_bool, check_int, check_one_of, check_positive
from ppml.crypto.paillier.encoding import MAX_SCALE_BITS, MIN_SCALE_BITS
from ppml.crypto.paillier.keys import DEFAULT_KEY_BITS, check_key_bits
from ppml.crypto.paillier.pool import OBFUSCATORS
from ppml.data.linear_arms import ARM_CHOICES
from ppml.runtime.checkpoints import CheckpointPlan, check_plan
from ppml.runtime.roles import DEFAULT_TIMEOUT_S, RUNTIMES



@dataclass
class LinUCBDSOptions:
    """The ``linucb_ds`` config group (LinUCB-DS and SpectralUCB-DS runs)."""

    scale_bits: int = 28
    """The one public scale 2^-s of every Paillier encoding (section 5 uses 10^-k; s = 28 keeps
    the arms' and theta's roundings below 4e-9)."""
    obfuscator: str = "full"
    """P's obfuscators for Comp's key: 'full' r^n, 'multibase' (within 2^-128 of r^n, cheaper
    after about 300 a pool), or 'djn' short exponents (faster; an extra assumption, and only
    ~80-bit hiding against Comp at 2048 bits): docs/paillier.md."""
    user: int = 0
    """MovieLens: the user whose embedding is theta."""
    arm_choice: str = "first"
    """MovieLens: which movies are the arms, one of `ARM_CHOICES`."""
    split_min_work: Optional[int] = None
    """With ``workers > 1``: K d^2 from which P spreads step 3.i's per-arm coefficients over its
    workers; None: the crossover measured on this machine
    (`ppml.protocols.linucb_ds.protocol.COEFFICIENTS_SPLIT_MIN_WORK`)."""

    def __post_init__(self) -> None:
        check_int("linucb_ds.scale_bits", self.scale_bits, MIN_SCALE_BITS, MAX_SCALE_BITS)
        check_one_of("linucb_ds.obfuscator", self.obfuscator, OBFUSCATORS)
        check_int("linucb_ds.user", self.user, 0)
        check_one_of("linucb_ds.arm_choice", self.arm_choice, ARM_CHOICES)
        if self.split_min_work is not None:
            check_int("linucb_ds.split_min_work", self.split_min_work, 1)


@dataclass(frozen=True)
class LinUCBDSConfig:
    """One run of the protocol: the budget N and everything the four parties are set up with."""

    horizon: int
    """The budget N that DC sends at step 1."""
    scale_bits: int = 28
    key_bits: int = DEFAULT_KEY_BITS
    """Comp's modulus (DC's has 2 more bits)."""
    insecure_key_bits_ok: bool = False
    obfuscator: str = "full"
    runtime: str = "local"
    workers: int = 1
    """Processes each of P and Comp spreads its bulk work over (`ppml.parallel`)."""
    split_min_work: Optional[int] = None
    """K d^2 from which P spreads step 3.i over its workers (None: the measured crossover)."""
    seed: Optional[int] = None
    """An integer derives the Paillier keys from a public seed: INSECURE, experiments only."""
    record_views: bool = False
    """Comp records what it decrypts (`ppml.privacy.views`)."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """How long a party may stay silent before the run fails naming it (the run key
    ``party_timeout_s``; `ppml.runtime.roles`)."""
    checkpoints: Optional[CheckpointPlan] = None
    """Where and how often every party saves its own state, and whether the run resumes
    (`ppml.runtime.checkpoints`; `protocol.Principal` drives them); None: no checkpoints."""

    def __post_init__(self) -> None:
        check_int("horizon", self.horizon, 1)
        check_plan(self.checkpoints)
        check_int("scale_bits", self.scale_bits, MIN_SCALE_BITS, MAX_SCALE_BITS)
        check_bool("insecure_key_bits_ok", self.insecure_key_bits_ok)
        check_bool("record_views", self.record_views)
        check_key_bits(self.key_bits, self.insecure_key_bits_ok)
        check_one_of("obfuscator", self.obfuscator, OBFUSCATORS)
        check_one_of("runtime", self.runtime, RUNTIMES)
        check_int("workers", self.workers, 1)
        if self.split_min_work is not None:
            check_int("split_min_work", self.split_min_work, 1)
        check_positive("party_timeout_s", self.timeout_s)
        if self.seed is not None:
            check_int("seed", self.seed, 0)
