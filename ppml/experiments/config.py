"""The run configuration: one flat schema shared by every experiment.

`RunConfig` is registered in Hydra's ConfigStore as ``base_config`` and sits first in
``conf/config.yaml``'s defaults list, so OmegaConf refuses a misspelt key (``arsm=3``) or a value of
the wrong type (``parties=two``) while Hydra composes the config, before anything runs. The bounds
that a type cannot express are checked when a `RunConfig` is constructed (`__post_init__`), which
`load_config` triggers; every error names the parameter and its bound.

Top-level keys mean the same in every experiment; an experiment's YAML file sets its own defaults
and ignores the keys it does not use.
"""

import os
from dataclasses import dataclass, field, fields, replace
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from ppml.protocols.samba.policies import AlgorithmSpec
from ppml.crypto.paillier.keys import check_key_bits
from ppml.crypto.paillier.pool import OBFUSCATORS
# The engine's own lists, so a mode the engine gains is accepted here too.
from ppml.mpc.context import TRUNCATION_MODES
from ppml.runtime.spmd import RUNTIMES

PRECISION_BITS_RANGE = (8, 32)
ARM_CHOICES = ("first", "random")
DATA_DIR_ENV = "PPML_DATA"


@dataclass
class RunConfig:
    """Every key of a run; see docs/results-schema.md for how they land in Parquet."""

    experiment: str = "bench_ops"
    """Registered experiment name (ppml.experiments.registry)."""
    arms: int = 10
    """Number of bandit arms (for op benchmarks: vector length of the arm dimension)."""
    parties: int = 2
    """Number of computing parties holding secret shares."""
    dims: int = 10
    """Context / feature dimension."""
    horizon: int = 100
    """Number of protocol steps (rounds of play)."""
    seed: Optional[int] = None
    """None: randomness from the OS CSPRNG. An int: INSECURE reproducible mode."""
    runtime: str = "local"
    """'local': all parties in one process. 'ray': parties as Ray actors."""
    dataset: str = "digits"
    """Dataset loader name; 'digits' is embedded (ships with scikit-learn)."""
    results_dir: str = "results"
    """Folder that receives one Parquet file per run."""
    precision_bits: int = 20
    """Fractional bits of the fixed-point encoding."""
    ray_address: Optional[str] = None
    """None: start a private local Ray instance; else the address to join ('auto', host:port)."""
    data_dir: Optional[str] = None
    """Folder of downloaded datasets; None falls back to the PPML_DATA environment variable."""
    progress: bool = True
    """Show progress bars."""
    placement: bool = False
    """runtime=ray: pin party i's actor to a node with the custom resource party_<i>."""
    workers: int = 1
    """Ray tasks per party for large party-local work (per-arm updates, bulk Paillier work)."""

    # Experiment-specific keys (one flat namespace, so sweeps and result columns stay uniform).
    truncation: str = "bounded"
    """Fixed-point truncation protocol, one of ppml.mpc.context.TRUNCATION_MODES."""
    samples: int = 1_000_000
    """Random trials of a statistical study (truncation_study: truncations per cell)."""
    repeats: int = 3
    """Timed repetitions per benchmark point."""
    data_seed: int = 0
    """Seed of the data stream (order, reward draws): public, so secure runs stay comparable."""
    epsilon: float = 0.1
    """Exploration probability of epsilon-greedy bandits."""
    nr_iterations: Optional[int] = None
    """Newton-Raphson iterations of the secure reciprocal (None: enough for precision_bits)."""
    reciprocal_start: str = "linear"
    """Start value of the reciprocal: 'linear' (minimax on the domain) or 'paper'."""
    argmax_method: str = "pairwise"
    """Secure argmax: 'pairwise' (Hannun et al. Algorithm 2) or 'tournament'."""
    regularizer: float = 0.0
    """Diagonal regulariser delta of linear bandits: W starts at (1 + delta) I."""
    refresh_every: int = 0
    """Recompute the exact inverse every k steps (0: never, as in the paper)."""
    checkpoints: int = 0
    """Model checkpoints saved during training for the membership-inference audit (0: none)."""
    key_bits: int = 2048
    """Paillier modulus bits (LinUCB-DS); below 2048 refused unless insecure_key_bits_ok."""
    insecure_key_bits_ok: bool = False
    """Accept Paillier keys below 2048 bits (tests; benchmarks against 1024-bit figures)."""
    obfuscator: str = "full"
    """LinUCB-DS P's Paillier obfuscators: 'full' r^n, or 'djn' short exponents (faster; an extra
    assumption, and only ~80-bit hiding against Comp at 2048 bits: docs/paillier.md)."""
    user: int = 0
    """User whose embedding is theta (MovieLens linear bandits)."""
    arm_choice: str = "first"
    """Which movies are the arms: 'first' K (as the paper) or 'random' K (drawn with data_seed)."""
    algorithm: str = "ucb"
    """Samba's bandit algorithm (ppml.protocols.samba.policies.ALGORITHMS)."""
    threshold: Optional[float] = None
    """Samba datasets: a rating above it is a reward of 1 (None: the dataset's default)."""
    denominator: str = "ratings"
    """Samba datasets: an item's mean is liked / 'ratings' of the item or / 'users'."""
    min_ratings: int = 20
    """Samba datasets: items with fewer ratings are not arms (1 keeps all: then MovieLens's top
    43 items are movies with 1-8 ratings, all liked, at mean 1.0)."""
    eps_decay: float = 1.0
    """eps_greedy_decreasing: eps_t = min(1, eps_decay K / t)."""
    ucb_c: float = 2.0
    """UCB: mu_i + sqrt(ucb_c ln t / n_i)."""
    softmax_tau: float = 0.1
    """Softmax temperature tau."""
    pursuit_beta: float = 0.1
    """Pursuit learning rate beta."""
    owners_per_actor: Optional[int] = None
    """Samba on Ray: DOs per actor (None: one each up to 8 DOs, else 8 actors)."""

    def __post_init__(self) -> None:
        _at_least("arms", self.arms, 1)
        _at_least("parties", self.parties, 2)
        _at_least("dims", self.dims, 1)
        _at_least("horizon", self.horizon, 1)
        _at_least("repeats", self.repeats, 1)
        _at_least("samples", self.samples, 1)
        _at_least("min_ratings", self.min_ratings, 1)
        _at_least("workers", self.workers, 1)
        _at_least("data_seed", self.data_seed, 0)
        _at_least("refresh_every", self.refresh_every, 0)
        _at_least("checkpoints", self.checkpoints, 0)
        if self.nr_iterations is not None:
            _at_least("nr_iterations", self.nr_iterations, 0)
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {self.epsilon}")
        if self.regularizer < 0:
            raise ValueError(f"regularizer must be >= 0, got {self.regularizer}")
        if self.seed is not None:
            _at_least("seed", self.seed, 0)
        _one_of("runtime", self.runtime, RUNTIMES)
        _one_of("arm_choice", self.arm_choice, ARM_CHOICES)
        _at_least("user", self.user, 0)
        check_key_bits(self.key_bits, self.insecure_key_bits_ok)
        _one_of("obfuscator", self.obfuscator, OBFUSCATORS)
        algorithm_spec(self)  # Samba's algorithm and parameters, each checked with its bound
        _one_of("denominator", self.denominator, ("ratings", "users"))
        if self.owners_per_actor is not None:
            _at_least("owners_per_actor", self.owners_per_actor, 1)
        _one_of("truncation", self.truncation, TRUNCATION_MODES)
        low, high = PRECISION_BITS_RANGE
        if not low <= self.precision_bits <= high:
            bits = self.precision_bits
            raise ValueError(f"precision_bits must be in [{low}, {high}], got {bits}")
        for name in ("experiment", "dataset", "results_dir"):
            if not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty string")


