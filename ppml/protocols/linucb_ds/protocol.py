"""LinUCB-DS (Ciucanu et al., section 3, Figs. 3-4): P and Comp, and a driver for a whole run.

One protocol class per cloud node, parametrised by the plaintext policy
(`ppml.protocols.linucb_ds.reference`: LinUCB's constants and penalty, or SpectralUCB's), so
SpectralUCB-DS (section 6) is the same code (`spectral.SpectralUCB`).  The messages are those
of Fig. 3:

    1     DC -> P  N;   DO -> P  the arms, theta* = E_Comp(theta), the constants (and noise eta)
    3.ii  P -> Comp   sigma_t(listB*), packed                      (N - 1 times)
    4.i   Comp -> P   the position of the first maximum            (N - 1 times)
    5     P -> Comp   E_Comp(rand) s* = E_Comp(rand + s)
    6     Comp -> P   E_DC(rand + s)
    7     P -> DC     E_DC(rand + s) E_DC(-rand) = E_DC(s)

Invariants: one public scale 2^-s for every encoding (`FixedPoint`), so a run equals the
fixed-point LinUCB exactly (`reference.run_fixed_point`); sigma_t, the first arm and the
key-switch mask rand come from the CSPRNG, rand uniform in Z_n (Theorem 8 holds exactly); what
leaves P is re-randomised with a fresh obfuscator from an `ObfuscatorPool`; step (3).ii sends
the permuted scores packed, computed from the fixed theta* (`scores.PackedScores`).

Checkpoints: P runs the rounds, so P is the driver (`RoleCheckpoints`): every
``checkpoint_every`` steps DO, DC and Comp each save their own state in their own stores and P
its own (`Principal.checkpoint_state`); a resumed P restores every party, asks for step 1 again
and goes on with the next round.  docs/linucb-ds.md, "Checkpoints and resume".

Design, departures from the paper and the authors' code, and measurements: docs/linucb-ds.md,
"The protocol as built" and "Speed" (with "Slots at k = 2", "Cheaper fresh randomness",
"Step 3.ii from fixed bases" and "Two workers").
"""

from __future__ import annotations

import math
import secrets
import time

import gmpy2
import numpy as np

from ppml.privacy.views import ViewRecorder
from ppml.protocols.linucb_ds.config import LinUCBDSConfig
from ppml.protocols.linucb_ds.roles import DataClient, DataOwner, Link, Participant, keypair
from ppml.protocols.linucb_ds.scores import PackedScores
from ppml.protocols.linucb_ds.reference import Coins, FixedPoint, LinearUCB, first_maximum
from ppml.crypto.paillier import Decryptor, ObfuscatorPool, SlotLayout, ops
from ppml.crypto.paillier.keys import keypair_from_factors
from ppml.parallel import Resident, check_workers, over_rows, split, workers_for
from ppml.crypto.rng import fresh_key
from ppml.runtime import progress, roles
from ppml.runtime.checkpoints import CheckpointPlan, RoleCheckpoints

COEFFICIENTS_SPLIT_MIN_WORK = 400_000
"""K d^2 (half the Python-integer multiplications of step 3.i's C = X A^-1 G and w = X A^-1 e)
from which P spreads step 3.i over its workers by arms, with ``workers > 1``.

Measured by ``python -m jobs.bench_per_arm`` (2026-11-28 10:18, 2 cores, load 0.4 before;
docs/linucb-ds.md, "Per-arm coefficients over the workers"): over 2 workers 3.i ran 0.54x the
in-process speed at K d^2 = 40,000 (K = 100, d = 20) and 1.3x at 400,000 (K = 1000, d = 20),
1.6-1.8x at 10^6 to 10^7.  A run can move it with ``linucb_ds.split_min_work``."""

PARTIES = ("comp", "dc", "do", "p")
"""The parties by name: their checkpoint stores, and their processes in a federated run (P, which
drives the steps, last)."""


