"""The agents of PPRL partitioned by time (Sakuma et al., section 4.1, Fig. 2), and the dealer
of their engine, as roles (`ppml.runtime.roles`): objects in this process, Ray actors, or
parties of their own over TLS links (`ppml.experiments.pprl_parties`), the same class in each.

Each `TimeAgent` makes its own Paillier key pair and X25519 key and keeps their private halves;
it plays its own turns in its own environment and draws its actions from its own generator.
The Q-table travels only under another agent's key.  In a turn the agent that interacts with
the environment (the *holder*) keeps it under the key of the *owner* o and updates it with the
owner (`turn.EncryptedTurn`); the first agent learns the first turn in the clear (its Q-values
are a function of its own perceptions: section 4.1) and hands the table over under its own key
(Fig. 2, step 1).  Each agent reaches the others by index (``peers``, given by `attach`), so
that no call takes another agent as an argument.

When the turn passes from holder i to h' (`hand_over`, called by h'):

* owner o is not h': i re-randomises the table and hands it to h' (o stays the owner);
* owner o is h' (the turn comes back to the owner, section 4.1's general setting, "an SFE step
  is used to change the encryption"): the table must move under another key, since h' could
  decrypt its own.  i adds a mask R (``q_bound_bits`` + kappa bits wide, so Q + R >= 0 is
  hidden within 2^-kappa) under o's key and sends it to o with e_i(-R); o decrypts Q + R,
  encrypts it under i's key and multiplies: e_i(Q).  One exchange, no SFE: o learns Q + R
  only, i learns nothing; i becomes the owner.

Each encrypted turn has its own engine between its owner (rank `division.OWNER`) and holder
(`division.HOLDER`): both make a seat, the `EngineDealer` deals their dealer keys sealed to
their X25519 keys, and the seats link up over TLS, pinning each other's certificate.
"""

from __future__ import annotations

import secrets
import time

import numpy as np

from ppml.crypto.agreement import KeyAgreement
from ppml.crypto.paillier import ops
from ppml.crypto.paillier import Decryptor, generate_keypair
from ppml.crypto.paillier.keys import keypair_from_factors
from ppml.crypto.rng import fresh_key, seeded_key
from ppml.mpc.context import EngineConfig
from ppml.mpc.dealer import Dealer, material
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.division import (HOLDER, OWNER, DivisionOwner, Encryptor,
                                          borrow_program)
from ppml.protocols.pprl.greedy import first_maximum_program
from ppml.protocols.pprl.masking import mask, signed
from ppml.protocols.pprl.reference import (TurnPlayer, agent_generator, generator_state,
                                           generators, learner, restore_generator, turn_seed)
from ppml.protocols.pprl.turn import (COMPARED, ENGINE, HANDED_OVER, OPENED, EncryptedTurn,
                                      Holding)
from ppml.runtime import seat
from ppml.runtime.checkpoints import Checkpointed
from ppml.runtime.roles import DEFAULT_TIMEOUT_S
from ppml.runtime.seat import RoleDealer


TOTALS = ("encryptions", "decryptions", "divisions", "comparisons", "division_s",
          "comparison_s", "encryption_s", "decryption_s")
"""The agents' reports summed into a trial's row (both partitionings): counts, and the online
time's parts (in divisions and in comparisons, each with its encryptions, decryptions and
engine rounds; in all encryptions and all decryptions)."""


def own_key(seed: int | None, *label) -> bytes:
    """A role's own key: fresh from the OS CSPRNG, or derived from ``seed`` (INSECURE)."""
    return fresh_key() if seed is None else seeded_key(seed, "pprl", *label)


def dealt(turn: int, rank: int) -> bytes:
    """What the dealer's sealed key of ``rank`` in ``turn``'s engine is bound to."""
    return f"pprl/dealer/turn-{turn}/rank-{rank}".encode()


def comparisons_per_step(options: PPRLOptions, actions: int) -> int:
    """The private greedy selections each step of an encrypted turn runs, whatever happens:
    up to two selections (the next action, and a new episode's first) and Q-learning's max;
    the steps that need fewer run blind ones (`turn.EncryptedTurn`)."""
    if actions == 1:
        return 0
    return 2 * (options.selection != "random") + (options.learner == "qlearning")


