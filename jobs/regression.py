"""Decisions and rewards of every experiment, kept as a regression record.

``python -m jobs.regression record`` runs each case of `CASES` (every experiment, seeded, small
sizes) and stores the columns that a refactoring must not change (arms, rewards, sums, rounds,
bytes, counts) in ``tests/jobs/regression/<case>.json``; ``python -m jobs.regression check``
runs them again and lists every difference.  Timing columns, run metadata and config values are
left out: they differ from run to run, or are the inputs themselves.  tests/jobs/test_regression.py
checks the records in its own process (every local case; one Ray and one federated case per
family).

A case that needs a dataset from ``PPML_DATA`` is skipped (and said so) when it is absent.
Every case runs in seeded mode, which is INSECURE: it exists to compare runs.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from hydra import compose, initialize_config_dir

from jobs.cli import InputError, run_command
from jobs.run import CONF_DIR, run
from ppml.experiments.config import load_config

RECORD_DIR = Path(__file__).resolve().parent.parent / "tests" / "jobs" / "regression"
TIMING = ("_s", "_ms", "_us", "_mb")
"""Columns whose names end so are measurements of time or memory, not results ..."""
TIMING_WORDS = ("seconds", "slowdown", "speedup")
"""... and so are those whose names hold one of these words."""
META = ("run_id", "experiment", "code_version", "started_at")
MACHINE_DEPENDENT = ("float_",)
"""Columns of the float64 plaintext baselines (LinUCB-DS's and SpectralUCB-DS's ``float_*``):
their arms flip on near-ties with the machine's LAPACK (SpectralUCB's graph eigenvectors), so
they are not recorded; the secure protocols' decisions and the fixed-point references that
they must equal are."""
SMALL_KEYS = ("key_bits=512", "insecure_key_bits_ok=true")
"""Paillier keys of 512 bits: INSECURE, for speed; seeded runs derive them from the seed."""


@dataclass(frozen=True)
class Case:
    """One seeded run: a name, its overrides, and the datasets it reads from PPML_DATA."""

    name: str
    overrides: tuple
    needs: tuple = ()


SAMBA_ALGORITHMS = ("ucb", "thompson", "eps_greedy", "eps_greedy_decreasing", "softmax",
                    "pursuit")

CASES = (
    Case("bench_ops", ("experiment=bench_ops", "runtime=local", "parties=2", "arms=4", "dims=3",
                       "bench.repeats=1", "seed=11")),
    Case("bench_ops_p3", ("experiment=bench_ops", "runtime=local", "parties=3", "arms=3",
                          "dims=2", "bench.repeats=1", "seed=12")),
    *(Case(f"truncation_study_{mode}", ("experiment=truncation_study", f"mpc.truncation={mode}",
                                        "bench.samples=4000", "precision_bits=16", "parties=3",
                                        "seed=13"))
      for mode in ("exact", "bounded", "probabilistic")),
    Case("private_cb", ("experiment=private_cb", "horizon=80", "dims=8", "seed=21",
                        "progress=false")),
    Case("private_cb_p3_tournament", ("experiment=private_cb", "horizon=40", "dims=6",
                                      "parties=3", "private_cb.argmax_method=tournament",
                                      "mpc.truncation=exact", "seed=22", "progress=false")),
    Case("private_cb_paper_start", ("experiment=private_cb", "horizon=40", "dims=6",
                                    "private_cb.reciprocal_start=paper",
                                    "private_cb.regularizer=0.5", "private_cb.refresh_every=10",
                                    "private_cb.epsilon=0.3", "seed=23", "progress=false")),
    Case("private_cb_checkpoints", ("experiment=private_cb", "horizon=60", "dims=6",
                                    "private_cb.checkpoints=2", "seed=24", "progress=false")),
    Case("private_cb_kmeans", ("experiment=private_cb", "dataset=kmeans_mnist", "arms=4",
                               "horizon=40", "dims=6", "seed=25", "progress=false"),
         needs=("mnist",)),
    Case("private_cb_kmeans_digits", ("experiment=private_cb", "dataset=kmeans_digits",
                                      "arms=4", "horizon=40", "dims=6", "seed=25",
                                      "progress=false")),
    Case("private_cb_mnist", ("experiment=private_cb", "dataset=mnist", "horizon=40",
                              "seed=26", "progress=false"), needs=("mnist",)),
    Case("linucb_ds_synthetic", ("experiment=linucb_ds", "dataset=synthetic", "arms=5",
                                 "dims=3", "horizon=30", "seed=31", *SMALL_KEYS)),
    Case("linucb_ds_djn", ("experiment=linucb_ds", "dataset=synthetic", "arms=4", "dims=2",
                           "horizon=20", "linucb_ds.obfuscator=djn",
                           "linucb_ds.scale_bits=20", "seed=32", *SMALL_KEYS)),
    Case("linucb_ds_movielens", ("experiment=linucb_ds", "arms=6", "dims=3", "horizon=30",
                                 "linucb_ds.arm_choice=random", "linucb_ds.user=3", "seed=33",
                                 *SMALL_KEYS), needs=("ml-100k",)),
    Case("spectral_ucb_ds", ("experiment=spectral_ucb_ds", "arms=12", "dims=5", "horizon=12",
                             "seed=34", *SMALL_KEYS), needs=("ml-100k",)),
    *(Case(f"samba_{algorithm}", ("experiment=samba", "dataset=synthetic",
                                  f"samba.algorithm={algorithm}", "arms=5", "horizon=60",
                                  "seed=41", "samba.mask=paper", *SMALL_KEYS))
      for algorithm in SAMBA_ALGORITHMS),
    *(Case(f"samba_mpc_{algorithm}", ("experiment=samba", "dataset=synthetic",
                                      f"samba.algorithm={algorithm}", "arms=5", "horizon=60",
                                      "seed=45", *SMALL_KEYS))
      for algorithm in SAMBA_ALGORITHMS),
    Case("samba_movielens", ("experiment=samba", "samba.algorithm=ucb", "arms=6", "horizon=40",
                             "seed=42", "samba.mask=paper", *SMALL_KEYS), needs=("ml-100k",)),
    Case("private_cb_ray", ("experiment=private_cb", "runtime=ray", "horizon=20", "dims=6",
                            "seed=27", "progress=false")),
    Case("linucb_ds_ray", ("experiment=linucb_ds", "runtime=ray", "dataset=synthetic", "arms=4",
                           "dims=2", "horizon=12", "seed=35", *SMALL_KEYS)),
    Case("samba_ray", ("experiment=samba", "runtime=ray", "dataset=synthetic",
                       "samba.algorithm=thompson", "arms=4", "horizon=30", "seed=44",
                       "samba.mask=paper", *SMALL_KEYS)),
    Case("samba_mpc_ray", ("experiment=samba", "runtime=ray", "dataset=synthetic",
                           "samba.algorithm=pursuit", "arms=4", "horizon=30", "seed=46",
                           *SMALL_KEYS)),
    Case("samba_jester", ("experiment=samba", "dataset=jester", "samba.algorithm=eps_greedy",
                          "arms=6", "horizon=40", "seed=43", "samba.mask=paper", *SMALL_KEYS),
         needs=("jester",)),
    *(Case(f"pprl_time_{backend}", ("experiment=pprl", "pprl.task=CliffWalking-v1",
                                    "pprl.reward_bound=100", "pprl.methods=[crl_fixed,pprl]",
                                    "pprl.learner=qlearning", "pprl.selection=epsilon_greedy",
                                    "pprl.steps_per_agent=40", "pprl.trials=1",
                                    f"pprl.backend={backend}", "pprl.scale_bits=20",
                                    "progress=false", "seed=51", *SMALL_KEYS))
      for backend in ("paillier", "shares")),
    *(Case(f"pprl_time_shares_{runtime}", ("experiment=pprl", f"runtime={runtime}",
                                           "pprl.task=CliffWalking-v1", "pprl.reward_bound=100",
                                           "pprl.methods=[pprl]", "pprl.learner=qlearning",
                                           "pprl.selection=epsilon_greedy",
                                           "pprl.steps_per_agent=40", "pprl.trials=1",
                                           "pprl.backend=shares", "pprl.scale_bits=20",
                                           "progress=false", "seed=51"))
      for runtime in ("ray", "federated")),
    *(Case(f"pprl_time_{runtime}", ("experiment=pprl", f"runtime={runtime}",
                                    "pprl.task=FrozenLake-v1", "pprl.reward_bound=1",
                                    "pprl.methods=[crl_fixed,pprl]", "pprl.learner=qlearning",
                                    "pprl.selection=epsilon_greedy", "pprl.epsilon=0.3",
                                    "pprl.steps_per_agent=40", "pprl.rounds=2", "parties=3",
                                    "pprl.trials=1", "progress=false", "seed=53",
                                    *SMALL_KEYS))
      for runtime in ("ray", "federated")),
    *(Case(f"pprl_observation_{runtime}", ("experiment=pprl", f"runtime={runtime}",
                                           "pprl.task=load_balancing",
                                           "pprl.partition=observation",
                                           "pprl.methods=[crl_fixed,pprl]",
                                           "pprl.learner=qlearning",
                                           "pprl.selection=epsilon_greedy", "pprl.epsilon=0.3",
                                           "pprl.episodes=1", "pprl.episode_steps=6",
                                           "parties=3", "pprl.trials=1", "progress=false",
                                           "seed=54", *SMALL_KEYS))
      for runtime in ("ray", "federated")),
    *(Case(f"pprl_observation_{backend}", ("experiment=pprl", "pprl.task=load_balancing",
                                           "pprl.partition=observation",
                                           "pprl.methods=[crl_fixed,pprl]",
                                           "pprl.selection=epsilon_greedy", "pprl.episodes=2",
                                           "pprl.episode_steps=15", "pprl.trials=1",
                                           f"pprl.backend={backend}", "pprl.scale_bits=20",
                                           "progress=false", "seed=52", *SMALL_KEYS))
      for backend in ("paillier", "shares")),
    *(Case(f"pprl_observation_shares_{runtime}", (
        "experiment=pprl", f"runtime={runtime}", "pprl.task=load_balancing",
        "pprl.partition=observation", "pprl.methods=[pprl]", "pprl.selection=epsilon_greedy",
        "pprl.episodes=2", "pprl.episode_steps=15", "pprl.trials=1", "pprl.backend=shares",
        "pprl.scale_bits=20", "progress=false", "seed=52"))
      for runtime in ("ray", "federated")),
    *(Case(f"masked_lark_aggregate_{runtime}", (
        "experiment=masked_lark", f"runtime={runtime}", "masked_lark.reports=400",
        "masked_lark.queries=6", "masked_lark.advertisers=4", "masked_lark.k=4",
        "masked_lark.polluters=5", "masked_lark.fake_records=1", "masked_lark.d=3",
        "masked_lark.bound=4", "parties=3", "progress=false", "seed=61"))
      for runtime in ("local", "ray", "federated")),
    Case("masked_lark_train", ("experiment=masked_lark", "masked_lark.task=train",
                               "dataset=breast_cancer", "masked_lark.epochs=2",
                               "masked_lark.batch_size=128", "progress=false", "seed=62")),
)


def data_available(case: Case) -> bool:
    """Whether the datasets the case reads are in PPML_DATA."""
    folder = os.environ.get("PPML_DATA")
    return all(folder and (Path(folder) / name).is_dir() for name in case.needs)


def compare_columns(table, config_keys: set) -> dict:
    """The result columns of a run's table: all but metadata, config values, timings and
    the machine-dependent float baselines."""
    kept = {}
    for name in table.column_names:
        if name in META or name in config_keys or name.endswith(TIMING) \
                or name.startswith(MACHINE_DEPENDENT) \
                or any(word in name for word in TIMING_WORDS):
            continue
        kept[name] = table.column(name).to_pylist()
    return kept


def run_case(case: Case, results_dir: str) -> dict:
    """Run ``case`` into ``results_dir``; its result columns."""
    overrides = [*case.overrides, f"results_dir={results_dir}"]
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    config_keys = set(load_config(cfg).columns())
    path = run(cfg)
    return compare_columns(pq.read_table(path), config_keys)


def differences(expected: dict, actual: dict) -> list[str]:
    """What differs between two recorded cases (a missing column counts; a new one does not)."""
    problems = []
    for name, values in expected.items():
        if name not in actual:
            problems.append(f"column {name!r} is missing")
        elif not _same(values, actual[name]):
            first = next(i for i, (a, b) in enumerate(zip(values, actual[name]))
                         if not _same([a], [b])) if len(values) == len(actual[name]) else None
            where = f"first at row {first}" if first is not None else "lengths differ"
            problems.append(f"column {name!r} differs ({where})")
    return problems


FLOAT_TOLERANCE = 1e-6
"""Relative tolerance of float columns (evaluation metrics: losses, score errors), which move
in their last bits with the machine's BLAS and SIMD paths; decisions, rewards given as
integers, counts and flags compare exactly."""


def _same(left: list, right: list) -> bool:
    if len(left) != len(right):
        return False
    return all(_same_value(a, b) for a, b in zip(left, right))


def _same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or \
            math.isclose(a, b, rel_tol=FLOAT_TOLERANCE, abs_tol=1e-12)
    if isinstance(a, list) and isinstance(b, list):
        return _same(a, b)
    return a == b


def record_path(case: Case) -> Path:
    return RECORD_DIR / f"{case.name}.json"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("record", "check"):
        raise InputError("usage: python -m jobs.regression record|check [case ...]")
    mode, chosen = argv[0], set(argv[1:])
    unknown = chosen - {case.name for case in CASES}
    if unknown:
        raise InputError(f"unknown cases {sorted(unknown)}; known: "
                         f"{', '.join(case.name for case in CASES)}")
    failed = []
    with tempfile.TemporaryDirectory() as results_dir:
        for case in CASES:
            if chosen and case.name not in chosen:
                continue
            if not data_available(case):
                print(f"{case.name}: skipped (needs {', '.join(case.needs)} in PPML_DATA)")
                continue
            columns = run_case(case, results_dir)
            if mode == "record":
                RECORD_DIR.mkdir(parents=True, exist_ok=True)
                record_path(case).write_text(json.dumps(columns, sort_keys=True) + "\n")
                print(f"{case.name}: recorded {len(columns)} columns")
                continue
            problems = differences(json.loads(record_path(case).read_text()), columns)
            print(f"{case.name}: {'; '.join(problems) if problems else 'same'}")
            if problems:
                failed.append(case.name)
    if failed:
        print(f"{len(failed)} cases differ: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    run_command(main)
