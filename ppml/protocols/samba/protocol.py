"""Samba (Ciucanu et al., Figs. 5-6 and section 4.2): the Controller and a whole run, in one
process (runtime ``local``) or with the DOs, Comp and DC as Ray actors (runtime ``ray``).

The Controller runs in the calling process.  Per step t in [K + 1, N] and iteration l in
[1, nb_A] it gathers the DOs' Enc(masked score) (step 2, one batched call per DO group, all
groups at once), applies a fresh sigma_t from its CSPRNG stream (step 3), has Comp select
(step 4), un-permutes the encrypted bits and returns them (step 5).  The bits of step 5 travel
in the same call to a group as the next step 2 (each DO opens its bit, then scores), so an
iteration costs one call per group and one to Comp.  On epsilon-greedy's explore
steps (x <= eps_t from seed_eps, which the Controller shares with the DOs) no score is sent: the
Controller asks Comp to select among equal scores, and sigma_t alone picks the arm (section 5.4,
"Algorithm-Specific Optimizations").  At the end the DOs send E(s_i) (step 6), the Controller
multiplies them and DC decrypts the sum (step 7).

Under ``mask=mpc`` (the default) step 2 sends Comp only its shares of the scores, and step 4 is
SelectArm on shares between the Controller's seat (party 0) and Comp's (party 1), with DC as
dealer (`ppml.protocols.samba.selection`); the Controller's shares are its words of the streams
it shares with each DO, permuted by sigma_t like Comp's.

Both runtimes run the same objects on the same streams, so they give the same run.

With ``setup.checkpoints`` the Controller drives the checkpoints (`RoleCheckpoints`): after
every ``every``-th step it delivers that step's last bits (so no message is in flight), has
Comp and each DO group save their own state in their own stores and saves its own in its
store.  A resumed run does steps 0-1 again (new processes need their keys and their links),
then every role goes back to the last step all of them hold and the run goes on from there:
in seeded mode with the uninterrupted run's draws, arms and rewards (docs/reliability.md).
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import time
from dataclasses import dataclass, field

import numpy as np

from ppml.protocols.samba.config import SambaConfig
from ppml.protocols.samba.draws import Permutations, Words
from ppml.protocols.samba.keys import SambaKeys, make_run_id, role_key, streams
from ppml.protocols.samba.policies import MATCH
from ppml.protocols.samba.roles import (Comp, DataCustomer, DataOwnerGroup, engine_config,
                                        hand_over_context)
from ppml.protocols.samba.selection import (U_BITS, check_policy, match_words, select_on_shares,
                                             share_words)
from ppml.crypto.agreement import KeyAgreement
from ppml.crypto.rng import Stream, warn_insecure
from ppml.privacy.views import ViewRecorder
from ppml.runtime import progress, roles
from ppml.runtime import seat
from ppml.runtime.checkpoints import RoleCheckpoints
from ppml.runtime.seat import RoleDealer

@dataclass
class SambaRun:
    """What a run produced: arms by step (evaluation only), DC's decrypted total, the seconds
    of each participant, and the operation counts of Theorem 4."""

    arms: list
    cumulative_reward: int
    wall_s: float
    seconds: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    views: dict = field(default_factory=dict)
    """Role -> what it received (`ppml.privacy.views`), when the run recorded views."""
    replay_keys: SambaKeys | None = None
    """EVALUATION ONLY: the roles' own keys, collected after the run with ``collect_keys``."""
    replays: list = field(default_factory=list)
    """(checkpoint gone on from, last step finished before) per resume (`RoleCheckpoints`)."""


def owner_groups(arms: int, owners_per_actor: int | None, slots: int) -> list[range]:
    """DO indices per group: ``owners_per_actor`` each, by default spread evenly over ``slots``
    groups (one DO each when there are at least K slots)."""
    size = owners_per_actor or math.ceil(arms / max(1, min(slots, arms)))
    return [range(start, min(start + size, arms)) for start in range(0, arms, size)]