class EngineDealer:
    """The dealer of each turn's engine, a role of its own (it must not collude with either
    agent of a turn): the turn's holder asks it to deal (`deal`), naming the turn's owner; it
    makes the turn's dealer keys and hands each engine party its own, sealed to that agent's
    X25519 key, which each agent sends itself (the owner's by `owner_box`), and answers the
    owner's requests for corrections.  It sees public keys and the requests, nothing of the
    Q-table.  `parties_of` tells who the turn's owner and holder are (a federated party serves
    `corrections` to the owner only and `forget` to the holder only)."""

    name = "dealer"

    def __init__(self, key_seed: int | None = None):
        self.seed = key_seed
        self._agreement = KeyAgreement(own_key(key_seed, "dealer", "x25519"))
        self._dealers: dict = {}
        self._keys: dict = {}
        self._parties: dict = {}

    def parties_of(self, turn: int) -> tuple:
        """(owner, holder) of turn ``turn``'s engine; (None, None) before it is dealt."""
        return self._parties.get(turn, (None, None))

    def deal(self, turn: int, owner: int, holder: int, public: bytes) -> tuple:
        """Turn ``turn``'s dealer keys, for agent ``owner``'s seat and agent ``holder``'s:
        (its X25519 public key, the holder's key sealed to the holder's X25519 key
        ``public``)."""
        if turn in self._parties:
            raise ValueError(f"the engine of turn {turn} has been dealt already")
        keys = {rank: own_key(self.seed, "dealer", turn, rank) for rank in (OWNER, HOLDER)}
        self._dealers[turn] = Dealer(keys, own_key(self.seed, "dealer-secret", turn))
        self._keys[turn] = keys[OWNER]
        self._parties[turn] = (owner, holder)
        return self._agreement.public, self._agreement.seal(public, keys[HOLDER],
                                                            dealt(turn, HOLDER))

    def owner_box(self, turn: int, owner: int, public: bytes) -> tuple:
        """(its X25519 public key, the owner's dealer key sealed to the owner's X25519 key
        ``public``), once, to the owner the holder named."""
        if self._parties.get(turn, (None,))[0] != owner or turn not in self._keys:
            raise PermissionError(f"agent {owner} is not the owner of turn {turn}'s engine, or "
                                  "has taken its key already")
        return self._agreement.public, self._agreement.seal(public, self._keys.pop(turn),
                                                            dealt(turn, OWNER))

    def corrections(self, turn: int, kind: str, spec, batch: int, count: int) -> dict:
        """The owner's pieces of one batch of turn ``turn``'s dealer material."""
        if turn not in self._dealers:
            raise ValueError(f"the engine of turn {turn} has not been dealt")
        return self._dealers[turn].corrections(material(kind, tuple(spec)), batch, count)

    def forget(self, turn: int) -> None:
        """The turn's engine is closed: its dealer goes."""
        self._dealers.pop(turn, None)
        self._keys.pop(turn, None)


class TurnDealer:
    """The dealer role as `RoleDealer` asks it, for one turn's engine."""

    def __init__(self, role, turn: int):
        self.role, self.turn = role, turn

    def submit(self, method: str, *args):
        return self.role.submit(method, self.turn, *args)


