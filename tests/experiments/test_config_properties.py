"""Properties of every experiment and protocol config: each key takes every value its docstring
allows and refuses every other value (wrong types, NaN, inf, out-of-range numbers, truthy
strings for flags) with a ValueError or TypeError naming the key (`assert_refused`).

`RunConfig.from_columns` is the path of results read back and of configs made in code; Hydra's
composition refuses wrong types earlier, but only for the keys it is given typed.
"""

import math
from dataclasses import dataclass, fields

from hypothesis import given, strategies as st

from ppml.crypto.paillier.pool import OBFUSCATORS
from ppml.data.bernoulli_items import DENOMINATORS
from ppml.data.linear_arms import ARM_CHOICES
from ppml.runtime.checkpoints import CheckpointPlan
from ppml.experiments.config import GROUPS, RUN_RUNTIMES, RunConfig
from ppml.mpc.context import TRUNCATION_MODES, EngineConfig
from ppml.mpc.functions import RECIPROCAL_METHODS, START_VALUES
from ppml.mpc.protocols.argmax import METHODS
from ppml.privacy.discrete import FAMILIES
from ppml.protocols.linucb_ds.config import LinUCBDSConfig
from ppml.protocols.masked_lark.config import TASKS
from ppml.protocols.masked_lark.models import MODELS
from ppml.protocols.pprl.config import BACKENDS
from ppml.protocols.pprl.learners import LEARNERS, SELECTIONS
from ppml.protocols.private_cb.config import PrivateCBConfig, PrivateCBOptions
from ppml.protocols.samba.config import MASKS, SambaConfig
from ppml.protocols.samba.policies import ALGORITHMS, MIN_SOFTMAX_TAU, AlgorithmSpec
from ppml.runtime.roles import RUNTIMES
from tests.strategies import assert_refused, fast


@dataclass(frozen=True)
class Key:
    """The values a key takes (``valid``) and some it must refuse (``invalid``)."""

    valid: st.SearchStrategy
    invalid: st.SearchStrategy


NOT_INTEGERS = st.sampled_from([1.5, 2.0, math.nan, math.inf, "3", None, True, [1], b"1", 1j])
NOT_REALS = st.sampled_from([math.nan, math.inf, -math.inf, "0.5", None, True, [0.5], b"1", 1j])


def integer(low: int, high: int | None = None) -> Key:
    """An integer in [low, high] (no upper bound: up to low + 10^6)."""
    above = st.integers(min_value=high + 1) if high is not None else st.nothing()
    return Key(st.integers(low, low + 10**6 if high is None else high),
               st.one_of(st.integers(max_value=low - 1), above, NOT_INTEGERS))


def real(low: float = -math.inf, high: float = math.inf, low_open: bool = False,
         high_open: bool = False) -> Key:
    """A finite number between low and high (each included unless open)."""
    below = st.floats(max_value=low, exclude_max=not low_open, allow_nan=False,
                      allow_infinity=False) if low > -math.inf else st.nothing()
    above = st.floats(min_value=high, exclude_min=not high_open, allow_nan=False,
                      allow_infinity=False) if high < math.inf else st.nothing()
    valid = st.floats(max(low, -1e300), min(high, 1e300), exclude_min=low_open,
                      exclude_max=high_open)
    return Key(valid, st.one_of(below, above, NOT_REALS))


def choice(options) -> Key:
    words = st.text(alphabet="abcpx_", max_size=8).filter(lambda word: word not in options)
    return Key(st.sampled_from(options), st.one_of(words, st.sampled_from([None, 5, [options[0]]])))


def optional(key: Key) -> Key:
    return Key(st.one_of(st.none(), key.valid), key.invalid.filter(lambda v: v is not None))


FLAG = Key(st.booleans(), st.sampled_from(["true", "no", 1, 0, None, 1.5, []]))
TEXT = Key(st.text(alphabet="abc_-/.:", min_size=1, max_size=12),
           st.sampled_from(["", None, 5, [], b"x"]))
RUN_ID = Key(st.builds(str.__add__, st.sampled_from("abc019"),           # a letter or digit
                       st.text(alphabet="abc019-_", max_size=11)),
             st.sampled_from(["", "../x", "a b", None, 5, b"x"]))

RUN = {
    "experiment": TEXT, "arms": integer(1), "parties": integer(2), "dims": integer(1),
    "horizon": integer(1), "seed": optional(integer(0)), "runtime": choice(RUN_RUNTIMES),
    "dataset": TEXT, "results_dir": TEXT, "precision_bits": integer(8, 30),
    "ray_address": optional(TEXT), "data_dir": optional(TEXT), "progress": FLAG,
    "workers": integer(1), "key_bits": integer(2048), "insecure_key_bits_ok": FLAG,
    "data_seed": integer(0), "placement": FLAG, "party_timeout_s": real(0, low_open=True),
    "record_views": FLAG, "checkpoint_every": integer(0), "restarts": integer(0),
    "checkpoint_dir": optional(TEXT), "run_id": optional(RUN_ID), "resume": optional(RUN_ID),
}
"""RunConfig's own keys (docs/results-schema.md; each one's docstring in config.py)."""

