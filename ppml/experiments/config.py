"""The run configuration: the keys every experiment shares, and one config group per family.

`RunConfig` is registered in Hydra's ConfigStore as ``base_config`` and sits first in
``conf/config.yaml``'s defaults list, so OmegaConf refuses a misspelt key (``arsm=3``) or a value of
the wrong type (``parties=two``) while Hydra composes the config, before anything runs.

* Top-level keys mean the same in every experiment (arms, parties, runtime, seed, ...).
* Each protocol family's own keys live in its group, declared beside the family's code:
  ``private_cb.*`` (`PrivateCBOptions`), ``linucb_ds.*`` (`LinUCBDSOptions`), ``samba.*``
  (`SambaOptions`), ``pprl.*`` (`PPRLOptions`), ``masked_lark.*`` (`MaskedLarkOptions`); the engine's ``mpc.*`` and the benchmarks' ``bench.*`` are declared here.
* Every value is checked once, when `load_config` makes the objects (each ``__post_init__``);
  every error names the parameter and its bound.  The layers below trust these objects.
* A key of the old flat namespace (``algorithm=ucb``) is refused with its new spelling
  (`refuse_renamed`); results keep one column per key, groups under dotted names
  (`columns`: ``samba.algorithm``).
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from ppml.checks import check_bool, check_int, check_one_of, check_positive, check_text
from ppml.crypto.fixed import check_precision_bits
from ppml.crypto.paillier.keys import check_key_bits
from ppml.data.checksums import DATA_DIR_ENV
from ppml.mpc.context import TRUNCATION_MODES
from ppml.protocols.linucb_ds.config import LinUCBDSOptions
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.private_cb.config import PrivateCBOptions
from ppml.protocols.samba.config import SambaOptions
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S
from ppml.runtime.roles import RUNTIMES

RUN_RUNTIMES = RUNTIMES + ("federated",)
"""Where a run's parties run: the roles' runtimes, and one process per party."""


@dataclass
class MPCOptions:
    """The ``mpc`` group: the secret-sharing engine's choices (docs/mpc.md)."""

    truncation: str = "bounded"
    """Fixed-point truncation protocol, one of `ppml.mpc.context.TRUNCATION_MODES`."""
    split_min_elements: Optional[int] = None
    """With ``workers > 1``: a party's products of this many elements or more are split over
    its workers as Ray tasks (`ppml.mpc.local_tasks`); None: the crossover measured on this
    machine, `ppml.mpc.local_tasks.SPLIT_MIN_ELEMENTS`."""

    def __post_init__(self) -> None:
        check_one_of("mpc.truncation", self.truncation, TRUNCATION_MODES)
        if self.split_min_elements is not None:
            check_int("mpc.split_min_elements", self.split_min_elements, 1)


@dataclass
class BenchOptions:
    """The ``bench`` group: how much the benchmarks and statistical studies measure."""

    repeats: int = 3
    """Timed repetitions per benchmark point."""
    samples: int = 1_000_000
    """Random trials of a statistical study (truncation_study: truncations per cell)."""

    def __post_init__(self) -> None:
        check_int("bench.repeats", self.repeats, 1)
        check_int("bench.samples", self.samples, 1)


GROUPS = {"mpc": MPCOptions, "bench": BenchOptions, "private_cb": PrivateCBOptions,
          "linucb_ds": LinUCBDSOptions, "samba": SambaOptions, "pprl": PPRLOptions,
          "masked_lark": MaskedLarkOptions}
