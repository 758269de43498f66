"""The experiment registry: register once, get by name, unknown names list the known ones."""

import pytest

from ppml.experiments import registry
from ppml.experiments.config import RunConfig
from ppml.experiments.results import RunOutput
from ppml.runtime import progress


def _noop(config):
    return RunOutput()


def test_register_then_get_returns_the_function():
    experiment = registry.register("test_registry_roundtrip")(_noop)
    assert registry.get("test_registry_roundtrip") is experiment
    assert experiment.__wrapped__ is _noop
    assert "test_registry_roundtrip" in registry.names()


def test_an_experiment_shows_its_bars_as_its_config_says(capsys):
    def drawing(config):
        list(progress.track(range(2), "registered phase"))
        return RunOutput()

    experiment = registry.register("test_registry_progress")(drawing)
    experiment(RunConfig(progress=False))
    assert capsys.readouterr().err == ""
    experiment(RunConfig(progress=True))
    assert "registered phase" in capsys.readouterr().err


def test_a_check_s_result_is_the_experiment_s_inputs_and_runs_once():
    checks = []

    def check(config):
        checks.append(config.seed)
        return {"loaded": config.seed}

    experiment = registry.register("test_registry_inputs", check=check)(
        lambda config, inputs: RunOutput(summary=inputs))
    config = RunConfig(experiment="test_registry_inputs", seed=4, progress=False)
    inputs = registry.check_inputs(config)
    assert experiment(config, inputs).summary == {"loaded": 4} and checks == [4]
    assert experiment(config).summary == {"loaded": 4} and checks == [4, 4]   # checked itself
    assert registry.check_inputs(RunConfig(experiment="test_registry_unchecked")) is None


def test_a_name_can_be_registered_once():
    registry.register("test_registry_once")(_noop)
    with pytest.raises(ValueError, match="'test_registry_once' is already registered"):
        registry.register("test_registry_once")(lambda config: RunOutput())


def test_unknown_name_lists_the_known_names():
    registry.register("test_registry_known")(_noop)
    known = "unknown experiment 'nope'; known experiments: .*test_registry_known"
    with pytest.raises(ValueError, match=known):
        registry.get("nope")


def test_empty_name_is_refused():
    with pytest.raises(ValueError, match="non-empty"):
        registry.register("")
