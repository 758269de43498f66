"""The trusted dealer as a Ray actor, and party 0's prefetching proxy.

The :class:`DealerActor` owns the dealer key of every party and its own secret key, and nothing
else; it makes them itself (a harness that replays the dealer's draws hands it the secret by a
method call, never as a creation argument, which Ray keeps in its control store).  It seals
each party its dealer key (and only that one) during setup.  Online, only party 0 needs the
dealer: its :class:`ppml.mpc.dealer.DealerStore` asks a :class:`DealerProxy` for the
corrections of each batch, which the actor computes itself (its keys never travel as task
arguments).  While party 0 consumes batch k of a material, the proxy has batch k+1 computed
ahead.  Batches are keyed by (material, batch index), so prefetching changes when material is
made, never what it is.
"""

from __future__ import annotations

import ray

from ppml.mpc.dealer import Dealer, material
from ppml.runtime.deadlines import LIVENESS
from ppml.runtime.ray_roles import ActorRole
from ppml.runtime.roles import Pending, gather
from ppml.crypto.agreement import KeyAgreement
from ppml.mpc.keys import agreement_key, dealer_party_key, dealer_secret_key, sealed_context


@ray.remote(concurrency_groups={LIVENESS: 1})
class DealerActor:
    """The dealer's keys, and the batches made from them (seeded like ``ppml.mpc.keys``)."""

    def __init__(self, parties: int, seed):
        self._party_keys = {p: dealer_party_key(seed, p) for p in range(parties)}
        self._secret_key = dealer_secret_key(seed)
        self._agreement = KeyAgreement(agreement_key(seed, "dealer"))
        self._handed_out = False
        self._dealer = None

    def take_secret(self, secret_key: bytes) -> None:
        """EVALUATION ONLY: use the harness's secret (whose draws it replays), before the keys
        are handed out."""
        if self._handed_out:
            raise RuntimeError("the dealer's secret is fixed once its keys are handed out")
        self._secret_key = secret_key

    def hand_out_keys(self, publics: list) -> tuple:
        """(The dealer's X25519 public key, {p: party p's dealer key sealed to ``publics[p]``}):
        each party can open its own key only.

        Once: party 0 later holds this actor's handle, and must not get the keys sealed again
        to public keys of its choosing.
        """
        if self._handed_out:
            raise RuntimeError("the dealer keys have already been handed out")
        self._handed_out = True
        self._dealer = Dealer(self._party_keys, self._secret_key)
        return self._agreement.public, {
            p: self._agreement.seal(public, self._party_keys[p],
                                    sealed_context("dealer", "dealer", p))
            for p, public in enumerate(publics)}

    def corrections(self, kind: str, spec: tuple, batch: int, count: int) -> dict:
        """Party 0's corrections of one batch, made here from the dealer's keys.  The material
        is rebuilt from (kind, spec) by the dealer's own code: party 0 sends data, never code
        that would run next to the dealer's keys."""
        if self._dealer is None:
            raise RuntimeError("the dealer deals only after handing out its keys")
        return self._dealer.corrections(material(kind, spec), batch, count)


class DealerProxy:
    """Party 0's source of corrections for its DealerStore: ready results, next batch ahead."""

    def __init__(self, dealer, timeout_s: float):
        self._dealer = dealer
        self._role = ActorRole.attach(dealer, "the dealer", timeout_s)
        """Waits for a batch count the dealer's silence, not its work (`ray_roles.Liveness`)."""
        self._ahead = {}  # material key -> (batch, count, reference to the dealer's answer)

    def corrections(self, material, batch: int, count: int) -> dict:
        kind, spec = material.kind, material.spec
        ahead = self._ahead.pop(material.key, None)
        answer = ahead[2] if ahead is not None and ahead[:2] == (batch, count) else \
            self._dealer.corrections.remote(kind, spec, batch, count)
        self._ahead[material.key] = (batch + 1, count,
                                     self._dealer.corrections.remote(kind, spec, batch + 1, count))
        return gather([Pending(self._role, f"batch {batch} of {material.key}", ref=answer)])[0]
