"""The agents of PPRL partitioned by observation (Sakuma et al., section 4.2, Figs. 3-4, eqs.
5-9), as roles (`ppml.runtime.roles`): objects in this process, Ray actors or federated
parties, the same class in each.

Every step each agent i perceives its own state s_i and reward r_i from the world
(`world.World`) and takes its own action a_i; the learner is CRL's, over the joint state and
action with the global reward r = sum r_i.  Agent 0 (the paper's A) keeps the encrypted table
c(s, a) = e(Q(s, a)), its axes (s_0, ..., s_(m-1), a_0, ..., a_(m-1)), under an (m, m)-threshold
key whose shares the dealer hands each agent sealed.  A step's update (Fig. 3, generalised
along a chain; each agent takes what the one before it left in its outbox):

* 4(a) `slices`, `slices_from`: agent 0 leaves the slices of the table at its (s_0, a_0) and
  (s_0', a_0'), re-randomised (eqs. 6-7); each agent 1 ... m-2 keeps the sub-slices at its own
  pair, re-randomises them and passes them on; every agent but the last adds
  X^i = e(alpha K L r_i).
* 4(b)-(c) `divide_from`: the last agent (the paper's B) computes e(K dQ) = prod X^i
  c(s', a')^(alpha gamma K) c(s, a)^(-alpha K) with its own reward term folded into the
  division's mask (eq. 5), and divides with agent 0 (`division`), whose decryption is the
  threshold decryption (`JointDecryption`: the last agent sends its decryption share with the
  masked value, agent 0 asks the others for theirs); the borrow is compared on the engine
  between agent 0's seat and the last agent's.
* 4(d) `widen_from`: the last agent sends e(dQ') at its own pair and e(0) at every other pair
  of its own (eq. 8); each agent m-2 ... 1 places what it received at its own pair and e(0)
  elsewhere and passes it back.
* 4(e) `apply_from`: agent 0 multiplies it into its slice (eq. 9): only c(s_t, a_t) changes.

Greedy choices and Q-learning's max (Fig. 4, `permute_start`, `permute_from`,
`compare_block`): agent 0 leaves its slice at s_0 with its action axis in its own order; each
agent keeps the sub-slice at its state with its action axis in its order and passes it on,
re-randomised; the last agent, holding the joint actions in the agents' orders, finds their
first maximum with agent 0 (`greedy`), who alone learns its position; each agent asks agent 0
for its own place in its own order (`take_place`), or for the max the last agent asks for the
position, whose ciphertext in its block is e(max_a Q(s', a)) (`take_maximum`).

What each agent learns: agent 0 the masked values y of the divisions and greedy selections and
its view of the comparisons; every other agent ciphertexts under the joint key (fresh or
re-randomised, so it cannot link them across steps), its own greedy actions and positions in
orders (uniform), and the last agent its view of the comparisons.
"""

from __future__ import annotations

import hashlib
import secrets
import time

import numpy as np

from ppml.crypto.agreement import KeyAgreement
from ppml.crypto.paillier import ops
from ppml.crypto.paillier.bulk import PartialDecryptor
from ppml.crypto.paillier.keys import check_key_bits
from ppml.crypto.paillier.threshold import DecryptionShare, KeyShare, combine
from ppml.crypto.rng import Stream, fresh_key
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.division import (OWNER, DivisionHolder, DivisionOwner,
                                          Encryptor, borrow_program)
from ppml.protocols.pprl.greedy import GreedyHolder, first_maximum_program
from ppml.protocols.pprl.reference import (agent_generator, generator_state, learner,
                                           restore_generator)
from ppml.protocols.pprl.masking import signed
from ppml.protocols.pprl.roles import EngineSeats, own_key
from ppml.protocols.pprl.turn import ENGINE
from ppml.runtime.checkpoints import Checkpointed
from ppml.runtime.roles import DEFAULT_TIMEOUT_S, gather