class EngineSeats:
    """A role's seats of the engines it runs with another agent, one engine per ``turn`` (a
    turn partitioned by time; the whole run partitioned by observation): the owner of the
    engine is rank `OWNER`, the holder rank `HOLDER`.  The holder sets it up (`_join`): the
    owner's seat (`open_engine`, which records the holder), the dealer's keys, each sealed to
    its agent's X25519 key, both seats linked over TLS (`join_engine` at the owner), each
    pinning the other's certificate.  The owner's side of a division (`divide`) and of a
    greedy selection (`compare`, whose result goes to rank `RESULT_TO`) run on it.

    The class using it has ``index``, ``runtime``, ``timeout_s``, ``key_seed``,
    ``_agreement``, ``view``, ``peers``, ``dealer``, ``division_owner`` and ``seat``."""

    RESULT_TO = HOLDER
    """Which engine party learns a greedy selection's position."""
    engine_holder: int | None = None
    """The agent holding the other seat of its open engine, as owner."""
    position: int | None = None
    """As owner with ``RESULT_TO = OWNER``: the last greedy selection's position."""

    def _join(self, turn: int, owner: int) -> None:
        """The holder's side: the owner's seat and its own, linked, their dealer keys dealt."""
        address, certificate = self.peers[owner].call("open_engine", turn, self.index)
        dealer_public, box = self.dealer.call("deal", turn, owner, self.index,
                                              self._agreement.public)
        self.seat = seat.make(self.runtime, HOLDER, self._engine(), self.timeout_s)
        addresses = [address, self.seat.address]
        joining = self.peers[owner].submit("join_engine", turn, addresses,
                                           self.seat.certificate)
        self.seat.connect(addresses, seat.pinned({OWNER: certificate}), self._pair_keys(turn),
                          self._agreement.open(dealer_public, box, dealt(turn, HOLDER)))
        joining.result()

    def _engine(self) -> EngineConfig:
        return EngineConfig(2, record_views=self.view.enabled)

    def _pair_keys(self, turn: int) -> dict | None:
        """The engine pair's key: agreed over the seats' link, or the seed's (INSECURE)."""
        return None if self.key_seed is None else {(OWNER, HOLDER): own_key(self.key_seed,
                                                                            "pair", turn)}

    def open_engine(self, turn: int, holder: int) -> tuple:
        """The owner's seat of turn ``turn``'s engine with agent ``holder``: (address,
        certificate); one engine at a time."""
        if self.seat is not None:
            raise RuntimeError(f"{self.name} has an engine open already")
        self.seat = seat.make(self.runtime, OWNER, self._engine(), self.timeout_s)
        self.engine_holder = holder
        return self.seat.address, self.seat.certificate

    def join_engine(self, turn: int, addresses: list, certificate: bytes) -> None:
        """The owner's side: its dealer key from the dealer (sealed to it), then its seat
        linked with the holder's (whose certificate it pins); its corrections from the
        dealer."""
        dealer_public, box = self.dealer.call("owner_box", turn, self.index,
                                              self._agreement.public)
        self.seat.connect(addresses, seat.pinned({HOLDER: certificate}), self._pair_keys(turn),
                          self._agreement.open(dealer_public, box, dealt(turn, OWNER)),
                          RoleDealer(TurnDealer(self.dealer, turn)))

    def compare(self, step: int, masked: list, slots: int, count: int, values: int,
                width: int) -> None:
        """The owner's side of a greedy selection (`greedy`): the packed masked differences
        opened, then the engine's comparison, whose result only rank `RESULT_TO` learns."""
        owner = self.division_owner
        owner.open(masked, width, slots, count)
        self.view.record(step, COMPARED, owner.opened())
        self.position = self.seat.run(first_maximum_program, owner.opened(), values, width,
                                      self.RESULT_TO)

    def divide(self, step: int, masked: list) -> tuple:
        """The owner's side of a division (`division`): y opened, the borrow on the engine,
        and (e(floor(y / K)), e(beta_A)) for the holder."""
        owner = self.division_owner
        owner.open(masked)
        self.view.record(step, OPENED, owner.opened())
        borrows = self.seat.run(borrow_program, owner.low_bits(), owner.division_bits)
        if self.view.enabled:
            self.view.record(step, ENGINE, self.seat.received())
        return owner.quotients(borrows)

    def close_engine(self, turn: int) -> None:
        """The owner's seat of its open engine closes (the holder's turn ended)."""
        self._close_seat()

    def _close_seat(self) -> None:
        if self.seat is not None:
            self.seat.close()
            self.seat = None
        self.engine_holder = None

    def close(self) -> None:
        self._close_seat()