def _norms(fixed: FixedPoint, policy: LinearUCB, horizon: int) -> tuple:
    """(max ||x_i||_2 of the rounded arms, and a bound on ||Â G||_2 over the run).

    Â is A^-1 rounded to k = 1 and G the sum of the rounded arms' x x^T, so ||Â G|| is at most
    ||A^-1 G_float|| = ||I - A^-1 penalty|| <= 1 + lambda_max / lambda_min (A >= penalty), plus
    ||A^-1|| ||G - G_float|| and ||Â - A^-1|| ||G||, from roundings of 2^-(s+1) and float64's
    inverse (relative error cond(A) 1e-16, with cond(A) <= N x^2 / lambda_min, 100x over).
    `Principal` also checks every round's scores against the bound it derives."""
    s, d, n = fixed.scale_bits, policy.d, horizon
    x = float(np.max(np.linalg.norm(policy.arms, axis=1))) + math.sqrt(d) * 2.0**-s  # rounded too
    low = policy.min_penalty_eigenvalue()
    arm_error = n * (2 * x + 1) * math.sqrt(d) * 2.0**-s           # ||G - G_float||_2
    a_error = d * 2.0**-s + n * x * x * 1e-14 / low**2               # rounding, float64 inverse
    return x, 1 + policy.max_penalty_eigenvalue() / low + arm_error / low + a_error * n * x * x


def coefficient_bound(fixed: FixedPoint, policy: LinearUCB, horizon: int) -> int:
    """A public bound on ||C_i||_2 >= |C_ij| over the run, C_i = round(x_i^T Â G 2^-3s) the
    exponents of theta* in B_i* (`score_terms`): 2^s ||x_i|| ||Â G|| (`_norms`) plus the
    roundings of C_i's d entries."""
    x, spread = _norms(fixed, policy, horizon)
    return math.ceil(2.0**fixed.scale_bits * x * spread * (1 + 1e-9) + math.sqrt(policy.d)) + 1


def theta_bound(fixed: FixedPoint, theta_norm_bound: float, d: int) -> int:
    """A bound on ||theta||_2 at k = 1 from the public S >= ||theta||: 2^s S plus the roundings
    of theta's d entries."""
    return math.ceil(2.0**fixed.scale_bits * theta_norm_bound + math.sqrt(d))


def score_bound(fixed: FixedPoint, policy: LinearUCB, theta_norm_bound: float, noise_max: float,
                horizon: int) -> int:
    """A public bound on |B_i| = |C_i . theta + w_i + omega_i| (k = 2) over the whole run, from
    the public S >= ||theta||_2, the noise bound, the arms, N and the penalty's eigenvalues:
    |C_i . theta| <= ||C_i|| ||theta||, and |w_i| = |x_i^T Â e| <= ||x_i|| ||Â|| N eta x."""
    s, d = fixed.scale_bits, policy.d
    x, _ = _norms(fixed, policy, horizon)
    theta = theta_bound(fixed, theta_norm_bound, d)                         # ||theta||, k = 1
    a_norm = 1 / policy.min_penalty_eigenvalue() + d * 2.0**-s            # ||Â||_2
    eta = noise_max + 2.0**-(2 * s)                                       # |eta| after rounding
    w = 2.0**(2 * s) * x * a_norm * horizon * eta * x + 1
    exploration = policy.width(max(horizon - 1, 1)) * x / math.sqrt(
        policy.min_penalty_eigenvalue())
    real = coefficient_bound(fixed, policy, horizon) * theta + w + exploration * 2.0**(2 * s)
    return math.ceil(real * (1 + 1e-9)) + 4


def _integers(values) -> np.ndarray:
    """Nested lists of integers (as a checkpoint gives them back) as an array of Python ints."""
    return np.frompyfunc(int, 1, 1)(np.array(values, dtype=object))


def mask_sum(public_key, sum_ciphertext, obfuscator) -> tuple:
    """Step 5: (E(rand) s* = E(rand + s), rand) with rand uniform in Z_n from ``secrets``, so the
    value Comp decrypts, rand + s mod n, is uniform in Z_n whatever s is (Theorem 8)."""
    rand = secrets.randbelow(int(public_key.n))
    masked = sum_ciphertext * public_key.encrypt_raw([rand], [obfuscator])[0] % public_key.nsquare
    return masked, rand


def score_terms(fixed: FixedPoint, a_inverse, x, G, e, workers: int = 1) -> tuple:
    """Step 3.i's (C, w) (`FixedPoint.score_terms`), the arms (rows of x) split over ``workers``
    of P's own processes on P's node (`ppml.parallel.over_rows`): the same integers."""
    if workers == 1:
        return fixed.score_terms(a_inverse, x, G, e)
    parts = over_rows(fixed.score_terms, [a_inverse, x, G, e], [False, True, False, False],
                      len(x), workers)
    return tuple(np.concatenate(part) for part in zip(*parts))