COUNTS = ("decryption_shares", "decrypt_s", "offline_s", "divisions", "comparisons",
          "seconds")
"""An agent's counts and seconds for its report, which its checkpoint keeps."""

ENGINE_TURN = 0
"""The one engine of a run partitioned by observation: agent 0's seat and the last agent's."""


def shared(index: int) -> bytes:
    """What the dealer's sealed key share of agent ``index`` is bound to."""
    return f"pprl/threshold-key/agent-{index}".encode()


def digest(ciphertexts: list) -> bytes:
    """What identifies a batch of ciphertexts (SHA-256 of their decimal texts)."""
    return hashlib.sha256(",".join(str(int(c)) for c in ciphertexts).encode()).digest()


def pack(block) -> dict:
    """A block of ciphertexts (an object array, or one ciphertext) as data that crosses."""
    if not isinstance(block, np.ndarray):
        return {"shape": None, "cells": [block]}
    return {"shape": list(block.shape), "cells": list(block.ravel())}


def unpack(packed: dict):
    if packed["shape"] is None:
        return packed["cells"][0]
    block = np.empty(tuple(packed["shape"]), dtype=object)
    block.ravel()[:] = packed["cells"]
    return block


def encryptions_per_step(sizes: list, moves: list, greedy_choices: bool = False,
                         qlearning: bool = False) -> list:
    """Each agent's encryptions in one step: agent 0 re-randomises two slices (SARSA; one for
    Q-learning), sends its reward term and the division's two values; agent j in between
    re-randomises two sub-slices (one), sends its reward term and widens the update; the last
    agent masks, finishes the division and fills its own pairs with e(0).  Each Fig. 4 (a
    greedy choice, Q-learning's max) adds: every agent but the last re-randomises its
    sub-slice over all joint actions, the last masks the pairs of joint actions."""
    m = len(sizes)
    cells = [int(np.prod(sizes[j:])) * int(np.prod(moves[j:])) for j in range(m + 1)]
    slices = 1 if qlearning else 2
    counts = ([slices * cells[1] + 1 + 2]
              + [slices * cells[j + 1] + 1 + cells[j] - cells[j + 1] for j in range(1, m - 1)]
              + [2 + cells[m - 1] - 1])
    fig_4 = int(greedy_choices) + int(qlearning)
    joint = int(np.prod(moves))
    return [c + fig_4 * int(np.prod(sizes[j + 1:])) * joint for j, c in enumerate(counts[:-1])] \
        + [counts[-1] + fig_4 * joint * (joint - 1) // 2]


class JointDecryption:
    """Agent 0's decryption under the threshold key (`division.DivisionOwner`'s decryptor):
    its own decryption share, the shares sent with the ciphertexts (``given``: the last
    agent's), and each other agent's, asked for; combined (`threshold.combine`)."""

    def __init__(self, agent: "ObservationAgent"):
        self.agent, self.public_key = agent, agent.public_key
        self.given: dict = {}

    def decrypt_raw(self, ciphertexts: list) -> list:
        agent, given, self.given = self.agent, self.given, {}
        asked = [j for j in range(1, agent.agents) if j not in given]
        answers = gather([agent.peers[j].submit("share_for_owner", ciphertexts)
                          for j in asked])
        given.update(zip(asked, answers))
        shares = [DecryptionShare(0, agent.agents, agent.decryption_share(ciphertexts))]
        shares += [DecryptionShare(j, agent.agents, given[j]) for j in range(1, agent.agents)]
        return combine(self.public_key, shares)


class ObservationAgent(EngineSeats, Checkpointed):
    """Agent ``index`` of ``agents`` in trial ``trial`` (``seed``: the experiment's public
    seed, of the agents' choices only with ``key_seed``, the INSECURE seeded mode): its X25519
    key, its key share (from the dealer), its own generator (fresh OS entropy) and, agent 0,
    epsilon-greedy's public coin from a generator of its own; its perceptions; its part of
    every chain.

    With checkpoints it saves its own state to its own store (`checkpoint_state`); a resumed
    run keeps its key share (the dealer deals none again) and makes its X25519 key and the
    engine anew (`link`)."""

    RESULT_TO = OWNER
    """Fig. 4: agent 0 learns a greedy selection's position."""

    def __init__(self, index: int, agents: int, options: PPRLOptions, seed: int, trial: int,
                 key_bits: int, insecure_key_bits_ok: bool = False,
                 key_seed: int | None = None, runtime: str = "local",
                 record_views: bool = False, workers: int = 1,
                 timeout_s: float = DEFAULT_TIMEOUT_S):
        self.index, self.agents, self.options, self.runtime = index, agents, options, runtime
        self.name = f"agent-{index}"
        self.key_seed, self.timeout_s = key_seed, timeout_s
        self.key_bits, self.insecure_key_bits_ok = key_bits, insecure_key_bits_ok
        self.workers = workers
        env = tasks.make(options.task, agents)
        self.sizes = [int(n) for n in env.observation_space.nvec]
        self.moves = [int(n) for n in env.action_space.nvec]
        env.close()
        self.rules = learner(options, 1, 1, fixed=True)
        self.q_bits, self.k_delta_bits = bounds(self.rules, options,
                                                options.task_reward_bound(agents))
        self._agreement = KeyAgreement(own_key(key_seed, "x25519", index))
        self.encryptor = Encryptor(options.obfuscator, workers=workers)
        self.view = ViewRecorder(record_views)
        """Agent 0: each masked value it opens (l = `OPENED`; greedy selection's:
        `COMPARED`); agent 0 and the last agent: the engine's openings (l = `ENGINE`)."""
        fresh = key_seed is None
        self._entropy = secrets.randbits(128) if fresh else None
        self._coin_entropy = secrets.randbits(128) if fresh and index == 0 else None
        self._rng = agent_generator(seed, trial, index, self._entropy)
        self._coin = None if index else agent_generator(seed, trial, agents,  # the last child
                                                        self._coin_entropy)
        self.peers, self.dealer, self.world, self.seat = [], None, None, None
        self._key_share = self._share = self.public_key = self.table = None
        self.division_owner = self.holder = self.greedy = None
        self.finished, self._revealed, self._expected = False, False, None
        self.state = self.action = self.after = self.following = self.order = None
        self.reward = 0.0
        self.outbox = self.block = self.upcoming = self.position = None
        self.decryption_shares, self.decrypt_s, self.offline_s = 0, 0.0, 0.0
        self.divisions = self.comparisons = 0
        self.seconds = {"division": 0.0, "comparison": 0.0}

    @property
    def last(self) -> bool:
        return self.index == self.agents - 1

    def attach(self, peers: list, dealer, world) -> None:
        """The roles it calls: every agent by index, the dealer, the world."""
        self.peers, self.dealer, self.world = list(peers), dealer, world

    def take_key_share(self) -> None:
        """Its share of the threshold key, opened from the dealer's sealed box; then its part
        of the set-up: agent 0 encrypts the table (Fig. 3, step 1), the last agent makes its
        sides of the division and of greedy selection."""
        public_key, dealer_public, box = self.dealer.call("key_share", self.index,
                                                          self._agreement.public)
        check_key_bits(public_key.bits, self.insecure_key_bits_ok)
        if public_key.bits != self.key_bits:
            raise ValueError(f"the dealer's key has {public_key.bits} bits, not key_bits="
                             f"{self.key_bits}")
        self._use_share(public_key, self._agreement.open(dealer_public, box, shared(self.index)))
        if self.index == 0:
            cells = int(np.prod(self.sizes)) * int(np.prod(self.moves))
            self.table = np.empty(tuple(self.sizes) + tuple(self.moves), dtype=object)
            self.table.ravel()[:] = self.encryptor.encrypt(public_key, [0] * cells)

    def _use_share(self, public_key, share: bytes) -> None:
        """Its key share of ``public_key`` (``share``: `threshold.KeyShare.exponent_bytes`),
        and what works with it: agent 0's side of the division, with the joint decryption;
        the last agent's sides of the division and of greedy selection."""
        self.public_key, self._share = public_key, share
        self._key_share = PartialDecryptor(KeyShare.from_bytes(public_key, self.index,
                                                               self.agents, share),
                                           self.workers)
        if self.index == 0:
            self.division_owner = DivisionOwner(JointDecryption(self),
                                                self.rules.division_bits, self.encryptor)
        if self.last:
            self.holder = DivisionHolder(public_key, self.k_delta_bits,
                                         self.rules.division_bits, self.encryptor)
            self.greedy = GreedyHolder(public_key, self.q_bits, self.encryptor)

    def link(self) -> None:
        """The last agent: the run's engine with agent 0 (`EngineSeats._join`)."""
        self._join(ENGINE_TURN, 0)

    def share_for_owner(self, ciphertexts: list) -> list:
        """Its decryption share of ``ciphertexts`` for agent 0's joint decryption: only of what
        the last agent masked (it announced them, `expect`), or after the run once, of the final
        table; the last agent sends its shares with what it masks."""
        expected, self._expected = self._expected, None
        if self.finished:
            if self._revealed:
                raise PermissionError(f"{self.name} has given its share of the final table")
            self._revealed = True
        elif self.last or expected is None or digest(ciphertexts) != expected:
            raise PermissionError(f"{self.name} gives agent 0 decryption shares only of what "
                                  "the last agent masked, and of the final table")
        return self.decryption_share(ciphertexts)

    def _announce(self, masked: list) -> None:
        """The last agent, before agent 0 decrypts ``masked`` jointly: tells every agent in
        between what it masked (`expect`), so that they give shares of that only."""
        gather([self.peers[j].submit("expect", digest(masked))
                for j in range(1, self.agents - 1)])

    def expect(self, hashed: bytes) -> None:
        """An agent in between: the digest of what the last agent masked, whose decryption
        share agent 0 will ask for next."""
        self._expected = hashed

    def decryption_share(self, ciphertexts: list) -> list:
        """Its share of the threshold decryption of ``ciphertexts`` (`threshold.KeyShare`;
        with ``workers`` > 1 a bulk one is split over pinned actors of its node,
        `bulk.PartialDecryptor`)."""
        began = time.perf_counter()
        self.decryption_shares += len(ciphertexts)
        values = self._key_share.partial_decrypt(ciphertexts).values
        self.decrypt_s += time.perf_counter() - began
        return values

    def prepare(self, steps: int) -> None:
        """Offline: its obfuscators for ``steps`` steps (`encryptions_per_step`)."""
        began = time.perf_counter()
        count = encryptions_per_step(self.sizes, self.moves, self.options.selection != "random",
                                     self.options.learner == "qlearning")[self.index]
        self.encryptor.prepare(self.public_key, count * steps)
        self.offline_s += time.perf_counter() - began

    # -- perceiving and acting -------------------------------------------------------------
    def perceive(self) -> None:
        """Its own next state and reward, from the world."""
        self.after, self.reward = self.world.call("observe", self.index)

    def act(self) -> None:
        self.world.call("act", self.index, self.action)

    def shift(self) -> None:
        self.state, self.action = self.after, self.following

    def take_outbox(self) -> dict:
        """What it left for the next agent of the chain."""
        out, self.outbox = self.outbox, None
        return out

    # -- selection (`learners.select_joint`, Fig. 4) ----------------------------------------
    def coin(self) -> float:
        """Agent 0: epsilon-greedy's public coin."""
        return float(self._coin.random())

    def choose_random(self) -> None:
        self.following = int(self._rng.integers(self.moves[self.index]))

    def draw_order(self, fresh: bool) -> None:
        """Its permutation of its actions: from its generator (a greedy choice), or from the
        OS CSPRNG (Q-learning's max, which needs no tie-break the reference could replay)."""
        moves = self.moves[self.index]
        self.order = Stream(fresh_key()).permutation(moves) if fresh \
            else self._rng.permutation(moves)

    def _rerandomized(self, block: np.ndarray) -> np.ndarray:
        out = np.empty(block.shape, dtype=object)
        out.ravel()[:] = self.encryptor.rerandomize(self.public_key, list(block.ravel()))
        return out

    def _permuted(self, block: np.ndarray) -> np.ndarray:
        """Fig. 4, steps 1-2: the sub-block of ``block`` (axes: this agent's and later agents'
        states, then every agent's actions) at its state s', its own action axis put in its
        order, re-randomised unless it is the last agent, who keeps it."""
        part = np.take(block[self.after], self.order, axis=self.agents - 1)
        return part if self.last else self._rerandomized(part)

    def permute_start(self) -> None:
        self.outbox = pack(self._permuted(self.table))

    def permute_from(self, previous: int) -> None:
        block = self._permuted(unpack(self.peers[previous].call("take_outbox")))
        if self.last:
            self.block = block
        else:
            self.outbox = pack(block)

    def compare_block(self, step: int) -> None:
        """The last agent: the first maximum of its block's joint actions with agent 0, who
        alone learns its position (`greedy`)."""
        began = time.perf_counter()
        ciphertexts = list(self.block.ravel())
        masked = self.greedy.mask(ciphertexts)
        self._announce(masked)
        public = (len(ciphertexts), self.greedy.compared_bits)
        answer = self.peers[0].submit("compare", step, masked, self.decryption_share(masked),
                                      self.greedy.slots, len(self.greedy.offsets), *public)
        self.seat.run(first_maximum_program, self.greedy.offsets, *public, OWNER)
        answer.result()
        self.seconds["comparison"] += time.perf_counter() - began
        self.comparisons += 1

    def compare(self, step: int, masked: list, share: list, slots: int, count: int,
                values: int, width: int) -> None:
        """Agent 0's side of a greedy selection: the packed masked differences jointly
        decrypted (``share``: the last agent's decryption share of them), then the engine's
        comparison, whose position it learns (`EngineSeats.compare`)."""
        self.division_owner.decryptor.given = {self.agents - 1: share}
        super().compare(step, masked, slots, count, values, width)

    def place(self, index: int) -> int:
        """Agent 0: agent ``index``'s place in its own order of the last maximum."""
        return int(np.unravel_index(self.position, self.moves)[index])

    def maximum_position(self) -> int:
        """Agent 0: the last maximum's position, for the last agent (Q-learning's max)."""
        return self.position

    def take_place(self) -> None:
        """Its greedy action: its place in its own order, from agent 0 (Fig. 4's k*)."""
        place = self.place(0) if self.index == 0 else self.peers[0].call("place", self.index)
        self.following = int(self.order[place])

    def take_maximum(self) -> None:
        """The last agent: e(max_a Q(s', a)), its block's ciphertext at the maximum."""
        self.upcoming = self.block.ravel()[self.peers[0].call("maximum_position")]

    # -- the update (Fig. 3) ---------------------------------------------------------------
    def _narrow(self, block: np.ndarray, state: int, action: int):
        """4(a): the sub-block at this agent's (state, action), re-randomised; the last
        agent's is one ciphertext, kept as it is."""
        index = [slice(None)] * block.ndim
        index[0], index[block.ndim // 2] = state, action
        part = block[tuple(index)]
        return part if not isinstance(part, np.ndarray) else self._rerandomized(part)

    def _term(self) -> list:
        f = self.rules
        return self.encryptor.encrypt(self.public_key, [f.alpha_k * f.scaled_reward(self.reward)])

    def _slices(self, current, upcoming, terms: list) -> None:
        sarsa = self.options.learner == "sarsa"
        current = self._narrow(current, self.state, self.action)
        upcoming = self._narrow(upcoming, self.after, self.following) if sarsa else None
        self.outbox = {"current": pack(current),
                       "upcoming": None if upcoming is None else pack(upcoming),
                       "terms": terms + self._term()}

    def slices(self) -> None:
        """Agent 0, 4(a): its slices at (s_0, a_0) and (s_0', a_0'), and its reward term."""
        self._slices(self.table, self.table, [])

    def slices_from(self, previous: int) -> None:
        """An agent between the first and the last, 4(a)."""
        got = self.peers[previous].call("take_outbox")
        upcoming = None if got["upcoming"] is None else unpack(got["upcoming"])
        self._slices(unpack(got["current"]), upcoming, got["terms"])

    def divide_from(self, step: int, previous: int) -> None:
        """The last agent, 4(b)-(d): e(K dQ) (eq. 5), the division with agent 0, and the
        update widened over its own pairs (eq. 8)."""
        got = self.peers[previous].call("take_outbox")
        f = self.rules
        current = self._narrow(unpack(got["current"]), self.state, self.action)
        upcoming = self.upcoming if got["upcoming"] is None else \
            self._narrow(unpack(got["upcoming"]), self.after, self.following)
        terms = got["terms"]
        k_delta = ops.dot(self.public_key, [upcoming, current, *terms],
                          [f.alpha_gamma_k, -f.alpha_k] + [1] * len(terms))        # eq. 5
        began = time.perf_counter()
        masked = self.holder.mask([k_delta], [f.alpha_k * f.scaled_reward(self.reward)])
        self._announce(masked)
        answer = self.peers[0].submit("divide", step, masked, self.decryption_share(masked))
        borrows = self.seat.run(borrow_program, self.holder.low_bits(),
                                self.holder.division_bits)
        (delta,) = self.holder.finish(*answer.result(), borrows)
        self.seconds["division"] += time.perf_counter() - began
        self.divisions += 1
        if self.view.enabled:
            self.view.record(step, ENGINE, self.seat.received())
        self.outbox = pack(self._widen(delta))

    def divide(self, step: int, masked: list, share: list) -> tuple:
        """Agent 0's side of the division, 4(c): y jointly decrypted (``share``: the last
        agent's decryption share of it), the borrow on the engine (`EngineSeats.divide`)."""
        self.division_owner.decryptor.given = {self.agents - 1: share}
        return super().divide(step, masked)

    def _widen(self, received) -> np.ndarray:
        """4(d): a block over its states x actions and the later agents' axes of ``received``:
        ``received`` at its (state, action), fresh e(0) everywhere else."""
        inner = received if isinstance(received, np.ndarray) else np.empty((), dtype=object)
        half = inner.ndim // 2                               # the last agent's: one ciphertext
        shape = (self.sizes[self.index],) + inner.shape[:half] + \
            (self.moves[self.index],) + inner.shape[half:]
        index = [slice(None)] * len(shape)
        index[0], index[half + 1] = self.state, self.action
        zeros = np.ones(shape, dtype=bool)
        zeros[tuple(index)] = False
        fresh = np.empty(int(zeros.sum()), dtype=object)
        fresh[:] = self.encryptor.encrypt(self.public_key, [0] * fresh.size)
        out = np.empty(shape, dtype=object)
        out[zeros] = fresh
        out[tuple(index)] = received          # a ciphertext stays one (not a 0-d array)
        return out

    def widen_from(self, previous: int) -> None:
        """An agent between the first and the last, 4(d)."""
        self.outbox = pack(self._widen(unpack(self.peers[previous].call("take_outbox"))))

    def apply_from(self, previous: int) -> None:
        """Agent 0, 4(e): the update multiplied into its slice at (s_0, a_0) (eq. 9)."""
        block = unpack(self.peers[previous].call("take_outbox"))
        index = [slice(None)] * self.table.ndim
        index[0], index[self.agents] = self.state, self.action
        mine = self.table[tuple(index)]
        updated = np.empty(mine.size, dtype=object)
        updated[:] = ops.add(self.public_key, list(mine.ravel()), list(block.ravel()))
        self.table[tuple(index)] = updated.reshape(mine.shape)

    # -- checkpoints (docs/reliability.md, "Checkpoints and resume") -------------------------
    def checkpoint_state(self) -> dict:
        """What it saves after a step, all its own: its threshold key share d_i with the
        public key (its own secret: the table stays decryptable by the m agents together,
        each with its own share, `threshold`), its selection entropy and where its generator
        stands (agent 0: its coin's too), its state and action s_i, a_i (its own perceptions,
        for the next step's update: Fig. 3), agent 0 the encrypted table c(s, a) (Fig. 3,
        step 1), its counts and view.  Nothing of a step in flight (its outbox, a block, a
        maximum's position: a step saves once it is over), nor its X25519 key or its seat:
        the last agent makes the engine with agent 0 anew (`link`)."""
        return {"key": (self.public_key, self._share),
                "entropy": self._entropy, "coin_entropy": self._coin_entropy,
                "rng": generator_state(self._rng),
                "coin": None if self._coin is None else generator_state(self._coin),
                "state": self.state, "action": self.action,
                "table": None if self.table is None else pack(self.table),
                "counts": {**{name: getattr(self, name) for name in COUNTS},
                           "encryptions": self.encryptor.encryptions,
                           "encryption_s": self.encryptor.seconds},
                "view": self.view.rows}

    def restore_state(self, state: dict) -> None:
        """Go on from `checkpoint_state`'s ``state`` (the key share its own, not dealt)."""
        self._use_share(*state["key"])
        self._entropy, self._coin_entropy = (None if e is None else int(e) for e in
                                             (state["entropy"], state["coin_entropy"]))
        restore_generator(self._rng, state["rng"])
        if self._coin is not None:
            restore_generator(self._coin, state["coin"])
        self.state = self.after = state["state"]
        self.action = self.following = state["action"]
        self.table = None if state["table"] is None else unpack(state["table"])
        counts = state["counts"]
        for name in COUNTS:
            setattr(self, name, counts[name])
        self.encryptor.encryptions, self.encryptor.seconds = counts["encryptions"], \
            counts["encryption_s"]
        self.view.rows = None if state["view"] is None else [tuple(r) for r in state["view"]]

    # -- after the run ---------------------------------------------------------------------
    def finish(self) -> None:
        """The run is over: from now on it gives agent 0 one decryption share, of the final
        table (`share_for_owner`)."""
        self.finished = True

    def reveal(self) -> list:
        """EVALUATION ONLY, agent 0: the final table, jointly decrypted, as signed integers
        (the run's output)."""
        table = list(self.table.ravel())
        return signed(self.division_owner.decryptor.decrypt_raw(table), self.public_key)

    def report(self) -> dict:
        """Its own counts and seconds and, EVALUATION ONLY, the entropy of its choices (agent
        0: and of the coin), for the reference."""
        return {"entropy": self._entropy, "coin_entropy": self._coin_entropy,
                "encryptions": self.encryptor.encryptions,
                "decryptions": self.decryption_shares, "divisions": self.divisions,
                "comparisons": self.comparisons,
                "division_s": self.seconds["division"],
                "comparison_s": self.seconds["comparison"],
                "encryption_s": self.encryptor.seconds, "decryption_s": self.decrypt_s,
                "offline_s": self.offline_s}

    def view_table(self):
        """EVALUATION ONLY: its recorded view (`ppml.privacy.views`)."""
        return self.view.table()

    def close(self) -> None:
        super().close()
        if self._key_share is not None:
            self._key_share.close()