POSITIVE = real(0, low_open=True)
UNIT = real(0, 1)
GROUP_KEYS = {
    "mpc.truncation": choice(TRUNCATION_MODES), "mpc.split_min_elements": optional(integer(1)),
    "bench.repeats": integer(1), "bench.samples": integer(1),
    "private_cb.epsilon": UNIT, "private_cb.regularizer": real(0),
    "private_cb.refresh_every": integer(0), "private_cb.nr_iterations": optional(integer(0)),
    "private_cb.reciprocal_start": choice(START_VALUES),
    "private_cb.reciprocal": optional(choice(RECIPROCAL_METHODS)),
    "private_cb.argmax_method": choice(METHODS), "private_cb.reward_bound": POSITIVE,
    "private_cb.checkpoints": integer(0),
    "linucb_ds.scale_bits": integer(1, 128), "linucb_ds.obfuscator": choice(OBFUSCATORS),
    "linucb_ds.user": integer(0), "linucb_ds.arm_choice": choice(ARM_CHOICES),
    "linucb_ds.split_min_work": optional(integer(1)),
    "samba.algorithm": choice(ALGORITHMS), "samba.epsilon": UNIT, "samba.eps_decay": POSITIVE,
    "samba.ucb_c": POSITIVE, "samba.softmax_tau": real(MIN_SOFTMAX_TAU),
    "samba.pursuit_beta": real(0, 1, low_open=True), "samba.threshold": optional(real()),
    "samba.denominator": choice(DENOMINATORS), "samba.min_ratings": integer(1),
    "samba.owners_per_actor": optional(integer(1)), "samba.mask": choice(MASKS),
    "pprl.task": Key(st.sampled_from(["random_walk", "FrozenLake-v1"]), TEXT.invalid),
    "pprl.partition": Key(st.just("time"), choice(("time", "observation")).invalid),
    "pprl.learner": choice(LEARNERS), "pprl.selection": choice(SELECTIONS),
    "pprl.methods": Key(st.lists(st.sampled_from(["crl", "crl_fixed", "idrl", "pprl"]),
                                 min_size=1, max_size=4),
                        st.sampled_from([[], "crl", 5, None, ["sfe"], ["rdrl"], 1.5, {}])),
    "pprl.alpha": real(0, 1, low_open=True), "pprl.gamma": real(0, 1, high_open=True),
    "pprl.epsilon": UNIT, "pprl.trials": integer(1), "pprl.steps_per_agent": integer(1),
    "pprl.rounds": integer(1), "pprl.episodes": integer(1), "pprl.episode_steps": integer(1),
    "pprl.scale_bits": integer(1, 512), "pprl.obfuscator": choice(OBFUSCATORS),
    "pprl.reward_bound": optional(POSITIVE), "pprl.backend": choice(BACKENDS),
    "pprl.trials_together": Key(st.just(1), st.one_of(st.integers(max_value=0),
                                                       st.integers(2, 9), NOT_INTEGERS)),
    "pprl.division_bits": integer(1, 512),
    "masked_lark.task": choice(TASKS), "masked_lark.reports": integer(1),
    "masked_lark.d": integer(1, 1024), "masked_lark.bound": integer(1, 2**40),
    "masked_lark.k": integer(1), "masked_lark.noise": choice(FAMILIES),
    "masked_lark.epsilon": POSITIVE, "masked_lark.delta": real(0, 1, True, True),
    "masked_lark.sigma_hat": optional(POSITIVE), "masked_lark.queries": integer(1),
    "masked_lark.advertisers": integer(1), "masked_lark.zipf": POSITIVE,
    "masked_lark.click_rate": UNIT, "masked_lark.conversion_rate": UNIT,
    "masked_lark.fake_records": integer(0), "masked_lark.polluters": integer(0, 10_000),
    "masked_lark.model": optional(choice(MODELS)), "masked_lark.epochs": integer(1),
    "masked_lark.batch_size": integer(1), "masked_lark.learning_rate": POSITIVE,
    "masked_lark.clip": POSITIVE, "masked_lark.private": FLAG,
}
"""Every key of every group, by its command-line name (with the other keys at their defaults:
pprl's task and partition, and masked_lark's polluters <= reports, depend on each other)."""

SPEC = Key(st.sampled_from(ALGORITHMS).map(AlgorithmSpec), st.sampled_from([None, "ucb", 5]))
PLAN = Key(st.one_of(st.none(), st.builds(CheckpointPlan, st.just("f"), st.integers(1, 99),
                                           st.just(("a",)), st.just("s"), st.booleans())),
            st.sampled_from(["f", 5, {"every": 5}, True]))
