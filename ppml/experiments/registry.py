"""The registry of experiments: a name -> a function from `RunConfig` to `RunOutput`.

An experiment module registers itself at import time::

    @register("bench_ops")
    def bench_ops(config: RunConfig) -> RunOutput: ...

and is imported by ``ppml/experiments/__init__.py``, so `get` sees it once the package is imported.
An experiment runs with its progress bars shown or not as its config's ``progress`` says
(`ppml.runtime.progress.showing`).
"""

import functools
from collections.abc import Callable

from ppml.experiments.config import RunConfig
from ppml.experiments.results import RunOutput
from ppml.runtime import progress

Experiment = Callable[[RunConfig], RunOutput]

_EXPERIMENTS: dict[str, Experiment] = {}


def register(name: str) -> Callable[[Experiment], Experiment]:
    """Decorator registering an experiment under ``name``; a name can be registered once."""
    if not name:
        raise ValueError("experiment name must be a non-empty string")

    def decorate(fn: Experiment) -> Experiment:
        if name in _EXPERIMENTS:
            raise ValueError(f"experiment {name!r} is already registered ({_EXPERIMENTS[name]!r})")

        @functools.wraps(fn)
        def experiment(config: RunConfig) -> RunOutput:
            with progress.showing(config.progress):
                return fn(config)

        _EXPERIMENTS[name] = experiment
        return experiment

    return decorate


def get(name: str) -> Experiment:
    """The experiment registered under ``name``; ValueError listing the known names otherwise."""
    try:
        return _EXPERIMENTS[name]
    except KeyError:
        known = ", ".join(names()) or "(none registered)"
        raise ValueError(f"unknown experiment {name!r}; known experiments: {known}") from None


def names() -> list[str]:
    """Registered experiment names, sorted."""
    return sorted(_EXPERIMENTS)