def _at_least(name: str, value: int, bound: int) -> None:
    if value < bound:
        raise ValueError(f"{name} must be >= {bound}, got {value}")


def _one_of(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def algorithm_spec(config: RunConfig) -> AlgorithmSpec:
    """What Samba's DC sends at step 0 besides N: the algorithm and its parameters."""
    return AlgorithmSpec(config.algorithm, epsilon=config.epsilon, eps_decay=config.eps_decay,
                         ucb_c=config.ucb_c, softmax_tau=config.softmax_tau,
                         pursuit_beta=config.pursuit_beta)


def engine_options(config: RunConfig) -> dict:
    """The keyword arguments of ``ppml.mpc.run`` that a run's config sets."""
    options = {"parties": config.parties, "runtime": config.runtime,
               "precision_bits": config.precision_bits, "seed": config.seed,
               "truncation": config.truncation, "workers": config.workers}
    if config.runtime == "ray" and config.placement:
        options["placement"] = True
    return options


def load_config(cfg: DictConfig) -> RunConfig:
    """Turn Hydra's composed config into a validated `RunConfig`.

    Keys added with Hydra's ``+key=value`` (which struct mode lets through) are refused.
    ``data_dir`` left at None takes the value of the PPML_DATA environment variable (if set), so
    the folder actually used is what the run records.
    """
    known = [f.name for f in fields(RunConfig)]
    unknown = sorted(set(cfg.keys()) - set(known))
    if unknown:
        raise ValueError(f"unknown config keys {unknown}; known keys: {', '.join(known)}")
    config = OmegaConf.to_object(cfg)
    if not isinstance(config, RunConfig):
        raise TypeError(
            f"expected a config composed on base_config (RunConfig), got {type(config).__name__}"
        )
    if config.data_dir is None and os.environ.get(DATA_DIR_ENV):
        config = replace(config, data_dir=os.environ[DATA_DIR_ENV])
    return config


ConfigStore.instance().store(name="base_config", node=RunConfig)