"""A protocol's checkpoint plan (`ppml.runtime.checkpoints.CheckpointPlan`), or None."""

PROTOCOL_CONFIGS = {
    PrivateCBConfig: {"parties": integer(2), "arms": integer(1), "dims": integer(2),
                      "horizon": integer(1)},
    LinUCBDSConfig: {"horizon": integer(1), "scale_bits": integer(1, 128),
                     "key_bits": integer(2048), "insecure_key_bits_ok": FLAG,
                     "obfuscator": choice(OBFUSCATORS), "runtime": choice(RUNTIMES),
                     "workers": integer(1), "split_min_work": optional(integer(1)),
                     "seed": optional(integer(0)), "record_views": FLAG, "timeout_s": POSITIVE,
                     "checkpoints": PLAN},
    SambaConfig: {"horizon": integer(1), "spec": SPEC,
                  "runtime": choice(RUNTIMES + ("federated",)), "mask": choice(MASKS),
                  "crypto": FLAG, "owners_per_actor": optional(integer(1)),
                  "key_bits": integer(2048), "insecure_key_bits_ok": FLAG,
                  "seed": optional(integer(0)), "record_views": FLAG, "timeout_s": POSITIVE,
                  "collect_keys": FLAG, "checkpoints": PLAN},
    EngineConfig: {"parties": integer(2), "precision_bits": integer(8, 30),
                   "truncation": choice(TRUNCATION_MODES), "seed": optional(integer(0)),
                   "clients": integer(0), "workers": integer(1), "record_views": FLAG,
                   "split_min_elements": optional(integer(1))},
}
"""The configs a protocol run takes, made in code (PrivateCBConfig: its own keys; its options
are the private_cb group's)."""
REQUIRED = {PrivateCBConfig: {"parties": 2, "arms": 3, "dims": 2 * 10**6, "horizon": 5},
            LinUCBDSConfig: {"horizon": 3},
            SambaConfig: {"horizon": 3, "spec": AlgorithmSpec("ucb")},
            EngineConfig: {"parties": 2}}


def make(config, name: str, value):
    """The config with ``name`` set to ``value`` (the others at their defaults)."""
    if config is RunConfig:
        return RunConfig.from_columns({name: value})
    if config is PrivateCBConfig:
        sizes = {**REQUIRED[config], name: value}
        return PrivateCBConfig.of(PrivateCBOptions(), **sizes)
    return config(**{**REQUIRED[config], name: value})


def value_of(config, name: str):
    group, _, key = name.partition(".")
    return getattr(getattr(config, group), key) if key else getattr(config, group)


def keys():
    """(config class, key name, Key) for every key this module covers."""
    yield from ((RunConfig, name, key) for name, key in {**RUN, **GROUP_KEYS}.items())
    for config, specs in PROTOCOL_CONFIGS.items():
        yield from ((config, name, key) for name, key in specs.items())


KEYS = list(keys())


def test_every_key_of_every_config_is_covered():
    """A new config key needs its values here."""
    run_keys = {f.name for f in fields(RunConfig) if f.name not in GROUPS}
    group_keys = {f"{group}.{f.name}" for group, schema in GROUPS.items()
                  for f in fields(schema)}
    assert set(RUN) == run_keys and set(GROUP_KEYS) == group_keys
    for config, specs in PROTOCOL_CONFIGS.items():
        inherited = {f.name for f in fields(PrivateCBOptions)} if config is PrivateCBConfig \
            else set()
        assert set(specs) == {f.name for f in fields(config)} - inherited, config.__name__


@fast(200)
@given(st.data())
def test_every_key_takes_the_values_its_docstring_allows(data):
    """A valid value of any key makes the config, which keeps it."""
    config, name, key = data.draw(st.sampled_from(KEYS))
    value = data.draw(key.valid, label=name)
    made = make(config, name, value)
    assert value_of(made, name) == value


@fast(250)
@given(st.data())
def test_every_key_refuses_other_values_naming_the_key(data):
    """Any invalid value of any key is refused naming the key (dotted for a group's)."""
    config, name, key = data.draw(st.sampled_from(KEYS))
    value = data.draw(key.invalid, label=name)
    assert_refused(lambda: make(config, name, value), name)


@fast(30)
@given(bits=st.integers(256, 2047), small=st.one_of(st.integers(-9, 255), NOT_INTEGERS))
def test_small_paillier_keys_need_the_explicit_opt_in(bits, small):
    """key_bits below 2048 only with insecure_key_bits_ok=True, and never below 256."""
    assert_refused(lambda: RunConfig(key_bits=bits), "key_bits", "insecure_key_bits_ok")
    assert RunConfig(key_bits=bits, insecure_key_bits_ok=True).key_bits == bits
    assert_refused(lambda: RunConfig(key_bits=small, insecure_key_bits_ok=True), "key_bits")
