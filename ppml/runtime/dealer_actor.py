"""The trusted dealer as a Ray actor, its batches as Ray tasks, and party 0's prefetching proxy.

The :class:`DealerActor` owns the dealer key of every party and its own secret key, and nothing
else.  It seals each party its dealer key (and only that one) during setup.  Online, only party
0 needs the dealer: its :class:`ppml.mpc.dealer.DealerStore` asks a :class:`DealerProxy` for the
corrections of each batch; the proxy asks the actor, which submits one Ray task per batch
(:class:`ppml.mpc.dealer.Dealer.corrections` on the dealer's keys).  The task's result goes
straight to party 0: the actor returns the task's ObjectRef, not the arrays.  While party 0
consumes batch k of a material, the proxy has batch k+1 computed ahead.  Batches are keyed by
(material, batch index), so prefetching changes when material is made, never what it is.
"""

from __future__ import annotations

import ray

from ppml.mpc.dealer import Dealer, material
from ppml.crypto.agreement import KeyAgreement
from ppml.mpc.keys import agreement_key, dealer_party_key, dealer_secret_key, sealed_context


@ray.remote
def corrections_task(party_keys: dict, secret_key: bytes, kind: str, spec: tuple, batch: int,
                     count: int):
    """Party 0's corrections of one batch: a Ray task, run where the dealer's tasks are placed.

    The material is rebuilt from (kind, spec) by the dealer's own code: party 0 sends data, never
    code that would run next to the dealer's keys.
    """
    return Dealer(party_keys, secret_key).corrections(material(kind, spec), batch, count)


@ray.remote
class DealerActor:
    """The dealer's keys, and the batches made from them (seeded like ``ppml.mpc.keys``)."""

    def __init__(self, parties: int, seed, task_resources: dict | None = None,
                 secret_key: bytes | None = None):
        self._party_keys = {p: dealer_party_key(seed, p) for p in range(parties)}
        self._secret_key = dealer_secret_key(seed) if secret_key is None else secret_key
        self._agreement = KeyAgreement(agreement_key(seed, "dealer"))
        self._handed_out = False
        self._task = corrections_task.options(resources=task_resources) if task_resources \
            else corrections_task

    def hand_out_keys(self, publics: list) -> tuple:
        """(The dealer's X25519 public key, {p: party p's dealer key sealed to ``publics[p]``}):
        each party can open its own key only.

        Once: party 0 later holds this actor's handle, and must not get the keys sealed again
        to public keys of its choosing.
        """
        if self._handed_out:
            raise RuntimeError("the dealer keys have already been handed out")
        self._handed_out = True
        return self._agreement.public, {
            p: self._agreement.seal(public, self._party_keys[p],
                                    sealed_context("dealer", "dealer", p))
            for p, public in enumerate(publics)}

    def corrections(self, kind: str, spec: tuple, batch: int, count: int) -> list:
        """Start making one batch; returns ``[ObjectRef]`` of party 0's corrections.

        The ref is wrapped in a list so that Ray hands it over unresolved: party 0 fetches the
        arrays from the task, and the actor stays free to start further batches.
        """
        return [self._task.remote(self._party_keys, self._secret_key, kind, spec, batch, count)]


class DealerProxy:
    """Party 0's source of corrections for its DealerStore: ready results, next batch ahead."""

    def __init__(self, dealer, timeout_s: float):
        self._dealer = dealer
        self._timeout_s = timeout_s
        self._ahead = {}  # material key -> (batch, count, reference to the dealer's answer)

    def corrections(self, material, batch: int, count: int) -> dict:
        kind, spec = material.kind, material.spec
        ahead = self._ahead.pop(material.key, None)
        answer = ahead[2] if ahead is not None and ahead[:2] == (batch, count) else \
            self._dealer.corrections.remote(kind, spec, batch, count)
        self._ahead[material.key] = (batch + 1, count,
                                     self._dealer.corrections.remote(kind, spec, batch + 1, count))
        try:
            (task,) = ray.get(answer, timeout=self._timeout_s)
            return ray.get(task, timeout=self._timeout_s)
        except ray.exceptions.GetTimeoutError:
            raise TimeoutError(f"the dealer did not make batch {batch} of {material.key} within "
                               f"{self._timeout_s:g} s (timeout_s)") from None