"""Config group name -> its schema."""


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
    """'local': all parties in one process. 'ray': parties as Ray actors in one cluster (one
    trust domain). 'federated': one OS process per party, meeting over TLS links
    (docs/federated.md)."""
    dataset: str = "digits"
    """Dataset loader name; 'digits' is embedded (ships with scikit-learn)."""
    results_dir: str = "results"
    """Folder that receives one Parquet file per run."""
    precision_bits: int = 20
    """Fractional bits of the secret-sharing engine's fixed-point encoding."""
    ray_address: Optional[str] = None
    """None: start a private local Ray instance; else the address to join ('auto', host:port)."""
    data_dir: Optional[str] = None
    """Folder of downloaded datasets; None falls back to the PPML_DATA environment variable."""
    progress: bool = True
    """Show progress bars."""
    workers: int = 1
    """Ray tasks per party for large party-local work (per-arm updates, bulk Paillier work);
    PPRL's plaintext methods and shares backend run their trials in that many processes."""
    key_bits: int = 2048
    """Paillier modulus bits; below 2048 refused unless insecure_key_bits_ok."""
    insecure_key_bits_ok: bool = False
    """Accept Paillier keys below 2048 bits (tests; benchmarks against 1024-bit figures)."""
    data_seed: int = 0
    """Seed of the data stream (order, reward draws): public, so secure runs stay comparable."""
    placement: bool = False
    """runtime=ray: pin party i's actor to a node with the custom resource party_<i>."""
    party_timeout_s: float = DEFAULT_TIMEOUT_S
    """How long a party or role may stay silent (not connect, send nothing, not even a
    keepalive, leave a liveness check unanswered) before the run fails naming it, in every
    runtime; a busy party is waited for as long as it works (`ppml.runtime.deadlines`)."""
    run_id: Optional[str] = None
    """This run's id: the stem of its Parquet file and the folder of its checkpoints.  None: made
    when the run starts (``<experiment>-<UTC time>-<8 hex digits>``); ``resume`` sets it."""
    checkpoint_every: int = 0
    """Every this many steps each party saves its own state to its own storage, sealed
    (docs/reliability.md, "Checkpoints and resume"); 0: no checkpoints."""
    checkpoint_dir: Optional[str] = None
    """Folder of the checkpoints, one subfolder per run and party; None: <results_dir>/checkpoints."""
    resume: Optional[str] = None
    """The run_id of an interrupted run to go on with, from the last step every party holds a
    checkpoint of; its settings must be this run's."""
    restarts: int = 2
    """With checkpoints, how often a run whose party or role died or went silent starts again
    by itself from its last checkpoints (runtime=ray and federated)."""
    record_views: bool = False
    """Each role records what it received (after its own decryptions); the run writes the views
    to views/<run_id>/<role>.parquet beside its results (Samba's Controller, Comp, DC and DO
    groups; LinUCB-DS's Comp)."""

    mpc: MPCOptions = field(default_factory=MPCOptions)
    bench: BenchOptions = field(default_factory=BenchOptions)
    private_cb: PrivateCBOptions = field(default_factory=PrivateCBOptions)
    linucb_ds: LinUCBDSOptions = field(default_factory=LinUCBDSOptions)
    samba: SambaOptions = field(default_factory=SambaOptions)
    pprl: PPRLOptions = field(default_factory=PPRLOptions)
    masked_lark: MaskedLarkOptions = field(default_factory=MaskedLarkOptions)

    def __post_init__(self) -> None:
        check_int("arms", self.arms, 1)
        check_int("parties", self.parties, 2)
        check_int("dims", self.dims, 1)
        check_int("horizon", self.horizon, 1)
        check_int("workers", self.workers, 1)
        check_int("data_seed", self.data_seed, 0)
        check_int("checkpoint_every", self.checkpoint_every, 0)
        check_int("restarts", self.restarts, 0)
        for name in ("run_id", "resume"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, str) and value
                                          and value.replace("-", "").replace("_", "").isalnum()):
                raise ValueError(f"{name} must be a run id (letters, digits, '-' and '_'), "
                                 f"got {value!r}")
        if self.run_id is not None and self.resume is not None and self.run_id != self.resume:
            raise ValueError(f"resume={self.resume} goes on with that run: run_id must be "
                             f"unset or the same, got run_id={self.run_id}")
        if self.run_id is None:
            self.run_id = self.resume
        if self.seed is not None:
            check_int("seed", self.seed, 0)
        check_one_of("runtime", self.runtime, RUN_RUNTIMES)
        check_positive("party_timeout_s", self.party_timeout_s)
        for name in ("progress", "insecure_key_bits_ok", "placement", "record_views"):
            check_bool(name, getattr(self, name))
        check_key_bits(self.key_bits, self.insecure_key_bits_ok)
        check_precision_bits(self.precision_bits)
        for name in ("experiment", "dataset", "results_dir", "ray_address", "data_dir",
                     "checkpoint_dir"):
            if name in ("experiment", "dataset", "results_dir") or getattr(self, name) is not None:
                check_text(name, getattr(self, name))
        for name, schema in GROUPS.items():
            if not isinstance(getattr(self, name), schema):
                raise TypeError(f"{name} must be a {schema.__name__}, got "
                                f"{type(getattr(self, name)).__name__}")

    @classmethod
    def from_columns(cls, values: dict) -> "RunConfig":
        """A config from keys spelt as on the command line and in the results columns
        (``{"arms": 4, "samba.algorithm": "ucb"}``); unknown names are refused."""
        top, groups = {}, {name: {} for name in GROUPS}
        for key, value in values.items():
            group, dot, name = key.partition(".")
            if dot and group in groups and name in {f.name for f in fields(GROUPS[group])}:
                groups[group][name] = value
            elif not dot and key in {f.name for f in fields(cls)} and key not in GROUPS:
                top[key] = value
            else:
                raise ValueError(f"unknown config key {key!r}" + (
                    f"; it is now {' or '.join(RENAMED[key])}" if key in RENAMED else ""))
        return cls(**top, **{name: GROUPS[name](**keys) for name, keys in groups.items()})

    def columns(self) -> dict:
        """Every key as one results column: top-level keys by name, group keys dotted."""
        flat = {}
        for key, value in asdict(self).items():
            if key in GROUPS:
                flat.update({f"{key}.{name}": item for name, item in value.items()})
            else:
                flat[key] = value
        return flat



