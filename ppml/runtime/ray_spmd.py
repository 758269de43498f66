"""``runtime="ray"``: every party a Ray actor, the dealer a Ray actor with Ray tasks.

:func:`run_ray` is what ``ppml.runtime.spmd.run(..., runtime="ray")`` calls.  It starts a
private local Ray instance when Ray is not running (and leaves it running for the next run),
creates the dealer actor and one :class:`~ppml.runtime.party.PartyActor` per party, lets them
set up their keys and links among themselves, runs the program in every party at once, and
kills the actors.
The driver only ever sees public values: addresses, certificates, X25519 public keys, sealed
dealer keys, the program, each party's own inputs going in, and each party's return value
coming out.  The parties' links are mutually authenticated TLS 1.3, each party pinning its
peers' certificates, and each pair agrees its key over its link (`ppml.runtime.links`).  This
runtime simulates the parties in ONE trust domain: a Ray cluster lets any holder of an actor
handle run code in that actor, and keeps actor-creation arguments in the head node's control
store (docs/ray-runtime.md, "What one cluster does not protect"); ``runtime=federated`` runs one
trust domain per party.
"""

from __future__ import annotations

import time

import ray

from ppml.mpc.context import EngineConfig
from ppml.runtime import placement as placement_
from ppml.runtime import progress
from ppml.runtime.cluster import ensure_ray
from ppml.runtime.dealer_actor import DealerActor
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S, STARTUP_FACTOR, peer_lost, startup_s
from ppml.runtime.party import PartyActor
from ppml.runtime.ray_roles import Liveness, watched

OPTIONS = ("placement",)
SETUP_STAGES = 4
"""The set-up bar's stages: actors started, identities made, dealer keys sealed, links up."""


class PartyError(RuntimeError):
    """A party's (or the dealer's) program or setup failed; ``party`` is its index or None.
    ``lost``: it died, or failed because a peer did (`deadlines.peer_lost`)."""

    def __init__(self, party: int | None, message: str, lost: bool = False):
        super().__init__(message)
        self.party, self.lost = party, lost

    def __reduce__(self):            # crosses Ray intact when raised inside an actor
        return type(self), (self.party, str(self), self.lost)


def run_ray(program, config: EngineConfig, inputs: dict, dealer_secret: bytes | None = None,
            timeout_s: float = DEFAULT_TIMEOUT_S, **options) -> list:
    """Run ``program(ctx, **inputs[i])`` in rank i's actor for every i; return the P + C results.

    Ranks 0..P-1 are compute parties, P..P+C-1 clients (actors that hold no shares).

    ``timeout_s``: how long a party waits for a peer's message, and
    each setup step for the actors; ``placement``: see :mod:`ppml.runtime.placement`.
    Arguments were checked by :func:`ppml.runtime.spmd.run`.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"unknown options for the ray runtime: {unknown} (known: {OPTIONS})")
    ensure_ray()
    progress.relay()
    parties, seed = config.parties, config.seed
    resources = placement_.resources(options.get("placement"), config.ranks)

    dealer = DealerActor.options(resources=resources.get("dealer", {})).remote(parties, seed)
    members = [PartyActor.options(resources=resources.get(p, {})).remote(p, config, timeout_s)
               for p in range(config.ranks)]
    ranks = list(range(config.ranks))
    try:
        with progress.bar("set-up (actors, keys, links)", SETUP_STAGES, unit="stage") as setup:
            _gather([actor.__ray_ready__.remote() for actor in members + [dealer]],
                    ranks + [None], startup_s(timeout_s), "start",
                    f"{STARTUP_FACTOR} x timeout_s")
            setup.update()
            if dealer_secret is not None:     # by method call, not as a creation argument
                _gather([dealer.take_secret.remote(dealer_secret)], [None], timeout_s)
            addresses = _gather([m.address.remote() for m in members], ranks, timeout_s)
            certificates = _gather([m.certificate.remote() for m in members], ranks, timeout_s)
            publics = _gather([m.public.remote() for m in members[:parties]], ranks[:parties],
                              timeout_s)
            setup.update()
            (dealer_public, dealer_boxes), = _gather([dealer.hand_out_keys.remote(publics)],
                                                     [None], timeout_s)
            setup.update()
            _gather([m.connect.remote(addresses, certificates, dealer_public,
                                      dealer_boxes.get(p), dealer if p == 0 else None)
                     for p, m in enumerate(members)], ranks, timeout_s)
            setup.update()
        return _gather([m.run.remote(program, inputs.get(p, {})) for p, m in enumerate(members)],
                       ranks, what="run the program")
    finally:
        progress.flush(progress.END_WAIT_S)
        for actor in members + [dealer]:
            ray.kill(actor)


def _gather(refs: list, owners: list, timeout_s: float | None = None,
            what: str = "answer", limit: str = "timeout_s") -> list:
    """The results of ``refs`` in order; the first failure raises PartyError naming its actor,
    and ``timeout_s`` (the run's ``limit``) passing without them a TimeoutError naming who did
    not ``what``.

    ``owners[k]`` is the party index whose actor computes ``refs[k]``, or None for the dealer.
    Without ``timeout_s`` (the program's run, as long as it takes: the parties watch each
    other over their links), the roles this process spawned outside the engine (`watched`:
    Masked LARK's ad network, idle while the engine runs) are checked meanwhile.
    """
    names = [_name(owner) for owner in owners]
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    position = {ref: k for k, ref in enumerate(refs)}
    pending, results = list(refs), [None] * len(refs)
    idle = None if deadline is not None else \
        Liveness(watched(), f"the engine's parties to {what}")
    while pending:
        left = idle.next_check() if deadline is None else \
            max(deadline - time.monotonic(), 0.0)
        ready, pending = ray.wait(pending, num_returns=1, timeout=left)
        if deadline is None:            # the run's roles outside the engine, idle meanwhile
            idle.check({})
            if not ready:
                continue
        if not ready:
            late = sorted({names[position[ref]] for ref in pending})
            raise TimeoutError(f"{', '.join(late)} did not {what} within {timeout_s:g} s "
                               f"({limit}; is the placement satisfiable?)")
        k = position[ready[0]]
        try:
            results[k] = ray.get(ready[0])
        except ray.exceptions.RayTaskError as err:
            cause = err.cause
            raise PartyError(owners[k], f"{names[k]} failed: {type(cause).__name__}: "
                                        f"{cause}", peer_lost(cause)) from err
        except ray.exceptions.RayActorError as err:
            raise PartyError(owners[k], f"{names[k]} died: {err}", lost=True) from err
    return results


def _name(owner: int | None) -> str:
    return "the dealer" if owner is None else f"party {owner}"