class Principal(Participant):
    """P (Fig. 4(a)): pulls, keeps A in plain and s*, b* encrypted, computes theta_hat* and the
    B_i*, permutes, and runs its side of the key switch.  It never holds a private key."""

    name = "P"

    def __init__(self, policy: LinearUCB, scale_bits: int, workers: int = 1,
                 obfuscator: str = "full", split_min_work: int | None = None):
        super().__init__()
        self.policy = policy
        self.fixed = FixedPoint(scale_bits)
        self.workers = check_workers(workers)
        self.obfuscator = obfuscator
        self.split_min_work = (COEFFICIENTS_SPLIT_MIN_WORK if split_min_work is None
                               else split_min_work)
        self.arms_pulled: list[int] = []
        d = policy.d
        self.G = np.full((d, d), 0, dtype=object)         # sum x x^T: b* = theta*^G E(e)
        self.e = np.full(d, 0, dtype=object)              # sum eta x

    def connect(self, do, dc, comp, comp_key, dc_key, coin_key: bytes | None = None,
                checkpoints: CheckpointPlan | None = None, give_plans: bool = True) -> None:
        """Links to the other parties and their public keys (public-key infrastructure), and
        P's coins: a fresh os.urandom key drawn here, or ``coin_key`` from an evaluation harness
        that replays them in a reference (a method argument, never an actor-creation argument,
        which Ray keeps in its control store).  With ``checkpoints``, P is the driver of every
        party's checkpoints (`RoleCheckpoints`, ``give_plans`` as there)."""
        self.coins = Coins(fresh_key() if coin_key is None else coin_key)
        self.comp_key, self.dc_key = comp_key, dc_key
        self.do = Link("P", "DO", do, self.transcript)
        self.dc = Link("P", "DC", dc, self.transcript)
        self.comp = Link("P", "Comp", comp, self.transcript)
        self.saving = checkpoints and RoleCheckpoints(
            checkpoints, {"comp": comp, "dc": dc, "do": do}, roles.gather, driver="p",
            give_plans=give_plans)

    def setup(self) -> dict:
        """A resumed run's restore first (every party to the last step all hold, P's own state
        by `restore_state`), then step 1 (N from DC; arms, theta*, constants from DO), the
        public slot layout, and the offline phase: every obfuscator of the rounds to run."""
        self.first, state = self.saving.start() if self.saving else (0, {})
        if self.first:
            self.restore_state(state)
        self.horizon = self.dc.fetch("1", "N", "budget")
        step1 = self.do.fetch("1", "arms, theta*, constants", "outsource", self.comp_key,
                              self.fixed.encoding)
        with self.clock("offline"):
            arms = step1["arms"]
            if arms.shape != self.policy.arms.shape or not np.array_equal(arms,
                                                                          self.policy.arms):
                raise ValueError("DO's arms differ from the policy's arms")
            self.theta = list(step1["theta"].ciphertexts)
            self.noise = step1["noise"]
            self.x = self.fixed.ints(arms)
            bound = score_bound(self.fixed, self.policy, step1["theta_norm_bound"],
                                float(np.max(np.abs(self.noise))), self.horizon)
            self.offset = bound
            self.theta_bound = theta_bound(self.fixed, step1["theta_norm_bound"], self.policy.d)
            self.layout = SlotLayout.for_key(self.comp_key, value_max=2 * bound)
            K = self.policy.K
            self.groups = -(-K // self.layout.slots)
            scores = PackedScores(self.comp_key, self.theta, self.layout.slot_bits, -(-K //
                                  self.groups), coefficient_bound(self.fixed, self.policy,
                                                                  self.horizon))
            self.scores = Resident(scores, self.workers)    # actors build tables during the pool
            needed = (self.horizon - max(self.first, 1)) * self.groups + 1
            streamed = self.workers > 1              # the pool then fills during the steps
            self._pool_bar = progress.bar("linucb_ds offline pool", needed, unit="r^n")
            self.pool = ObfuscatorPool(self.comp_key, needed, on_empty="raise",
                                       workers=self.workers, obfuscator=self.obfuscator,
                                       stream=streamed, made=self._pool_bar.update)
            if not streamed:                         # else open until the last one is taken
                self._pool_bar.close()
            self.dc_pool = ObfuscatorPool(self.dc_key, 1, on_empty="raise")
            self.counts["fresh_obfuscators"] += needed + len(self.dc_pool)
            self._pulls: dict = {}
        return {"slot_bits": self.layout.slot_bits, "slots": self.layout.slots,
                "groups": self.groups}

    # --- pull*, s*, b* (steps 2 and 4.ii) ------------------------------------------------------
    def _pull(self, t: int, arm: int) -> None:
        """r* = pull*(x_m) = EDP(theta*, x_m) E(eta); s* = s* r*; A += x x^T; b* = b* (r*)^x,
        kept as what b* encrypts over the fixed theta*: G += x x^T, e += eta x (`scores`)."""
        pk, nsquare, x = self.comp_key, self.comp_key.nsquare, self.x[arm]
        if arm not in self._pulls:
            self._pulls[arm] = ops.dot(pk, self.theta, x)
        eta = self.fixed.eta(self.noise, t, arm)
        reward = ops.add_plain(pk, [self._pulls[arm]], [eta % pk.n])[0]
        self.counts["encryptions"] += 1                  # E(eta), a plaintext: 1 + eta n
        d = len(x)
        self.counts["multiplications"] += d
        self.counts["additions"] += d + (t > 0)
        self.s = reward if t == 0 else self.s * reward % nsquare
        self.G = self.G + np.outer(x, x)
        self.e = self.e + eta * x
        self.policy.pull(arm)
        self.arms_pulled.append(arm)

    def run(self) -> list[int]:
        """Step 2, then steps 3 and 4 for 1 <= t < N (a resumed run from its checkpoint's
        step on), each step's checkpoints when due; returns the arms pulled."""
        for t in progress.track(range(self.first, self.horizon), "linucb_ds steps",
                                self.horizon, initial=self.first):
            if t == 0:
                with self.clock("2"):
                    self._pull(0, self.coins.first_arm(self.policy.K))
            else:
                message, sigma = self._scores(t)
                position = self.comp.send("3.ii", "sigma(listB*)", "argmax", message,
                                          reply=("4.i", "argmax position"))
                with self.clock("4.ii"):
                    self._pull(t, int(sigma[position]))
            if self.saving:
                step = t + 1
                self.saving.done(step, self.checkpoint_state() if self.saving.plan.due(step)
                                 else None)
        return self.arms_pulled

    def checkpoint_state(self) -> dict:
        """What P holds after a step (Fig. 4(a)): s* (a ciphertext under Comp's key), A in plain,
        b* as the exponents of theta* it stands for (G = sum x x^T and e = sum eta x,
        `scores`), the arms pulled, its coins (key and position: a seeded resume draws the
        uninterrupted run's sigma_t) and the public keys it works under.  Neither theta* nor
        the pool: a resumed P asks DO for step 1 again (theta* encrypts the same theta, so b*
        the same b) and makes fresh obfuscators."""
        return {**super().checkpoint_state(), "comp_key": self.comp_key, "dc_key": self.dc_key,
                "coins": (self.coins.stream.key, self.coins.stream.position), "A": self.policy.A,
                "G": self.G.tolist(), "e": self.e.tolist(), "s": self.s,
                "arms": self.arms_pulled}

    def restore_state(self, state: dict) -> None:
        super().restore_state(state)
        self.comp_key, self.dc_key = state["comp_key"], state["dc_key"]
        self.coins = Coins(*state["coins"])
        self.policy.A = state["A"]
        self.G, self.e = _integers(state["G"]), _integers(state["e"])
        self.s = gmpy2.mpz(state["s"])
        self.arms_pulled = [int(arm) for arm in state["arms"]]

    def replays(self) -> list:
        """The steps run twice after resumes (`RoleCheckpoints.replays`; none without)."""
        return self.saving.replays if self.saving else []

    def audit_coin_key(self) -> bytes:
        """EVALUATION ONLY: the key of P's coins (a resumed P's is its checkpoint's), which a
        harness replays in the references."""
        return self.coins.stream.key

    def _scores(self, t: int) -> tuple[dict, np.ndarray]:
        """Step 3: theta_hat* = A^-1 b* kept as the coefficients of theta* in each B_i*
        (i: C = X A^-1 G and w = X A^-1 e, plaintext integers rounded to k = 2), then
        sigma_t(listB*) packed from theta* (`scores`) and re-randomised (ii)."""
        pk, K, d = self.comp_key, self.policy.K, self.policy.d
        with self.clock("3.i"):
            a_inverse, a_float = self.fixed.a_inverse(self.policy)
            coefficients, w = score_terms(self.fixed, a_inverse, self.x, self.G, self.e,
                                          workers_for(K * d * d, self.workers,
                                                      self.split_min_work))
        with self.clock("3.ii"):
            varying = self.fixed.exploration(self.policy, t, a_float) + w
            self._check_scores(t, coefficients, varying)
            plain = varying + self.offset
            sigma = self.coins.permutation(K)
            groups = split(sigma, self.groups)
            packed = self.scores.map("__call__", [([coefficients[i] for i in group],
                                                   [plain[i] for i in group])
                                                  for group in groups])
            packed = pk.rerandomize_raw(packed, self.pool.take(len(packed)))
            self.counts["multiplications"] += d * len(packed)           # theta*_j^(E_j)
            self.counts["additions"] += (d + 2) * len(packed)   # products, h W, plain, obfuscator
            self.counts["packed_ciphertexts"] += len(packed)
        message = {"ciphertexts": packed, "slot_bits": self.layout.slot_bits,
                   "sizes": [len(group) for group in groups]}
        return message, sigma

    def _check_scores(self, t: int, coefficients, varying) -> None:
        """|B_i| <= ||C_i|| ||theta|| + |w_i + omega_i| within the public bound of the slots,
        from P's own plaintexts: a spill between slots is refused, never sent."""
        for row, rest in zip(coefficients, varying):
            norm = math.isqrt(sum(int(c) * int(c) for c in row)) + 1
            if norm * self.theta_bound + abs(int(rest)) > self.offset:
                raise RuntimeError(f"round {t}: a score could exceed the public bound "
                                   f"{self.offset} of the packed slots; refusing to send it")

    # --- key switching (steps 5-7) --------------------------------------------------------------
    def key_switch(self) -> None:
        """Step 5: E_Comp(rand) s* with rand uniform in Z_n; step 7: E_DC(rand + s) E_DC(-rand)."""
        pk = self.comp_key
        with self.clock("5"):
            masked, rand = mask_sum(pk, self.s, self.pool.take(1)[0])
            self._pool_bar.close()                   # the pool's last obfuscator
            self.counts["encryptions"] += 1
            self.counts["additions"] += 1
        switched = self.comp.send("5", "E_Comp(rand + s)", "switch", masked, self.dc_key,
                                  reply=("6", "E_DC(rand + s)"))
        with self.clock("7"):
            dc = self.dc_key
            minus = dc.encrypt_raw([(-rand) % dc.n], self.dc_pool.take(1))[0]
            result = switched * minus % dc.nsquare
            self.counts["encryptions"] += 1
            self.counts["additions"] += 1
        self.dc.send("7", "E_DC(s)", "receive_sum", result, int(pk.n))

    def close(self) -> None:
        """Stop the actors holding theta*'s tables and the pool's streaming tasks, and close
        the pool's bar, if any."""
        for resource in ("scores", "pool", "_pool_bar"):
            if hasattr(self, resource):
                getattr(self, resource).close()


class Comp(Participant):
    """Comp (Fig. 4(b)): the only holder of its private key; decrypts the permuted packed scores
    and answers the position of the first maximum (step 4.i); re-encrypts rand + s under DC's key
    (step 6).  ``record_views=True`` keeps what it decrypted (`ppml.privacy.views`): the slot
    values of round t at (t, l = 4) (step 4.i), and rand + s at (N, l = 6) (step 6).  Its
    checkpoint holds its key pair (`PrivateKey.factors`: P's s* is under it), the rounds it answered
    and its view."""

    name = "Comp"

    def __init__(self, key_bits: int, insecure_key_bits_ok: bool = False,
                 seed: int | None = None, workers: int = 1, record_views: bool = False):
        super().__init__()
        self.public_key, self._private_key = keypair(key_bits, insecure_key_bits_ok, seed,
                                                     "Comp")
        self.workers = workers
        self._decryptor = Decryptor(self._private_key, workers)
        self.view = ViewRecorder(record_views)
        self.rounds = 0

    def key(self):
        return self.public_key

    def argmax(self, message: dict) -> int:
        """Step 4.i: one decryption per packed ciphertext; the first maximum of the slots."""
        with self.clock("4.i"):
            bits = message["slot_bits"]
            mask = (1 << bits) - 1
            residues = self._decryptor.decrypt_raw(message["ciphertexts"])
            values = [m >> (j * bits) & mask for m, size in zip(residues, message["sizes"])
                      for j in range(size)]
            self.counts["decryptions"] += len(residues)
            self.counts["decrypted_values"] += len(values)
            self.rounds += 1
            self.view.record(self.rounds, 4, values)
            return first_maximum(values)

    def switch(self, masked, dc_key) -> gmpy2.mpz:
        """Step 6: v = rand + s mod n (uniform in Z_n), returned as E_DC(v)."""
        with self.clock("6"):
            value = self._private_key.decrypt_raw([masked])[0]
            out = dc_key.encrypt_raw([value], ObfuscatorPool(dc_key, 1).take(1))[0]
            self.counts["decryptions"] += 1
            self.counts["encryptions"] += 1
            self.counts["fresh_obfuscators"] += 1
            self.view.record(self.rounds + 1, 6, [int(value)])
            return out

    def checkpoint_state(self) -> dict:
        return {**super().checkpoint_state(), "key": self._private_key.factors(),
                "rounds": self.rounds, "view": self.view.rows}

    def restore_state(self, state: dict) -> None:
        super().restore_state(state)
        self._decryptor.close()
        self.public_key, self._private_key = keypair_from_factors(state["key"])
        self._decryptor = Decryptor(self._private_key, self.workers)
        self.rounds = state["rounds"]
        self.view = ViewRecorder(False) if state["view"] is None else \
            ViewRecorder.of(state["view"])

    def recorded_view(self):
        """What Comp decrypted, if it recorded (`ppml.privacy.views`)."""
        return self.view.table()

    def close(self) -> None:
        self._decryptor.close()


def public_keys(start) -> tuple:
    """``start()``'s roles, Comp and DC first, then Comp's public key and DC's, all under the
    "linucb_ds key generation" bar (one unit a key): ``start`` makes the roles (Comp and DC
    make their key pairs as they start) or reaches them (a federated P's links, which Comp and
    DC serve once their pairs exist), and each key is waited for."""
    with progress.bar("linucb_ds key generation", 2, unit="key") as keys:
        made = start()
        comp_key = made[0].call("key")
        keys.update()
        dc_key = made[1].call("key")
        keys.update()
    return (*made, comp_key, dc_key)


def run_protocol(policy: LinearUCB, theta, noise, config: LinUCBDSConfig, *,
                 theta_norm_bound: float, coin_key: bytes | None = None) -> dict:
    """A whole LinUCB-DS run with the four parties in ``config.runtime``; returns the arms P
    pulled, DC's sum (integer at k = 2 and real), wall seconds, each party's stats, Comp's
    view if recorded, the steps replayed after a resume (``config.checkpoints``) and P's coin
    key.  DO holds ``theta`` and the environment's ``noise``, with the public bound
    ``theta_norm_bound`` >= ||theta||_2.  ``coin_key`` keys P's CSPRNG stream (give the
    plaintext reference the same key to replay its choices; None: P draws its own; a resumed
    P goes on with its checkpoint's, returned as ``coin_key``)."""
    c = config
    made = []                          # every role made so far is torn down, whatever fails

    def spawn(cls, *args, **options):
        made.append(roles.spawn(cls, c.runtime, *args, timeout_s=c.timeout_s, **options))
        return made[-1]

    keys_start = time.perf_counter()
    try:
        comp, dc, do, p, comp_key, dc_key = public_keys(lambda: (
            spawn(Comp, c.key_bits, c.insecure_key_bits_ok, c.seed, c.workers, c.record_views),
            spawn(DataClient, c.horizon, c.key_bits, c.insecure_key_bits_ok, c.seed),
            spawn(DataOwner), spawn(Principal, policy, c.scale_bits, c.workers, c.obfuscator,
                                          c.split_min_work)))
        parties = (do, dc, p, comp)
        do.call("load", theta, policy.arms, noise, theta_norm_bound)
        p.call("connect", do, dc, comp, comp_key, dc_key, coin_key, c.checkpoints)
        start = time.perf_counter()
        layout = p.call("setup")
        online = time.perf_counter()
        arms = p.call("run")
        p.call("key_switch")
        end = time.perf_counter()
        fixed = FixedPoint(c.scale_bits)
        sum_int = dc.call("result")
        return {"arms": arms, "sum_int": sum_int, "sum": fixed.reward_real(sum_int),
                "wall_s": end - start, "online_s": end - online, "offline_s": online - start,
                "keygen_s": start - keys_start, "layout": layout, "stats": {s["name"]: s for s in
                                            (x.call("stats") for x in parties)},
                "views": {"Comp": comp.call("recorded_view")} if c.record_views else {},
                "replays": p.call("replays"), "coin_key": p.call("audit_coin_key")}
    finally:
        roles.teardown(made)
