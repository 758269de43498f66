"""The helpers' differentially private reduce (slides "Requirements for Helpers" and "Example:
Counting conversions"), one SPMD program for the helpers H_1..H_h on ppml's engine.

1. Each helper makes its own HPKE key; the helpers exchange the public keys.  The leader
   (helper 0, as a DAP leader) asks the browsers for their reports sealed to those keys and the
   ad network for its release key, and delivers to each helper the reports' public parts and
   its own sealed shares, which it alone can open.
2. Each helper opens its shares; a report that fails to open at any helper is dropped by all.
3. **Range check** (beyond the slides): on the engine, every coordinate x of every report gives
   the sign bits [x < 0] and [B - x < 0]; their sum is opened: zero exactly when x lies in
   [0, B] (exact for every ring element).  A report out of range is dropped, so one browser
   moves a sum by at most B per coordinate.  Honest reports open as 0.
4. Of a token's reports under one key the first counts; a key with fewer than k distinct
   tokens is dropped (each helper alone: they all see the same public parts).
5. Each helper sums its shares per kept key, adds its own noise (discrete Gaussian or Laplace
   at scale sigma_hat sqrt(k), from its own CSPRNG: `noise.py`) and seals the result to the
   ad network, through the leader.  Only the ad network adds the releases up.

What each role learns is in docs/masked-lark.md.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ppml.crypto import hpke
from ppml.mpc.protocols.compare import is_negative
from ppml.mpc.ring import ARITHMETIC
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.helper_keys import HelperKeys
from ppml.protocols.masked_lark.noise import helper_noise
from ppml.protocols.masked_lark.reports import ID_BYTES, TOKEN_BYTES
from ppml.protocols.masked_lark.roles import KEY_BYTES, pack_release, release_info
from ppml.runtime import progress

LEADER = 0
PHASES = ("upload", "open", "check", "aggregate", "noise", "release")
"""The reduce's phases, each timed (``seconds``) and a step of the leader's bar."""
PUBLIC_BYTES = ID_BYTES + TOKEN_BYTES + KEY_BYTES
"""A report's public parts as one row: id, token, opaque key."""


def aggregation_program(ctx, options: MaskedLarkOptions, scale, seed: int | None = None,
                        browsers=None, adnet=None, workers: int = 1) -> dict:
    """The helpers' reduce for every helper this process holds (see the module docstring);
    ``browsers`` and ``adnet`` are the leader's (None at the other helpers), ``scale`` the
    noise's (a Fraction), ``workers`` each helper's (its HPKE opens spread over them,
    `helper_keys.HelperKeys`).  Returns the counts, each kept key's users (public to the helpers),
    the released rows (at the leader), the seconds of each phase and, EVALUATION ONLY, each held helper's noise (``noise``, by
    helper) and, when the engine records views, each held helper's opened ``shares`` and
    ``view`` (what it received over the engine)."""
    mine = [j for j in range(ctx.parties) if ctx.holds(j)]
    views = ctx.comm.views is not None
    with progress.bar("masked_lark reduce", len(PHASES), unit="phase",
                      enabled=ctx.holds(LEADER)) as bar:
        phase, own = Phases(bar), {}
        try:
            with phase("upload"):
                own.update({j: HelperKeys(j, workers) for j in mine})
                public_keys = exchange_public_keys(ctx, own)
                public, sealed, release_key = _distribute(ctx, public_keys, browsers, adnet,
                                                          options.d)
            with phase("open"):
                shares, opened = _open_shares(own, sealed, public, options.d)
        finally:
            for keys in own.values():
                keys.close()

        with phase("check"):
            everywhere = ctx.comm.exchange([np.stack([opened[j] for j in mine])
                                            .astype(np.uint64)], tag="opened")[0].all(axis=0)
            in_range = _range_check(ctx, np.stack([shares[j] for j in mine]), options.bound)
            valid = everywhere & in_range

        with phase("aggregate"):
            group, kept, users, counted = _groups(public, valid, options.k)
            sums = {j: _sums(shares[j], group, len(kept)) for j in mine}

        with phase("noise"):
            noise = {j: helper_noise(options.noise, scale, (len(kept), options.d), seed, j)
                     for j in mine}

        with phase("release"):
            kept_keys = public[kept, ID_BYTES + TOKEN_BYTES:]
            boxes = {j: np.frombuffer(hpke.seal(hpke.public_key(release_key), pack_release(
                kept_keys, sums[j] + noise[j].astype(np.uint64)), release_info(j)),
                dtype=np.uint8) for j in mine}
            gathered = to_leader(ctx, boxes, "release")           # the leader hands them on
            released = None if gathered is None else adnet.call("release", gathered, options.d)
        return {"reports": int(len(public)), "opened": int(everywhere.sum()),
                "in_range": int(valid.sum()), "counted": counted,
                "users": users, "released": released,
                "seconds": phase.seconds, "noise": ctx.per_party([noise[j].tolist() for j in mine]),
                "shares": ctx.per_party([shares[j] for j in mine]) if views else None,
                "view": ctx.view() if views else None}