class Controller:
    """The Controller (Fig. 6(b)): permutations and message routing.  It makes its own keys
    (the permutations' key and seed_eps, which it shares with the DOs) and the public run id,
    relays the other keys only as public keys and sealed boxes, and holds no key that opens a
    score, a bit or a share of the reward.  Under mask=mpc it is also party 0 of the selection
    on shares: it makes the key of each stream it shares with a DO (its shares of the DO's
    scores), draws probability matching's u, and holds its `Seat`.  ``seconds`` is its own
    work only (under mask=mpc with the selection, which it computes with Comp, as Comp's
    ``seconds`` do)."""

    def __init__(self, setup: SambaConfig, arms: int, groups, layout, customer):
        self.setup, self.arms = setup, arms
        self.policy = setup.spec.policy(arms)
        self.run_id = make_run_id(setup.seed)
        self._permutation_key = role_key(setup.seed, "controller")
        self._explore_key = role_key(setup.seed, "explore")
        self.permutations = Permutations(streams(self._permutation_key)[0], arms)
        self.explore = Words(Stream(self._explore_key))
        self.seat = None
        if setup.mask == "mpc":
            check_policy(self.policy)
            self.agreement = KeyAgreement(role_key(setup.seed, "x25519", "controller"))
            self._share_keys = [role_key(setup.seed, "shares", i) for i in range(arms)]
            self.shares = [share_words(key) for key in self._share_keys]
            self.match = match_words(self._permutation_key)
            self.seat = seat.make(setup.runtime, 0, engine_config(setup.record_views),
                                  setup.timeout_s)
        self.groups, self.layout, self.customer = groups, layout, customer
        self.comp = None
        """Comp's role, attached once Comp is made with this run's id."""
        self._deliveries = [None] * len(groups)
        self.seconds = 0.0
        self.view = ViewRecorder(setup.record_views)

    def set_up(self, data) -> None:
        """Steps 0-1 (``data``: the arms' reward sources, each DO group getting its own; None
        when each group holds its own, as a federated DO does): DC's public key to the DOs;
        Enc's key from Comp and the key that hides a DO's scores (mask=paper: seed_alpha from DO 0; mask=mpc: the key of its shares, from
        here) relayed to each DO as sealed boxes (the Controller relays public keys and boxes
        only); seed_eps to the DOs; each DO receives its own arm's rewards only.  Under mask=mpc
        the two seats then link up (`_join_engine`)."""
        public_key = self.gather([self.customer], [("public", ())])[0]                 # step 0
        publics = {}
        for part in self.gather(self.groups, [("join", (None if data is None else
                                                        [data.arm(i) for i in members],
                                                        self.setup.seed,
                                                        self.setup.record_views,
                                                        self.setup.mask))
                                              for members in self.layout]):
            publics.update(part)
        comp_public, aes_boxes = self.gather([self.comp, self.comp], [
            ("public", ()), ("share_enc_key", (publics,))])
        if self.seat is None:                   # seed_alpha, from DO 0 (which keeps its own)
            hiding, sender = "masks", ("DO0", publics[0])
            hidings = self.gather(self.groups[:1],                  # the group hosting DO 0
                                  [("share_alpha", (publics, self.run_id))])[0]
        else:                                   # the key of each DO's shares, from here
            hiding, sender = "shares", ("Controller", self.agreement.public)
            hidings = {i: self.agreement.seal(publics[i], key, hand_over_context(
                self.run_id, "shares", "Controller", f"DO{i}"))
                for i, key in enumerate(self._share_keys)}
        senders = {"aes-gcm": ("Comp", comp_public), hiding: sender}
        boxes = {i: {"aes-gcm": aes_boxes[i], **({hiding: hidings[i]} if i in hidings else {})}
                 for i in range(self.arms)}
        self.gather(self.groups, [("setup", ({i: boxes[i] for i in members}, senders,
                                             self._explore_key, self.run_id, self.arms,
                                             self.setup.horizon, self.setup.spec,
                                             self.setup.crypto, public_key))
                                  for members in self.layout])
        if self.seat is not None:
            self._join_engine(comp_public)

    def _join_engine(self, comp_public: bytes) -> None:
        """mask=mpc: DC deals each party its dealer key, sealed; both seats link up over TLS,
        each pinning the other's certificate, and agree the key of their pair over the link
        (the seeded INSECURE mode: the Controller seals Comp the seed's pair key instead)."""
        (comp_address, comp_certificate), (dealer, dealer_boxes) = self.gather(
            [self.comp, self.customer],
            [("engine_address", ()), ("deal", ({0: self.agreement.public, 1: comp_public},
                                               self.run_id))])
        pair_keys = pair_box = None
        if self.setup.seed is not None:
            pair_keys = {(0, 1): role_key(self.setup.seed, "engine-pair")}
            pair_box = self.agreement.seal(comp_public, pair_keys[0, 1], hand_over_context(
                self.run_id, "engine-pair", "Controller", "Comp"))
        addresses = [self.seat.address, comp_address]
        joining = self.comp.submit("join_engine", addresses, self.seat.certificate,
                                   self.agreement.public, pair_box, dealer, dealer_boxes[1])
        dealer_key = self.agreement.open(dealer, dealer_boxes[0], hand_over_context(
            self.run_id, "dealer", "DC", "Controller"))
        self.seat.connect(addresses, seat.pinned({1: comp_certificate}), pair_keys, dealer_key,
                          RoleDealer(self.customer))
        joining.result()

    def replay_keys(self) -> tuple:
        """EVALUATION ONLY (never called by the protocol): the permutations' key and seed_eps,
        for a plaintext reference that replays the run."""
        return self._permutation_key, self._explore_key

    def checkpoint_state(self) -> dict:
        """The Controller's own state after a step (Fig. 6(b)): its keys (the permutations',
        seed_eps) and where its readers stand (sigma_t, seed_eps; under mask=mpc its shares of
        each DO's scores, probability matching's u, and its seat's engine state).  The run id
        and the keys it relays are the resumed run's."""
        state = {"keys": (self._permutation_key, self._explore_key),
                 "permutations": self.permutations.state(), "explore": self.explore.state()}
        if self.seat is not None:
            state.update(shares=[share.state() for share in self.shares],
                         match=self.match.state(), seat=self.seat.snapshot())
        return state

    def restore_state(self, state: dict) -> None:
        """Go on from `checkpoint_state`'s ``state`` (after steps 0-1 of the resumed run)."""
        self._permutation_key, self._explore_key = state["keys"]
        self.permutations = Permutations.resumed(state["permutations"], self.arms)
        self.explore = Words.resumed(state["explore"])
        if self.seat is not None:
            self.shares = [share_words(*share) for share in state["shares"]]
            self.match = Words.resumed(state["match"])
            self.seat.restore(state["seat"])

    def checkpointed_roles(self) -> dict:
        """The roles that keep their own checkpoints, by store name: Comp and each DO group
        (named by its DOs: another layout finds no checkpoint of its own); DC's keys are made
        again at step 0 and it holds nothing that a step changes."""
        return {"comp": self.comp, **{f"do-{m.start}-{m.stop - 1}": group
                                      for m, group in zip(self.layout, self.groups)}}

    @staticmethod
    def gather(handles, calls) -> list:
        """Issue every (method, args) call, then wait for all (in parallel on Ray)."""
        return roles.call_all([(h, method, args) for h, (method, args) in zip(handles, calls)])

    def _owners(self, method: str, *args) -> list:
        """One batched call per DO group; the DOs' answers in DO order."""
        batches = self.gather(self.groups, [(method, args)] * len(self.groups))
        return [item for batch in batches for item in batch]

    def _exchange(self, asked) -> list | None:
        """One call per DO group: step 5 of the previous iteration (its un-permuted bits, held
        since), then step 2 of ``asked`` = (t, l) if not None; the scores in DO order."""
        batches = self.gather(self.groups, [("exchange", (delivery, asked))
                                            for delivery in self._deliveries])
        self._deliveries = [None] * len(self.groups)
        return None if asked is None else list(itertools.chain.from_iterable(batches))

    def deliver(self) -> None:
        """Step 5's last bits to the DOs now, rather than with the next call to them."""
        self._exchange(None)

    def step(self, t: int) -> None:
        """Steps 2-5 for every iteration l of step t; the bits of step 5 reach the DOs with the
        next call to them (the next iteration's step 2, or the end of the run)."""
        start = time.perf_counter()
        explores = self.policy.explores(t, self.explore)
        for l in range(1, self.policy.iterations + 1):
            sigma, inverse = self.permutations.next()
            self.seconds += time.perf_counter() - start
            scores = self._exchange(None if explores else (t, l))                   # step 2
            start = time.perf_counter()
            if scores is not None and self.view.enabled:        # sealed: all it receives
                self.view.record(t, l, [int.from_bytes(c, "big") for c in scores])
            permuted = None if explores else list(map(scores.__getitem__, sigma))   # step 3
            if permuted is None or self.seat is None:
                self.seconds += time.perf_counter() - start
                bits = self.gather([self.comp], [("select", (t, l, permuted))])[0]   # step 4
            else:
                bits = self._select_on_shares(t, l, sigma, permuted, start)
            start = time.perf_counter()
            unpermuted = list(map(bits.__getitem__, inverse))                       # step 5
            self._deliveries = [(t, l, unpermuted[m.start:m.stop]) for m in self.layout]
            self.seconds += time.perf_counter() - start
            start = time.perf_counter()

    def _select_on_shares(self, t: int, l: int, sigma: list, permuted: list,
                          start: float) -> list:
        """mask=mpc, steps 3-4: its own shares (a word of each DO's stream) permuted by
        sigma_t, u for probability matching, and SelectArm in its seat beside Comp's."""
        words = [share.word() for share in self.shares]
        mine = np.array(list(map(words.__getitem__, sigma)), dtype=np.uint64)
        kind = self.policy.kind(l)
        u = self.match.word() >> (64 - U_BITS) if kind == MATCH else None
        selecting = self.comp.submit("select", t, l, permuted)
        try:
            self.seat.run(select_on_shares, kind, mine, u)
        except ConnectionError:
            selecting.result()                  # Comp's own failure, if that closed its seat
            raise
        except TimeoutError as silent:          # its seat runs in Comp's process: Comp is silent
            raise roles.RoleError(self.comp.name, f"{self.comp.name} stopped answering during "
                                  f"select: its engine seat sent nothing: {silent}") from silent
        self.seconds += time.perf_counter() - start     # with the selection it computes
        if self.view.enabled:          # after the boxes: its shares, then what Comp sent it
            values = words + self.seat.received()
            self.view.record(t, l, values, range(self.arms, self.arms + len(values)))
        return selecting.result()

    def selection_counts(self) -> dict:
        """The selection on shares' online rounds and the bytes the Controller sent in them
        (0 under mask=paper)."""
        stats = None if self.seat is None else self.seat.stats()
        return {"selection_rounds": 0 if stats is None else stats.rounds,
                "selection_bytes": 0 if stats is None else stats.bytes_sent}

    def cumulative_reward(self) -> int:
        """The last bits, then steps 6-7: E(s_1) ... E(s_K) = E(sum s_i) (each DO's obfuscator
        precomputed at setup), decrypted by DC."""
        self.deliver()
        shares = self._owners("reward_shares")
        start = time.perf_counter()
        total = functools.reduce(operator.add, shares)
        self.seconds += time.perf_counter() - start
        return self.gather([self.customer], [("cumulative_reward", (total,))])[0]

    def report(self, total: int, wall: float, phases: dict) -> SambaRun:
        """Evaluation only: who pulled when, each participant's seconds and operations, and the
        wall seconds of the ``phases`` (setup with DC's key generation and the DOs' offline
        obfuscators, steps 2-5, steps 6-7)."""
        reports = self._owners("report")
        (comp_s, comp_ops), (dc_s, keygen_s) = self.gather([self.comp, self.customer],
                                               [("report", ()), ("report", ())])
        arms = [None] * self.setup.horizon
        for index, pulled, _, _, _ in reports:
            for t in pulled:
                arms[t - 1] = index
        owner_s = [r[2] for r in reports]
        crypto = self.setup.crypto
        counts = {"aes_gcm_ops": comp_ops + sum(r[3] for r in reports),
                  "paillier_encryptions": self.arms if crypto else 0,
                  "paillier_additions": self.arms - 1 if crypto else 0,
                  "paillier_decryptions": 1 if crypto else 0,
                  **self.selection_counts()}
        seconds = {"controller_s": self.seconds, "comp_s": comp_s, "dc_s": dc_s,
                   "keygen_s": keygen_s, "owner_mean_s": sum(owner_s) / len(owner_s),
                   "owner_max_s": max(owner_s), "offline_s": sum(r[4] for r in reports),
                   **phases}
        views = {}
        if self.setup.record_views:
            others = [self.comp, self.customer, *self.groups]
            tables = self.gather(others, [("recorded_view", ())] * len(others))
            views = {"Controller": self.view.table(),
                     **{role.name: table for role, table in zip(others, tables)}}
        return SambaRun(arms, total, wall, seconds, counts, views)


