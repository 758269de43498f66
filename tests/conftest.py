"""Shared fixtures. Only tests that request `ray_cluster` start Ray; the rest never do."""

from pathlib import Path

import pytest
import ray
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

import ppml.experiments.config  # noqa: F401 (stores base_config in Hydra's ConfigStore)

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


@pytest.fixture(scope="session")
def ray_cluster():
    """A private local Ray instance for the whole test session (2 CPUs, no dashboard).

    Yields the `ray.init` context; its ``address_info["gcs_address"]`` lets another process join.
    Ray 2.60 has no ``local_mode``: actors and tasks run in real worker processes.
    """
    context = ray.init(address="local", num_cpus=2, include_dashboard=False)
    yield context
    ray.shutdown()


@pytest.fixture
def spy(monkeypatch):
    """``spy(module, name)``: a list that receives the positional arguments of every call of
    ``module.name`` from then on, for the rest of the test (the calls still run)."""

    def watch(module, name: str) -> list:
        calls, real = [], getattr(module, name)

        def recorded(*args, **kwargs):
            calls.append(args)
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, recorded)
        return calls

    return watch


@pytest.fixture
def compose_run_config():
    """``compose_run_config(*overrides)``: conf/config.yaml composed with the overrides, as
    ``python -m jobs.run`` composes it (Hydra refusals raise here, before anything runs)."""

    def compose_config(*overrides: str) -> DictConfig:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return compose("config", overrides=list(overrides))

    return compose_config
