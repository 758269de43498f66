"""Run one SPMD protocol program for P parties, in one process or with parties as Ray actors."""

from __future__ import annotations

from ppml.checks import check_int, check_positive
from ppml.crypto.rng import warn_insecure
from ppml.mpc.context import EngineConfig, PerParty
from ppml.mpc.local import check_key, in_process
from ppml.runtime.cluster import ensure_ray
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S

RUNTIMES = ("local", "ray")


def check_inputs(inputs, ranks: int) -> dict:
    inputs = dict(inputs or {})
    for party, kwargs in inputs.items():
        check_int("an inputs key", party, 0, ranks - 1, what="a party index")
        if not isinstance(kwargs, dict):
            raise ValueError(f"inputs[{party}] must be a dict of keyword arguments, got "
                             f"{type(kwargs).__name__}")
    return inputs


def select_party(value, party: int):
    """Party ``party``'s part of a program's return value (PerParty entries are per party)."""
    if isinstance(value, PerParty):
        return value[party]
    if isinstance(value, tuple):
        return tuple(select_party(v, party) for v in value)
    if isinstance(value, list):
        return [select_party(v, party) for v in value]
    if isinstance(value, dict):
        return {k: select_party(v, party) for k, v in value.items()}
    return value


def run(program, parties: int, runtime: str = "local", precision_bits: int = 20, seed=None,
        inputs: dict | None = None, truncation: str = "bounded", record_views: bool = False,
        clients: int = 0, dealer_secret: bytes | None = None, workers: int = 1,
        split_min_elements: int | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
        **runtime_options) -> list:
    """Run ``program(ctx, **inputs_of_this_party)`` SPMD for every party; return outs[i] per party.

    Ranks 0..parties-1 compute on shares; ranks parties..parties+clients-1 are clients that hold
    no shares but may input secrets and receive revealed values (Hannun et al.'s p' and p'').

    ``dealer_secret`` (32 bytes) keys the dealer's own randomness (private Bernoulli and Uniform
    samples, permutations) instead of a fresh or seed-derived key.  It is for evaluation
    harnesses that replay those draws in a plaintext reference
    (:class:`ppml.protocols.private_cb.exploration.ExplorationTape`); only the dealer and the
    harness see it.

    ``workers > 1`` splits party-local products of ``split_min_elements`` or more elements
    (None: the measured crossover) over arms into that many Ray tasks on each party's node
    (:mod:`ppml.mpc.local_tasks`); a private Ray instance starts if needed.

    ``timeout_s``: how long a party waits for a peer's message (and the run for each party's
    set-up) before the run fails naming the silent one (`ppml.runtime.deadlines`); in the local
    runtime nobody waits.

    ``seed=None`` (default) draws every key from the OS CSPRNG; an integer seed is an INSECURE
    reproducible mode and says so in the log.  The same seed gives bit-identical results in the
    ``local`` and the ``ray`` runtime.
    """
    config = EngineConfig(parties, precision_bits, truncation, seed, clients, workers,
                          record_views, split_min_elements)
    if runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of {RUNTIMES}, got {runtime!r}")
    inputs = check_inputs(inputs, config.ranks)
    check_positive("timeout_s", timeout_s)
    if dealer_secret is not None:
        check_key(dealer_secret)
    if seed is not None:
        warn_insecure(seed)
    if runtime == "ray":
        from ppml.runtime.ray_spmd import run_ray  # imports the Ray party actors
        return run_ray(program, config, inputs, dealer_secret, timeout_s, **runtime_options)
    if runtime_options:
        raise ValueError(f"unknown options for the local runtime: {sorted(runtime_options)}")
    merged = {}
    for party in sorted(inputs):
        for name, value in inputs[party].items():
            if name in merged and merged[name] is not value:
                raise ValueError(f"input {name!r} is given by more than one party with different "
                                 f"values; the local runtime passes one value per name")
            merged[name] = value
    if config.workers > 1:
        ensure_ray()
    ctx = in_process(config, dealer_secret)
    ctx.note_inputs(inputs)          # a secret given by the wrong party fails as under Ray
    result = program(ctx, **merged)
    return [select_party(result, p) for p in range(config.ranks)]