def run_samba(data, setup: SambaConfig) -> SambaRun:
    """One Samba run on BernoulliArms ``data`` (``arm(i)`` gives DO i its rewards); see the
    module docstring.  With ``setup.collect_keys`` the run also returns the keys a plaintext
    reference needs to replay it (evaluation only)."""
    if setup.runtime == "federated":
        raise ValueError("run_samba runs the roles in this process or as Ray actors; "
                         "runtime=federated runs them as parties (ppml.experiments.samba_parties)")
    arms = len(data.means)
    if setup.horizon < arms:
        raise ValueError(f"horizon must be >= arms ({arms}): every arm is pulled once first, "
                         f"got {setup.horizon}")
    if setup.seed is not None:
        warn_insecure(setup.seed)
    start = time.perf_counter()

    participants = []                  # every role made so far is torn down, whatever fails

    def make(cls, *args, **options):
        participants.append(roles.spawn(cls, setup.runtime, *args, timeout_s=setup.timeout_s,
                                        **options))
        return participants[-1]

    controller = None
    try:
        with key_generation(setup):
            customer = make(DataCustomer, setup.key_bits, setup.insecure_key_bits_ok,
                            setup.seed, setup.crypto, setup.record_views)   # an actor: async
            layout = owner_groups(arms, setup.owners_per_actor, roles.slots(setup.runtime))
            groups = [make(DataOwnerGroup, name=f"DO group {m.start}-{m.stop - 1}")
                      for m in layout]                  # made while DC makes its key pair
            customer.call("public")                     # the bar is done once the pair exists
        controller = Controller(setup, arms, groups, layout, customer)
        controller.comp = make(Comp, arms, setup.spec, controller.run_id, setup.crypto,
                               setup.seed, setup.record_views, setup.mask, setup.runtime,
                               setup.timeout_s, background=setup.mask == "mpc")     # its seat meets the caller's
        return play(data, setup, start, controller)
    finally:
        if controller is not None and controller.seat is not None:
            controller.seat.close()
        roles.teardown(participants)