class TimeAgent(EngineSeats, Checkpointed):
    """Agent ``index`` of ``agents`` in trial ``trial`` (``seed``: the experiment's public
    seed of the environment and, with ``key_seed``, of the agents' choices): its own key pair
    and X25519 key (``key_seed``: INSECURE seeded keys), its own selection generator (fresh OS
    entropy unless ``key_seed``), its turns as holder and its side of the turns it owns.
    ``runtime`` is where its engine seats run (``local``: in this process).

    With checkpoints it saves its own state to its own store (`checkpoint_state`); a resumed
    run makes its X25519 key and its turn's engine anew (`rejoin`)."""

    def __init__(self, index: int, agents: int, options: PPRLOptions, seed: int, trial: int,
                 key_bits: int, insecure_key_bits_ok: bool = False,
                 key_seed: int | None = None, runtime: str = "local",
                 record_views: bool = False, workers: int = 1,
                 timeout_s: float = DEFAULT_TIMEOUT_S):
        self.index, self.options, self.runtime = index, options, runtime
        self.name = f"agent-{index}"
        self.key_seed, self.timeout_s = key_seed, timeout_s
        self._agreement = KeyAgreement(own_key(key_seed, "x25519", index))
        self.encryptor = Encryptor(options.obfuscator, workers=workers)
        self.workers, self._decryptor = workers, None
        self._use_key(*generate_keypair(key_bits, insecure_key_bits_ok=insecure_key_bits_ok,
                                        seed=None if key_seed is None else
                                        key_seed * 1000 + index))
        self._entropy = None if key_seed is not None else secrets.randbits(128)
        self._env_seed = generators(seed, trial)[0]
        self._rng = agent_generator(seed, trial, index, self._entropy)
        env = tasks.make(options.task)
        self.states, self.actions = int(env.observation_space.n), int(env.action_space.n)
        env.close()
        self.reward_bound = options.task_reward_bound()
        self.rules = learner(options, 1, 1, fixed=True)         # alpha K, alpha gamma K, L
        self.q_bits, self.k_delta_bits = bounds(self.rules, options, self.reward_bound)
        self.per_step = comparisons_per_step(options, self.actions)
        self._encryptions = 2 + self.per_step * self.actions * (self.actions - 1) // 2
        """A step's encryptions as holder: the division's two, and its comparisons'."""
        self.view = ViewRecorder(record_views)
        """What it received in the clear (`ppml.privacy.views`): as owner, each masked value
        it opened (l = `OPENED`; greedy selection's: `COMPARED`) and each masked table entry
        of a key switch (l = `HANDED_OVER`); its openings on the engine (l = `ENGINE`)."""
        self.peers, self.dealer = [], None
        self.clear = self.holding = self.turn = self.player = self.seat = self.owner = None
        self.finished = False
        self.taken: dict = {}
        self.decryptions = 0
        self.offline_s = 0.0
        self.turns: list = []
        """The `EncryptedTurn.counts` of each encrypted turn it held, once over."""

    def _use_key(self, public_key, private_key) -> None:
        """Its Paillier key pair, and what decrypts with it: the owner's side of the division,
        its bulk decryptions (a key switch's table, the final table: with ``workers`` > 1
        split over pinned actors of its own node, its key loaded into each once)."""
        self.public_key, self._private_key = public_key, private_key
        self.division_owner = DivisionOwner(private_key, self.options.division_bits,
                                            self.encryptor)
        if self._decryptor is not None:
            self._decryptor.close()
        self._decryptor = Decryptor(private_key, self.workers)

    def attach(self, peers: list, dealer) -> None:
        """The roles it calls: every agent by index (``peers``), and the engine's dealer."""
        self.peers, self.dealer = list(peers), dealer

    def keys(self) -> tuple:
        """Its public keys: Paillier's and X25519's."""
        return self.public_key, self._agreement.public

    # -- the first turn, in the clear ------------------------------------------------------
    def begin_clear(self, turn: int) -> None:
        """The run's first turn: it learns from its own perceptions in the clear."""
        self.clear = learner(self.options, self.states, self.actions, fixed=True)
        self._play(turn, self.clear)

    def _play(self, turn: int, table, position: dict | None = None) -> None:
        """Its turn ``turn`` on ``table``, from its start or from a checkpoint's ``position``
        (`TurnPlayer.position`)."""
        self.turn = turn
        self.player = TurnPlayer(tasks.make(self.options.task), turn_seed(self._env_seed, turn),
                                 table, self.options, self._rng, **(position or {}))

    def play(self, steps: int) -> None:
        """``steps`` more learning steps of its current turn; an encrypted turn's obfuscators
        for them are made first, its own and the owner's (offline)."""
        if self.holding is not None:
            began = time.perf_counter()
            self.encryptor.prepare(self.holding.public_key, self._encryptions * steps)
            self.offline_s += time.perf_counter() - began
            self.peers[self.owner].call("prepare_owner", steps)
        self.player.play(steps)

    # -- an encrypted turn, as holder ------------------------------------------------------
    def begin_turn(self, turn: int, owner: int, previous: int, steps: int) -> None:
        """Turn ``turn`` of ``steps`` steps under agent ``owner``'s key: the table from the
        previous holder ``previous`` (`hand_over`; when the turn comes back to this agent, the
        owner so far, the key switch makes ``previous`` the owner), then an engine with the
        owner.  Its steps are numbered from ``turn`` x ``steps`` (its view's rows)."""
        handed = self.peers[previous].call("hand_over", turn, self.index)
        if "masked" in handed:
            if owner != previous:
                raise RuntimeError(f"{self.name}: after a key switch the owner is the previous "
                                   f"holder, agent {previous}, not agent {owner}")
            table = self._switch(turn, previous, handed["masked"], handed["negatives"])
        elif owner == self.index:
            raise RuntimeError(f"{self.name} cannot hold a table under its own key")
        else:
            table = handed["table"]
        self._hold(owner, self.peers[owner].call("keys")[0], table)
        self._join(turn, owner)
        self._play(turn, self._encrypted_turn(turn * steps))

    def _hold(self, owner: int, owner_key, table: list) -> None:
        """The table under agent ``owner``'s key ``owner_key``, held."""
        self.owner = owner
        self.holding = Holding(self.encryptor, owner_key, table, self.k_delta_bits, self.q_bits,
                               self.options.division_bits)

    def _encrypted_turn(self, first_step: int) -> EncryptedTurn:
        """Its encrypted turn on the table it holds, beside its engine seat (None until a
        resumed turn's `rejoin`), the run's steps before it ``first_step``."""
        return EncryptedTurn(self.holding, self.actions, self.rules, self.peers[self.owner],
                             self.seat, self.reward_bound, self.per_step, self.view, first_step)

    def _switch(self, turn: int, previous: int, masked: list, negatives: list) -> list:
        """The key switch at its end (module docstring): Q + R opened, encrypted under agent
        ``previous``'s key, times e_previous(-R)."""
        self.decryptions += len(masked)
        opened = self._decryptor.decrypt_raw(masked)
        self.view.record(turn * self.options.steps_per_agent, HANDED_OVER, opened)
        previous_key = self.peers[previous].call("keys")[0]
        return ops.add(previous_key, self.encryptor.encrypt(previous_key, opened), negatives)

    def end_turn(self, last: bool = False) -> None:
        """Its current turn is over: the engine with the owner closes (the table stays here
        until the next holder takes it, or after the ``last`` turn its owner opens it)."""
        self.taken[self.turn] = self.player.close()
        if self.holding is not None:
            self.turns.append(self.player.table.counts())
        self.player = None
        self.finished = last
        if self.holding is not None:
            self.peers[self.owner].call("close_engine", self.turn)
            self.dealer.call("forget", self.turn)
            self._close_seat()

    def hand_over(self, turn: int, holder: int) -> dict:
        """The table for agent ``holder``'s turn ``turn``: the first turn's table encrypted
        under its own key (Fig. 2, step 1), forgotten here; or its table re-randomised under
        the same owner's key; or, when ``holder`` is that owner, the key switch's masked table
        e_o(Q + R) and e_self(-R) (module docstring)."""
        if self.player is not None or self.finished or turn != self.turn + 1:
            raise RuntimeError(f"{self.name} hands its table over for the turn after its own "
                               f"({self.turn}) once that is over, not for turn {turn}")
        if self.clear is not None:
            values, self.clear = list(self.clear.q.ravel()), None
            return {"table": self.encryptor.encrypt(self.public_key, values)}
        holding, self.holding = self.holding, None
        if holding is None:
            raise RuntimeError(f"{self.name} holds no table to hand over for turn {turn}")
        if holder != self.owner:
            return {"table": self.encryptor.rerandomize(holding.public_key, holding.table)}
        masked, offsets = mask(self.encryptor, holding.public_key, holding.table,
                               holding.q_bound_bits)
        return {"masked": masked,
                "negatives": self.encryptor.encrypt(self.public_key, [-o for o in offsets])}

    def final_table(self) -> list:
        """EVALUATION ONLY: the table it holds after the last turn, for its owner to open."""
        if not self.finished:
            raise RuntimeError(f"{self.name} gives its table up after the last turn only")
        return self.holding.table

    # -- the owner's side ------------------------------------------------------------------
    def prepare_owner(self, steps: int) -> None:
        """Offline, before a turn of ``steps`` steps it owns: its obfuscators for the turn."""
        began = time.perf_counter()
        self.encryptor.prepare(self.public_key, 2 * steps)
        self.offline_s += time.perf_counter() - began

    def reveal(self, holder: int) -> list:
        """EVALUATION ONLY: the final table, taken from its last holder ``holder`` and
        decrypted, as signed integers (the run's output: the learned policy's Q-values)."""
        table = self.peers[holder].call("final_table")
        return signed(self._decryptor.decrypt_raw(table), self.public_key)

    # -- checkpoints (docs/reliability.md, "Checkpoints and resume") -------------------------
    def checkpoint_state(self) -> dict:
        """What it saves, all its own: its Paillier key (its private key's factors, so that
        the ciphertexts under its key stay its to open), its selection entropy and where its
        generator stands, its turn and the table it holds (the first turn's in the clear, or
        the ciphertexts under its owner's key, with the owner and the owner's public key: Fig.
        2), where its turn's learning stands (`TurnPlayer.position`, `EncryptedTurn.counts`),
        the actions of its turns, its counts and its view.  Not its X25519 key, nor its
        engine's seat: a resumed turn makes its engine anew (`rejoin`)."""
        player, holding = self.player, self.holding
        return {
            "key": self._private_key.factors(),
            "entropy": self._entropy, "rng": generator_state(self._rng),
            "turn": self.turn, "finished": self.finished, "owner": self.owner,
            "clear": None if self.clear is None else [int(v) for v in self.clear.q.ravel()],
            "holding": None if holding is None else (holding.public_key, list(holding.table)),
            "player": None if player is None else {
                "position": player.position(),
                "counts": None if holding is None else player.table.counts()},
            "taken": sorted(self.taken.items()), "turns": self.turns,
            "counts": {"encryptions": self.encryptor.encryptions,
                       "encryption_s": self.encryptor.seconds, "decryptions": self.decryptions,
                       "owner_decryptions": self.division_owner.decryptions,
                       "decryption_s": self.division_owner.decrypt_seconds,
                       "offline_s": self.offline_s},
            "view": self.view.rows}

    def restore_state(self, state: dict) -> None:
        """Go on from `checkpoint_state`'s ``state``; a turn it was playing as holder of an
        encrypted table waits for `rejoin`."""
        self._use_key(*keypair_from_factors(state["key"]))
        self._entropy = None if state["entropy"] is None else int(state["entropy"])
        restore_generator(self._rng, state["rng"])
        self.turn, self.finished = state["turn"], state["finished"]
        self.taken = {turn: list(actions) for turn, actions in state["taken"]}
        self.turns = list(state["turns"])
        self.clear = self.holding = self.player = None
        if state["clear"] is not None:
            self.clear = learner(self.options, self.states, self.actions, fixed=True)
            self.clear.q = np.array([int(v) for v in state["clear"]],
                                    dtype=object).reshape(self.states, self.actions)
        if state["holding"] is not None:
            self._hold(state["owner"], *state["holding"])
        self._restore_counts(state["counts"])
        self.view.rows = None if state["view"] is None else [tuple(r) for r in state["view"]]
        playing = state["player"]
        if playing is not None:
            table = self.clear
            if self.holding is not None:
                table = self._encrypted_turn(0)
                table.restore_counts(playing["counts"])
            self._play(self.turn, table, playing["position"])

    def _restore_counts(self, counts: dict) -> None:
        self.encryptor.encryptions, self.encryptor.seconds = counts["encryptions"], \
            counts["encryption_s"]
        self.decryptions, self.offline_s = counts["decryptions"], counts["offline_s"]
        self.division_owner.decryptions = counts["owner_decryptions"]
        self.division_owner.decrypt_seconds = counts["decryption_s"]

    def rejoin(self) -> None:
        """A resumed encrypted turn, as holder: its engine with the owner made anew (the old
        one's seats ended with the interrupted run; the engine's outputs, a division's quotient
        and a selection's position, are the same whatever its keys)."""
        if self.player is None or self.holding is None:
            raise RuntimeError(f"{self.name} has no encrypted turn to go on with")
        self._join(self.turn, self.owner)
        self.player.table.seat = self.seat

    # -- after the run ---------------------------------------------------------------------
    def report(self) -> dict:
        """Its own counts and seconds, the actions it took in each of its turns and, EVALUATION
        ONLY, the entropy of its choices (for the reference) and its view."""
        seconds = [t["seconds"] for t in self.turns]
        return {"taken": [[turn, actions] for turn, actions in sorted(self.taken.items())],
                "entropy": self._entropy,
                "encryptions": self.encryptor.encryptions,
                "decryptions": self.decryptions + self.division_owner.decryptions,
                "divisions": sum(t["divisions"] for t in self.turns),
                "comparisons": sum(t["comparisons"] for t in self.turns),
                "division_s": sum(s["division"] for s in seconds),
                "comparison_s": sum(s["comparison"] for s in seconds),
                "encryption_s": self.encryptor.seconds,
                "decryption_s": self.division_owner.decrypt_seconds,
                "offline_s": self.offline_s}

    def view_table(self):
        """EVALUATION ONLY: its recorded view (`ppml.privacy.views`)."""
        return self.view.table()

    def close(self) -> None:
        super().close()
        self._decryptor.close()