class Phases:
    """The reduce's phases (`PHASES`), one after the other: ``with phases(name):`` times the
    phase into ``seconds`` (``<name>_s``) and, when it ends without an error, advances
    ``bar`` one step."""

    def __init__(self, bar: progress.Bar):
        self.bar, self.seconds = bar, {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.seconds[f"{name}_s"] = time.perf_counter() - start
        self.bar.update()


def exchange_public_keys(ctx, own: dict) -> list:
    """Every helper's HPKE public keys (per helper, its keys' raw bytes), from each held
    helper's ``own`` `HelperKeys`: one exchange."""
    keys = ctx.comm.exchange([np.stack([np.frombuffer(b"".join(own[j].public), np.uint64)
                                        .reshape(len(own[j].public), -1)
                                        for j in sorted(own)])], tag="hpke keys")[0]
    return [[row.tobytes() for row in keys[j]] for j in range(ctx.parties)]


def from_leader(ctx, make, tag: str) -> dict:
    """An array from the leader to each helper: ``make(j)`` at the leader for helper j, one
    delivery to each other helper (arrays travel as arrays; a broadcast carries literals
    only).  Returns {j: array} for the helpers this process holds."""
    out = {}
    for j in range(ctx.parties):
        payload = make(j) if ctx.holds(LEADER) else None
        got = payload if j == LEADER else ctx.comm.deliver(payload, LEADER, j, tag)
        if ctx.holds(j):
            out[j] = np.asarray(got)
    return out


def parcels(ctx, reports, width: int) -> tuple:
    """Each held helper's reports from the leader's ``reports`` (None elsewhere): the public
    parts, the same for every helper, and its own sealed shares (``width`` bytes a report)."""
    got = from_leader(ctx, lambda j: np.concatenate([reports.public, reports.sealed[j]], axis=1),
                      "reports")
    public = next(iter(got.values()))[:, :-width]
    return public, {j: parcel[:, -width:] for j, parcel in got.items()}


def _distribute(ctx, public_keys: list, browsers, adnet, d: int) -> tuple:
    """The leader gets the reports and the ad network's release key; every helper gets the
    public parts and its own sealed shares (one delivery each) and the release key (one
    broadcast)."""
    reports, release_key = None, None
    if ctx.holds(LEADER):
        if browsers is None or adnet is None:
            raise ValueError("the leader (helper 0) needs the browsers and the ad network")
        reports = browsers.call("reports", public_keys)
        release_key = adnet.call("public_key")
    public, sealed = parcels(ctx, reports, 8 * d + hpke.OVERHEAD_BYTES)
    if public.ndim != 2 or public.shape[1] != PUBLIC_BYTES:
        raise ValueError(f"the reports' public parts must be rows of {PUBLIC_BYTES} bytes, got "
                         f"shape {public.shape}")
    release_key = ctx.comm.broadcast(release_key, LEADER, "release key")
    return public, sealed, bytes(release_key)


def to_leader(ctx, boxes: dict, tag: str) -> list | None:
    """Every helper's array (``boxes``, by held helper) at the leader, one delivery from each
    other helper: the list by helper there, None at the other helpers."""
    gathered = {LEADER: boxes.get(LEADER)}
    for j in range(ctx.parties):
        if j != LEADER:
            gathered[j] = ctx.comm.deliver(boxes.get(j), j, LEADER, tag)
    if not ctx.holds(LEADER):
        return None
    return [np.asarray(gathered[j], dtype=np.uint8) for j in range(ctx.parties)]


def _open_shares(own: dict, sealed: dict, public: np.ndarray, d: int) -> tuple:
    """Each held helper's shares (n, d) uint64 and which of its reports opened (zeros where
    one did not: such a report is dropped by every helper)."""
    n = len(public)
    shares, opened = {}, {}
    for j, keys in own.items():
        if sealed[j].shape != (n, 8 * d + hpke.OVERHEAD_BYTES):
            raise ValueError(f"helper {j}'s sealed shares must be ({n}, "
                             f"{8 * d + hpke.OVERHEAD_BYTES}) bytes, got {sealed[j].shape}")
        plain, opened[j] = keys.open(sealed[j], public)
        shares[j] = plain.view(np.uint64).reshape(n, d)
    return shares, opened


RANGE_CHUNK = 1 << 17
"""Reports per range check on the engine: at once, its comparisons' intermediate arrays for a
million reports of d = 8 took 7.7 GB (and 51 s, with the prefix adder); in chunks 1.4 GB."""


def _range_check(ctx, data: np.ndarray, bound: int) -> np.ndarray:
    """Which reports lie in [0, ``bound``]^d: (n,) bool, the same for every helper; the
    helpers open, per report, only the number of bounds its coordinates break.  In chunks of
    `RANGE_CHUNK` reports."""
    out = []
    with ctx.comm.operation("range check"):
        for first in range(0, data.shape[1], RANGE_CHUNK):
            chunk = data[:, first:first + RANGE_CHUNK]
            below = ctx.add_public(np.uint64(0) - chunk, np.uint64(bound))          # B - x
            signs = is_negative(ctx, np.concatenate([chunk, below], axis=-1))
            out.append(ctx.open([signs.sum(axis=-1, dtype=np.uint64)], ARITHMETIC,
                                tag="range check")[0] == 0)
    return np.concatenate(out) if out else np.zeros(0, dtype=bool)


def _groups(public: np.ndarray, valid: np.ndarray, k: int) -> tuple:
    """(each report's kept key as an index into the kept keys, -1 where the report does not
    count or its key is dropped; the row of each kept key's first report; each kept key's
    users).  A valid report counts if it is the first of its token under its key; a key is
    kept if at least ``k`` tokens count under it.  Keys in order of first appearance."""
    at, counted, first, members = {}, set(), [], []
    group = np.full(len(public), -1, dtype=np.int64)
    for i in np.flatnonzero(valid).tolist():
        key = public[i, ID_BYTES + TOKEN_BYTES:].tobytes()
        pair = (public[i, ID_BYTES:ID_BYTES + TOKEN_BYTES].tobytes(), key)
        if pair in counted:
            continue
        counted.add(pair)
        g = at.setdefault(key, len(first))
        if g == len(first):
            first.append(i)
            members.append(0)
        members[g] += 1
        group[i] = g
    kept = [g for g, users in enumerate(members) if users >= k]
    renumber = np.full(len(members) + 1, -1, dtype=np.int64)     # the last entry: -1 stays -1
    renumber[kept] = np.arange(len(kept))
    return (renumber[group], np.asarray(first, dtype=np.int64)[kept],
            [members[g] for g in kept], int((group >= 0).sum()))


def _sums(shares: np.ndarray, group: np.ndarray, keys: int) -> np.ndarray:
    """A helper's share of each kept key's sum: (keys, d) uint64, modulo 2^64."""
    out = np.zeros((keys, shares.shape[1]), dtype=np.uint64)
    mine = group >= 0
    np.add.at(out, group[mine], shares[mine])
    return out
