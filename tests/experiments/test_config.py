"""The run configuration: Hydra refuses bad keys and types, RunConfig refuses bad values."""

import dataclasses
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import yaml
from hydra.errors import ConfigCompositionException

from ppml.experiments.config import GROUPS, MPCOptions, RunConfig, load_config, refuse_renamed
from ppml.protocols.samba.config import SambaOptions

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf"



def test_default_config_is_bench_ops_with_its_defaults(compose_run_config):
    config = load_config(compose_run_config())
    assert isinstance(config, RunConfig)
    assert config.experiment == "bench_ops"
    assert (config.parties, config.arms, config.dims, config.runtime) == (2, 10, 5, "local")
    assert (config.bench.samples, config.bench.repeats, config.seed) == (1_000_000, 3, None)


def test_command_line_overrides_win_over_the_experiment_file(compose_run_config):
    config = load_config(compose_run_config("parties=3", "seed=7", "bench.samples=5"))
    assert (config.parties, config.seed, config.bench.samples) == (3, 7, 5)


@pytest.mark.parametrize(
    "override, named",
    [("arsm=3", "arsm"), ("parties=two", "parties"), ("precision_bits=1.5", "precision_bits")],
)
def test_hydra_refuses_a_misspelt_key_or_a_wrong_type(override, named, compose_run_config):
    with pytest.raises(ConfigCompositionException) as refused:
        compose_run_config(override)
    assert named in str(refused.value) + str(refused.value.__cause__)


def test_an_appended_unknown_key_is_refused(compose_run_config):
    with pytest.raises(ValueError, match=r"unknown config keys \['arsm'\]"):
        load_config(compose_run_config("+arsm=3"))


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("parties", 1, "parties must be >= 2, got 1"),
        ("arms", 0, "arms must be >= 1"),
        ("dims", 0, "dims must be >= 1"),
        ("horizon", 0, "horizon must be >= 1"),
        ("bench.repeats", 0, "bench.repeats must be >= 1"),
        ("seed", -1, "seed must be >= 0"),
        ("runtime", "cloud", "runtime must be one of local, ray"),
        ("mpc.truncation", "round", "mpc.truncation must be one of .*exact.*; got 'round'"),
        ("precision_bits", 7, r"precision_bits must be an integer in \[8, 30\], got 7"),
        ("precision_bits", 31, r"precision_bits must be an integer in \[8, 30\], got 31"),
        ("bench.samples", 0, "bench.samples must be >= 1"),
        ("private_cb.epsilon", 1.5, r"private_cb.epsilon must be in \[0, 1\]"),
        ("linucb_ds.scale_bits", 0, "linucb_ds.scale_bits must be >= 1"),
        ("samba.min_ratings", 0, "samba.min_ratings must be >= 1"),
        ("results_dir", "", "results_dir must be a non-empty string"),
    ],
)
def test_out_of_bound_values_name_the_parameter_and_bound(key, value, message):
    with pytest.raises(ValueError, match=message):
        RunConfig.from_columns({key: value})


def numeric_keys():
    """(key, int or float) for every integer and real key of the run and its groups."""
    for prefix, schema in [("", RunConfig), *((f"{g}.", s) for g, s in GROUPS.items())]:
        hints = typing.get_type_hints(schema)
        for field in dataclasses.fields(schema):
            kind = next(t for t in (*typing.get_args(hints[field.name]), hints[field.name])
                        if t is not type(None))
            if kind in (int, float):
                yield prefix + field.name, kind


@pytest.mark.parametrize("key, kind", list(numeric_keys()))
def test_a_number_of_the_wrong_type_is_a_type_error_naming_the_key(key, kind):
    for value in ["two", True, [2]] + ([2.5, 2.0] if kind is int else []):
        with pytest.raises(TypeError, match=f"^{key} must be"):
            RunConfig.from_columns({key: value})


def test_bounds_are_checked_on_the_composed_config_too(compose_run_config):
    with pytest.raises(ValueError, match="parties must be >= 2"):
        load_config(compose_run_config("parties=1"))


