"""The registry of experiments: a name -> a function from `RunConfig` to `RunOutput`.

An experiment module registers itself at import time::

    @register("bench_ops")
    def bench_ops(config: RunConfig) -> RunOutput: ...

and is imported by ``ppml/experiments/__init__.py``, so `get` sees it once the package is imported.
An experiment runs with its progress bars shown or not as its config's ``progress`` says
(`ppml.runtime.progress.showing`).
An experiment that reads a dataset or has a bound only its inputs reveal registers a ``check``
too (``@register("samba", check=load_data)``): `check_inputs` runs it before the run starts Ray
or any party, so that a missing dataset or an impossible setting is refused at once.  Such an
experiment takes what its check returned (the loaded data) as its second argument, so that a
run reads its inputs once: ``python -m jobs.run`` passes it on (``experiment(config,
inputs)``); called with the config alone, the experiment runs its check first.
"""

import functools
from collections.abc import Callable

from ppml.experiments.config import RunConfig
from ppml.experiments.results import RunOutput
from ppml.runtime import progress

Experiment = Callable[[RunConfig], RunOutput]

_EXPERIMENTS: dict[str, Experiment] = {}
_CHECKS: dict[str, Callable[[RunConfig], object]] = {}
UNCHECKED = object()
"""An experiment's ``inputs`` when its check has not run yet (`register`)."""


def register(name: str, check: Callable[[RunConfig], object] | None = None
             ) -> Callable[[Experiment], Experiment]:
    """Decorator registering an experiment under ``name``; a name can be registered once.
    ``check(config)`` loads and checks the experiment's inputs without starting anything,
    raising what its loaders and checks raise (ValueError, TypeError, OSError), and returns
    them; the experiment is then ``fn(config, inputs)``, and the registered function
    ``experiment(config, inputs=UNCHECKED)`` runs the check itself unless given its result."""
    if not name:
        raise ValueError("experiment name must be a non-empty string")

    def decorate(fn: Experiment) -> Experiment:
        if name in _EXPERIMENTS:
            raise ValueError(f"experiment {name!r} is already registered ({_EXPERIMENTS[name]!r})")

        @functools.wraps(fn)
        def experiment(config: RunConfig, inputs=UNCHECKED) -> RunOutput:
            with progress.showing(config.progress):
                if check is None:
                    return fn(config)
                return fn(config, check(config) if inputs is UNCHECKED else inputs)

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


def check_inputs(config: RunConfig):
    """What the ``check`` registered with ``config.experiment`` returns, for the experiment
    (`register`); None without one."""
    check = _CHECKS.get(config.experiment)
    return None if check is None else check(config)
