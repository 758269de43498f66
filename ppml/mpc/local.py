"""Every party in one process: the context the local runtime and single-process tools use.

All P parties (and any clients) share one `LocalComm`; each party's keys are still its own
(`keys.local_keys`), and one numpy call advances every party at once along the leading
held-party axis (docs/architecture.md).
"""

from __future__ import annotations

from ppml.crypto.rng import KEY_BYTES
from ppml.mpc.comm import LocalComm
from ppml.mpc.context import Context, EngineConfig
from ppml.mpc.dealer import Dealer, DealerStore
from ppml.mpc.keys import local_keys


def check_key(key) -> bytes:
    if not isinstance(key, bytes) or len(key) != KEY_BYTES:
        raise ValueError(f"dealer_secret must be {KEY_BYTES} bytes, got {key!r:.40}")
    return key


def local_context(parties: int, precision_bits: int = 20, seed=None, truncation: str = "bounded",
                  record_views: bool = False, clients: int = 0,
                  dealer_secret: bytes | None = None, workers: int = 1,
                  split_min_elements: int | None = None) -> Context:
    """A context holding every party and client in this process (the local runtime); the
    settings are those of `EngineConfig`."""
    config = EngineConfig(parties, precision_bits, truncation, seed, clients, workers,
                          record_views, split_min_elements)
    return in_process(config, dealer_secret)


def in_process(config: EngineConfig, dealer_secret: bytes | None = None) -> Context:
    """The context of ``config``'s parties and clients, every one in this process.

    ``dealer_secret`` (32 bytes) keys the dealer's own randomness instead of a fresh or
    seed-derived key (`ppml.runtime.spmd.run` says who may hold it)."""
    comm = LocalComm(config.parties, record_views=config.record_views, clients=config.clients)
    keys, derived_secret = local_keys(config.parties, config.seed, config.clients)
    dealer_secret = derived_secret if dealer_secret is None else check_key(dealer_secret)
    store = DealerStore(comm.held, keys.dealer, Dealer(keys.dealer, dealer_secret))
    return Context(comm, keys, store, config)