RENAMED = {name: tuple(f"{group}.{name}" for group, schema in GROUPS.items()
                       if name in {f.name for f in fields(schema)})
           for schema in GROUPS.values() for name in (f.name for f in fields(schema))}
"""An old flat key -> its spellings in the groups (epsilon is in private_cb and samba)."""


def refuse_renamed(overrides: list[str]) -> None:
    """Refuse a command-line override of a key that moved into a group, naming where it went:
    ``algorithm=ucb`` -> "algorithm is now samba.algorithm"."""
    for override in overrides:
        key = override.lstrip("+~").partition("=")[0]
        if key in RENAMED:
            spellings = " or ".join(RENAMED[key])
            raise ValueError(f"{key} is now {spellings} (config keys of one family or of the "
                             f"engine live in its group): write {RENAMED[key][0]}="
                             f"{override.partition('=')[2]}")


def engine_options(config: RunConfig) -> dict:
    """The keyword arguments of ``ppml.runtime.spmd.run`` that a run's config sets."""
    options = {"parties": config.parties, "runtime": config.runtime,
               "precision_bits": config.precision_bits, "seed": config.seed,
               "truncation": config.mpc.truncation, "workers": config.workers,
               "split_min_elements": config.mpc.split_min_elements,
               "timeout_s": config.party_timeout_s}
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
    for group in GROUPS:
        if group in cfg and isinstance(cfg[group], DictConfig):
            names = {f.name for f in fields(GROUPS[group])}
            unknown += sorted(f"{group}.{k}" for k in set(cfg[group].keys()) - names)
    if unknown:
        raise ValueError(f"unknown config keys {unknown}; known keys: {', '.join(known)} "
                         f"and those of the groups {', '.join(GROUPS)}")
    config = OmegaConf.to_object(cfg)
    if not isinstance(config, RunConfig):
        raise TypeError(
            f"expected a config composed on base_config (RunConfig), got {type(config).__name__}"
        )
    if config.data_dir is None and os.environ.get(DATA_DIR_ENV):
        config = replace(config, data_dir=os.environ[DATA_DIR_ENV])
    if config.run_id is None:
        config = replace(config, run_id=new_run_id(config.experiment))
    return config


def new_run_id(experiment: str) -> str:
    """``<experiment>-<UTC time>-<8 random hex digits>``: unique, and sorted by time."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{experiment}-{stamp}-{secrets.token_hex(4)}"


ConfigStore.instance().store(name="base_config", node=RunConfig)