def test_data_dir_falls_back_to_ppml_data(monkeypatch, tmp_path, compose_run_config):
    monkeypatch.setenv("PPML_DATA", str(tmp_path))
    assert load_config(compose_run_config()).data_dir == str(tmp_path)
    assert load_config(compose_run_config("data_dir=/elsewhere")).data_dir == "/elsewhere"
    monkeypatch.delenv("PPML_DATA")
    assert load_config(compose_run_config()).data_dir is None


def test_the_schema_defaults_pass_validation():
    assert dataclasses.asdict(RunConfig())["runtime"] == "local"


@pytest.mark.parametrize("path", sorted((CONF / "experiment").glob("*.yaml")), ids=lambda p: p.stem)
def test_experiment_files_are_global_and_name_their_experiment(path):
    text = path.read_text()
    assert text.startswith("# @package _global_\n")
    assert yaml.safe_load(text)["experiment"] == path.stem


@pytest.mark.parametrize("override, named", [("arsm=3", "arsm"), ("parties=two", "parties")])
def test_the_command_line_refuses_bad_config_before_running(tmp_path, override, named):
    done = subprocess.run(
        [sys.executable, "-m", "jobs.run", override, f"results_dir={tmp_path}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1   # one line: jobs/cli.py
    assert done.stderr.startswith("error: ") and named in done.stderr
    assert not list(tmp_path.glob("*.parquet"))


@pytest.mark.parametrize("override, spelling", [
    ("algorithm=ucb", "samba.algorithm"), ("truncation=exact", "mpc.truncation"),
    ("repeats=2", "bench.repeats"), ("obfuscator=djn", "linucb_ds.obfuscator"),
    ("epsilon=0.2", "private_cb.epsilon or samba.epsilon"), ("+checkpoints=3", "private_cb")])
def test_an_old_flat_key_is_refused_with_its_new_spelling(override, spelling):
    with pytest.raises(ValueError, match=f"is now {spelling}"):
        refuse_renamed(["experiment=samba", override])
    refuse_renamed(["experiment=samba", "samba.algorithm=ucb", "arms=3"])


def test_the_command_line_names_the_new_spelling(tmp_path):
    done = subprocess.run([sys.executable, "-m", "jobs.run", "algorithm=ucb",
                           f"results_dir={tmp_path}"], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "algorithm is now samba.algorithm" in done.stderr


def test_group_keys_compose_and_land_in_dotted_columns(compose_run_config):
    config = load_config(compose_run_config("experiment=samba", "samba.ucb_c=3.0",
                                            "mpc.truncation=exact"))
    columns = config.columns()
    assert columns["samba.ucb_c"] == 3.0 and columns["mpc.truncation"] == "exact"
    assert "samba" not in columns and RunConfig.from_columns(columns) == config


def test_a_misspelt_group_key_is_refused(compose_run_config):
    with pytest.raises(ConfigCompositionException):
        compose_run_config("samba.algorithmm=ucb")
    with pytest.raises(ValueError, match="unknown config key 'samba.algorithmm'"):
        RunConfig.from_columns({"samba.algorithmm": "ucb"})


def test_engine_options_follow_the_config():
    from ppml.experiments.config import engine_options
    local = engine_options(RunConfig(parties=3, seed=4, placement=True, party_timeout_s=9.0))
    assert local == {"parties": 3, "runtime": "local", "precision_bits": 20, "seed": 4,
                     "truncation": "bounded", "workers": 1, "split_min_elements": None,
                     "timeout_s": 9.0}
    exact = RunConfig(mpc=MPCOptions(truncation="exact", split_min_elements=5))
    assert engine_options(exact)["truncation"] == "exact"
    assert engine_options(exact)["split_min_elements"] == 5
    assert engine_options(RunConfig(runtime="ray", placement=True))["placement"] is True


def test_min_ratings_is_checked():
    assert RunConfig().samba.min_ratings == 20
    with pytest.raises(ValueError, match="min_ratings must be >= 1"):
        SambaOptions(min_ratings=0)
