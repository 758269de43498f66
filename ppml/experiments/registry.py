"""The registry of experiments: a name -> a function from `RunConfig` to `RunOutput`.

An experiment module registers itself at import time::

    @register("bench_ops")
    def bench_ops(config: RunConfig) -> RunOutput: ...

and is imported by ``ppml/experiments/__init__.py``, so `get` sees it once the package is imported.
An experiment runs with its progress bars shown or not as its config's ``progress`` says
(`ppml.runtime.progress.showing`).
An experiment that reads a dataset or has a bound only its inputs reveal registers a ``check``
too (``@register("samba", check=load_data)``): `check_inputs` runs it before the run starts Ray
or any party, so that a missing dataset or an impossible setting is refused at once (the
experiment may load the same data again: the loaders' caches make that cheap).
"""

import functools
from collections.abc import Callable

from ppml.experiments.config import RunConfig
from ppml.experiments.results import RunOutput
from ppml.runtime import progress

Experiment = Callable[[RunConfig], RunOutput]

_EXPERIMENTS: dict[str, Experiment] = {}
_CHECKS: dict[str, Callable[[RunConfig], object]] = {}


def register(name: str, check: Callable[[RunConfig], object] | None = None
             ) -> Callable[[Experiment], Experiment]:
    """Decorator registering an experiment under ``name``; a name can be registered once.
    ``check(config)`` loads and checks the experiment's inputs without starting anything,
    raising what its loaders and checks raise (ValueError, TypeError, OSError)."""
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
        if check is not None:
            _CHECKS[name] = check
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


def check_inputs(config: RunConfig) -> None:
    """Run the ``check`` registered with ``config.experiment``, if any (`register`)."""
    if config.experiment in _CHECKS:
        _CHECKS[config.experiment](config)