def play(data, setup: SambaConfig, start: float, controller: Controller) -> SambaRun:
    """Steps 0-7 by ``controller`` with its participants (made by `run_samba`, or reached as
    federated parties); ``data`` as `Controller.set_up` takes it.  With ``setup.checkpoints``
    the roles checkpoint, and a resumed plan goes on from their last common step."""
    with progress.stage(f"{_title(setup)} set-up"):
        controller.set_up(data)
        saving = setup.checkpoints and RoleCheckpoints(
            setup.checkpoints, controller.checkpointed_roles(), roles.gather,
            driver="controller", give_plans=setup.runtime != "federated")   # a federated
        first, state = saving.start() if saving else (0, {})           # role keeps its own plan
        if first:
            controller.restore_state(state)
    steps = time.perf_counter()
    begun = max(first, controller.arms)
    for t in progress.track(range(begun + 1, setup.horizon + 1), f"{_title(setup)} steps",
                            setup.horizon, initial=begun):
        controller.step(t)
        if saving:
            _checkpoint(saving, controller, t)
    end = time.perf_counter()
    total = controller.cumulative_reward()
    finish = time.perf_counter()
    run = controller.report(total, finish - start, {"setup_s": steps - start,
                                                    "steps_s": end - steps,
                                                    "end_s": finish - end})
    if setup.collect_keys:
        run.replay_keys = collected_keys(controller)
    run.replays = saving.replays if saving else []
    return run


def key_generation(setup: SambaConfig):
    """The bar of DC's key generation, around the wait for its key pair (a context manager)."""
    return progress.stage(f"{_title(setup)} key generation", unit="key")


def _title(setup: SambaConfig) -> str:
    """The run's name on its progress bars: the secure run's, or the one without crypto."""
    return "samba" if setup.crypto else "samba (no crypto)"


def _checkpoint(saving: RoleCheckpoints, controller: Controller, t: int) -> None:
    """After step t: when due, the last bits delivered, then every role's state saved by
    itself and the Controller's own; the Controller's progress noted every step."""
    due = saving.plan.due(t)
    if due:
        controller.deliver()
    saving.done(t, controller.checkpoint_state() if due else None)


def collected_keys(controller: Controller) -> SambaKeys:
    """EVALUATION ONLY: each role's own keys after the run, for the plaintext reference."""
    permutation_key, explore_key = controller.replay_keys()
    comp_key = controller.gather([controller.comp], [("replay_key", ())])[0]
    owners = {}
    for part in controller.gather(controller.groups,
                                  [("replay_keys", ())] * len(controller.groups)):
        owners.update(part)
    return SambaKeys(permutation_key, explore_key, comp_key, owners)
