"""PPRL partitioned by observation (Sakuma et al., section 4.2, Fig. 3, eqs. 5-9; section 5.1,
Fig. 4): SARSA and Q-learning with random, greedy or epsilon-greedy selection among m >= 2
agents on a Q-table encrypted under an (m, m)-threshold Paillier key, in the local runtime.

Every step each agent i perceives its own state s_i, takes its own action a_i and gets its own
reward r_i; the learner is CRL's, over the joint state and action with the global reward
r = sum r_i.  Agent 0 (the paper's A) keeps the encrypted table c(s, a) = e(Q(s, a)), its axes
(s_0, ..., s_(m-1), a_0, ..., a_(m-1)).  A step's update (Fig. 3, generalised along a chain):

* 4(a): agent 0 sends the slices of the table at its (s_0, a_0) and (s_0', a_0'),
  re-randomised (eqs. 6-7); each agent 1 ... m-2 keeps the sub-slices at its own pair,
  re-randomises them and passes them on; the last agent (the paper's B) ends with
  c(s_t, a_t) and c(s_(t+1), a_(t+1)).  Every agent but the last sends X^i = e(alpha K L r_i).
* 4(b): the last agent computes e(K dQ) = prod X^i c(s', a')^(alpha gamma K) c(s, a)^(-alpha K)
  with its own reward term folded into the division's mask (eq. 5).
* 4(c): the private division (`division`) with agent 0 as its owner, whose decryption is the
  threshold decryption: every agent sends its decryption share of the masked value
  (`JointDecryption`); the borrow is compared on the engine between agent 0 and the last agent.
* 4(d): the last agent sends e(dQ') at its own pair and e(0) at every other pair of its own
  (eq. 8); each agent m-2 ... 1 places what it received at its own pair and e(0) elsewhere
  and passes it back, so agent 0 gets fresh ciphertexts for its whole slice.
* 4(e): agent 0 multiplies them into its slice (eq. 9): only c(s_t, a_t) changes.

With m = 2 this is Fig. 3 itself, except that eq. 8's Delta c is sent for agent 0's slice
only (the rest of the paper's h, j are e(0) that eq. 9 never uses).

What each agent learns: agent 0 the masked values y of the divisions and its view of the
comparisons; every other agent ciphertexts under the joint key (fresh or re-randomised, so it
cannot link them across steps) and its view of the comparisons (the last agent).  The key is
made by a dealer in its own trust domain (`deal_key`), who hands each agent its share and
forgets the key.  Each agent's random actions come from its own OS entropy in a fresh run; the
evaluation hands it to the fixed-point reference afterwards (EVALUATION ONLY).
"""

from __future__ import annotations

import time

import numpy as np

import ppml.mpc as mpc
from ppml.crypto.paillier import generate_keypair, ops
from ppml.crypto.paillier.threshold import combine, deal
from ppml.crypto.rng import Stream, fresh_key
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl import greedy, tasks
from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.division import DivisionHolder, DivisionOwner, Encryptor, divide
from ppml.protocols.pprl.greedy import GreedyHolder
from ppml.protocols.pprl.learners import JointRow, select_joint
from ppml.protocols.pprl.reference import (TrialResult, fresh_selection, learner,
                                           observation_generators, run_observation_partitioned)
from ppml.protocols.pprl.turn import COMPARED, OPENED, record_engine


def deal_key(agents: int, key_bits: int, insecure_key_bits_ok: bool = False,
             seed: int | None = None) -> list:
    """The dealer (its own trust domain): a fresh Paillier key pair and its (m, m) shares, one
    per agent (`threshold.deal`); the key pair goes out of scope here, so the dealer keeps
    nothing.  ``seed``: INSECURE seeded keys and shares."""
    _, private_key = generate_keypair(key_bits, insecure_key_bits_ok=insecure_key_bits_ok,
                                      seed=None if seed is None else seed * 1000 + 999)
    return deal(private_key, agents, seed)


class ObservationAgent:
    """Agent ``index`` partitioned by observation: its key share (from the dealer), its
    encryptions under the joint key, and what it sees (``view``)."""

    def __init__(self, index: int, key_share, obfuscator: str = "full",
                 record_views: bool = False, workers: int = 1):
        self.index, self._key_share = index, key_share
        self.public_key = key_share.public_key
        self.encryptor = Encryptor(obfuscator, workers=workers)
        self.view = ViewRecorder(record_views)
        """Agent 0: each masked value it opens (l = `OPENED`); agent 0 and the last agent:
        the engine's openings (l = `ENGINE`)."""
        self.decryption_shares = 0
        self._decrypt_seconds = 0.0

    def decryption_share(self, ciphertexts: list):
        """Its share of the threshold decryption of ``ciphertexts`` (`threshold.KeyShare`)."""
        began = time.perf_counter()
        self.decryption_shares += len(ciphertexts)
        share = self._key_share.partial_decrypt(ciphertexts)
        self._decrypt_seconds += time.perf_counter() - began
        return share

    def decrypt_seconds(self) -> float:
        """Time spent on its decryption shares."""
        return self._decrypt_seconds

    def encrypt(self, values: list) -> list:
        return self.encryptor.encrypt(self.public_key, values)

    def narrow(self, block: np.ndarray, state: int, action: int):
        """4(a): the sub-block of ``block`` (axes: this agent's and later agents' states, then
        their actions) at this agent's (state, action), re-randomised; the last agent's is
        one ciphertext, kept as it is."""
        axes = block.ndim // 2
        index = [slice(None)] * block.ndim
        index[0], index[axes] = state, action
        part = block[tuple(index)]
        return part if not isinstance(part, np.ndarray) else self._rerandomized(part)

    def _rerandomized(self, block: np.ndarray) -> np.ndarray:
        out = np.empty(block.shape, dtype=object)
        out.ravel()[:] = self.encryptor.rerandomize(self.public_key, list(block.ravel()))
        return out

    def permuted(self, block: np.ndarray, state: int, order, last: bool):
        """Fig. 4, step 1-2: the sub-block of ``block`` (axes: this agent's and later agents'
        states, then every agent's actions) at this agent's state, its own action axis put in
        its ``order`` (always axis m - 1 of the sub-block), re-randomised unless this is the
        last agent, who keeps it."""
        agents = (block.ndim + self.index) // 2          # block.ndim = 2 m - index
        part = np.take(block[state], order, axis=agents - 1)
        return part if last else self._rerandomized(part)

    def widen(self, received, states: int, actions: int, state: int, action: int) -> np.ndarray:
        """4(d): a block over this agent's ``states`` x ``actions`` and the later agents' axes
        of ``received``: ``received`` at (state, action), fresh e(0) everywhere else."""
        inner = received
        if not isinstance(received, np.ndarray):             # the last agent's: one ciphertext
            inner = np.empty((), dtype=object)
            inner[()] = received
        half = inner.ndim // 2
        shape = (states,) + inner.shape[:half] + (actions,) + inner.shape[half:]
        index = [slice(None)] * len(shape)
        index[0], index[half + 1] = state, action
        zeros = np.ones(shape, dtype=bool)
        zeros[tuple(index)] = False
        fresh = np.empty(int(zeros.sum()), dtype=object)
        fresh[:] = self.encrypt([0] * fresh.size)
        out = np.empty(shape, dtype=object)
        out[zeros] = fresh
        out[tuple(index)] = inner
        return out


class JointDecryption:
    """Agent 0's decryption under the threshold key (`division.DivisionOwner`'s decryptor):
    its own decryption share and each other agent's, which that agent computes with its own
    share and sends, combined (`threshold.combine`)."""

    def __init__(self, agent: ObservationAgent, others: list):
        self.agent, self.others = agent, others
        self.public_key = agent.public_key

    def decrypt_raw(self, ciphertexts: list) -> list:
        return combine(self.public_key, [p.decryption_share(ciphertexts)
                                         for p in [self.agent, *self.others]])


class EncryptedTable:
    """Agent 0's table under the joint key and the chain of one step's update (Fig. 3)."""

    def __init__(self, agents: list, sizes: list, moves: list, rules, ctx, k_delta_bits: int,
                 q_bits: int):
        self.agents, self.sizes, self.moves, self.rules, self.ctx = \
            agents, sizes, moves, rules, ctx
        keeper, last = agents[0], agents[-1]
        cells = int(np.prod(sizes)) * int(np.prod(moves))
        self.table = np.empty(tuple(sizes) + tuple(moves), dtype=object)     # step 1
        self.table.ravel()[:] = keeper.encrypt([0] * cells)
        self.owner = DivisionOwner(JointDecryption(keeper, agents[1:]), rules.division_bits,
                                   keeper.encryptor)
        self.holder = DivisionHolder(keeper.public_key, k_delta_bits, rules.division_bits,
                                     last.encryptor)
        self.greedy = GreedyHolder(keeper.public_key, q_bits, last.encryptor)
        self.divisions = self.comparisons = self.step = 0
        self.seconds = {"division": 0.0, "comparison": 0.0}

    def _joint_maximum(self, states: list, orders: list) -> tuple:
        """Fig. 4's chain and comparison at the joint state ``states``: agent 0 sends its slice
        at s_0 with its action axis in its order; each agent keeps the sub-slice at its state
        with its action axis in its order and passes it on, re-randomised; the last agent,
        holding the joint actions in the agents' orders, finds their first maximum with agent 0
        (`greedy`), who alone learns its position.  Returns (the last agent's block, the
        position)."""
        agents, block = self.agents, self.table
        for i, (agent, state, order) in enumerate(zip(agents, states, orders)):
            block = agent.permuted(block, state, order, last=i == len(agents) - 1)
        began = time.perf_counter()
        position = greedy.first_maximum(self.owner, self.greedy, self.ctx, list(block.ravel()),
                                        to=0)
        self.seconds["comparison"] += time.perf_counter() - began
        agents[0].view.record(self.step + 1, COMPARED, self.owner.opened())
        self.comparisons += 1
        return block, position

    def first_maximum_joint(self, states: list, orders: list) -> list:
        """Fig. 4 for m agents: each agent's greedy action at the joint state ``states``, ties
        broken by the agents' own permutations ``orders`` (`learners.select_joint`).  Agent 0
        tells each agent the position of its action in its own order (uniform, whatever the
        action)."""
        _, position = self._joint_maximum(states, orders)
        places = np.unravel_index(position, self.moves)
        return [int(order[p]) for order, p in zip(orders, places)]

    def maximum(self, states: list):
        """Q-learning's max_a Q(s', a) (eq. 1) under the joint key: Fig. 4 at s' with
        permutations each agent draws from its OS entropy (the max needs no tie-break, so the
        reference draws nothing), after which agent 0 tells the last agent the position, whose
        ciphertext in its block is e(max).  The last agent learns its own greedy action at s'
        (Statement 2) and the others' positions in their fresh orders (uniform)."""
        orders = [Stream(fresh_key()).permutation(m) for m in self.moves]
        block, position = self._joint_maximum(states, orders)
        return block.ravel()[position]

    def update(self, states: list, actions: list, rewards: list, after: list,
               following: list) -> None:
        """One step of Fig. 3 for the agents' own (s_i, a_i, r_i, s_i', a_i')."""
        f, agents = self.rules, self.agents
        sarsa = f.learner == "sarsa"
        current, upcoming = self.table, self.table if sarsa else self.maximum(after)
        for agent, s, a, s2, a2 in zip(agents, states, actions, after, following):   # 4(a)
            current = agent.narrow(current, s, a)
            if sarsa:
                upcoming = agent.narrow(upcoming, s2, a2)
        terms = [agent.encrypt([f.alpha_k * f.scaled_reward(r)])[0]
                 for agent, r in zip(agents[:-1], rewards[:-1])]
        k_delta = ops.dot(self.agents[0].public_key, [upcoming, current, *terms],
                          [f.alpha_gamma_k, -f.alpha_k] + [1] * len(terms))       # 4(b), eq. 5
        began = time.perf_counter()
        (delta,) = divide(self.owner, self.holder, self.ctx, [k_delta],
                          [f.alpha_k * f.scaled_reward(rewards[-1])])            # 4(c)
        self.seconds["division"] += time.perf_counter() - began
        block = delta
        for i in range(len(agents) - 1, 0, -1):                                  # 4(d), eq. 8
            block = agents[i].widen(block, self.sizes[i], self.moves[i], states[i], actions[i])
        index = [slice(None)] * self.table.ndim                                  # 4(e), eq. 9
        index[0], index[len(self.sizes)] = states[0], actions[0]
        mine = self.table[tuple(index)]
        updated = np.empty(mine.size, dtype=object)
        updated[:] = ops.add(agents[0].public_key, list(mine.ravel()), list(block.ravel()))
        self.table[tuple(index)] = updated.reshape(mine.shape)
        self.step += 1
        self.divisions += 1
        agents[0].view.record(self.step, OPENED, self.owner.opened())
        record_engine(self.ctx, self.step, [agents[0].view, agents[-1].view])   # ranks 0, 1

    def opened(self, options: PPRLOptions):
        """EVALUATION ONLY: the final table, jointly decrypted, as the reference's
        `FixedPointQ` (joint state x joint action, signed integers)."""
        n = int(self.agents[0].public_key.n)
        values = self.owner.decryptor.decrypt_raw(list(self.table.ravel()))
        table = learner(options, int(np.prod(self.sizes)), int(np.prod(self.moves)), fixed=True)
        table.q = np.array([int(v) - n if v > n // 2 else int(v) for v in values],
                           dtype=object).reshape(table.q.shape)
        return table


def run_observation_protocol(options: PPRLOptions, agents: int, seed: int, trial: int,
                             key_bits: int, insecure_key_bits_ok: bool = False,
                             key_seed: int | None = None, record_views: bool = False,
                             workers: int = 1) -> TrialResult:
    """One trial of PPRL partitioned by observation among ``agents``: per-episode rows as the
    reference's, the last one with the comparison against the fixed-point reference of the
    same trial (``q_equal_reference``, ``action_agreement``) and the costs.  ``key_seed``:
    INSECURE seeded keys; ``workers`` > 1: Ray tasks fill the obfuscator pools."""
    env = tasks.make(options.task, agents)
    sizes = [int(n) for n in env.observation_space.nvec]
    moves = [int(n) for n in env.action_space.nvec]
    reward_bound = options.task_reward_bound(agents)
    selection = None if key_seed is not None else fresh_selection(agents + 1)
    env_seed, coin, rngs = observation_generators(seed, trial, agents, selection)
    rules = learner(options, 1, 1, fixed=True)
    q_bits, k_delta_bits = bounds(rules, options, reward_bound)
    start = time.perf_counter()
    parties = [ObservationAgent(i, share, options.obfuscator, record_views, workers)
               for i, share in enumerate(deal_key(agents, key_bits, insecure_key_bits_ok,
                                                  key_seed))]
    ctx = mpc.local_context(2, seed=key_seed, record_views=record_views)
    setup_s = time.perf_counter() - start
    table = EncryptedTable(parties, sizes, moves, rules, ctx, k_delta_bits, q_bits)
    per_step = _encryptions_per_step(sizes, moves, options.selection != "random",
                                     options.learner == "qlearning")
    offline = [0.0]

    def prepare():                                       # offline: the episode's obfuscators
        began = time.perf_counter()
        for party, count in zip(parties, per_step):
            party.encryptor.prepare(party.public_key, count * options.episode_steps)
        offline[0] += time.perf_counter() - began

    rows, taken = play_episodes(env, env_seed, options, moves, coin, rngs, table, reward_bound,
                                trial, prepare)
    offline = offline[0]
    final = table.opened(options)
    seconds = time.perf_counter() - start
    env.close()
    rows[-1].update(
        **against_reference(options, seed, trial, agents, selection, final, taken),
        setup_s=setup_s, online_s=seconds - setup_s - offline, offline_s=offline,
        encryptions=sum(p.encryptor.encryptions for p in parties),
        decryptions=sum(p.decryption_shares for p in parties), divisions=table.divisions,
        comparisons=table.comparisons, **split([table.seconds], parties))
    result = TrialResult(rows, seconds, final, taken)
    result.views = {f"agent-{p.index}": p.view.table() for p in parties} if record_views \
        else {}
    return result


def split(seconds: list, parties: list) -> dict:
    """The online time's parts for the row: in divisions and in comparisons (each with its
    encryptions, decryptions and engine rounds), and in all encryptions and all decryptions."""
    return {"division_s": sum(s["division"] for s in seconds),
            "comparison_s": sum(s["comparison"] for s in seconds),
            "encryption_s": sum(p.encryptor.seconds for p in parties),
            "decryption_s": sum(p.decrypt_seconds() for p in parties)}


def play_episodes(env, env_seed: int, options: PPRLOptions, moves: list, coin, rngs: list,
                  table, reward_bound: float, trial: int, prepare=None) -> tuple:
    """The agents' episodes on a private joint ``table`` (its ``update`` and its
    ``first_maximum_joint``), each agent choosing from its own generator as the reference's
    joint methods do (`learners.select_joint`, epsilon-greedy's public ``coin`` apart);
    ``prepare`` runs before each episode.  Returns (the per-episode rows, the joint actions
    taken)."""
    rows, taken = [], []
    env.reset(seed=env_seed)
    for episode in range(options.episodes):
        if prepare is not None:
            prepare()
        observation, _ = env.reset()
        states = [int(s) for s in observation]
        actions = select_joint(options.selection, JointRow(table, states), moves, rngs,
                               options.epsilon, coin)
        total = 0.0
        for _ in range(options.episode_steps):
            observation, reward, _, _, info = env.step(np.array(actions, dtype=np.int64))
            if not abs(reward) <= reward_bound:
                raise ValueError(f"a global reward of {reward!r} is outside "
                                 f"pprl.reward_bound={reward_bound}")
            taken.append(tuple(actions))
            total += reward
            after = [int(s) for s in observation]
            following = select_joint(options.selection, JointRow(table, after), moves, rngs,
                                     options.epsilon, coin)
            table.update(states, actions, list(info["rewards"]), after, following)
            states, actions = after, following
        rows.append({"trial": trial, "episode": episode, "steps_to_goal": None,
                     "reached_goal": None, "episode_reward": total / options.episode_steps})
    return rows, taken


def against_reference(options: PPRLOptions, seed: int, trial: int, agents: int,
                      selection: list | None, final, taken: list) -> dict:
    """EVALUATION ONLY: the fixed-point reference run with the agents' own randomness
    (``selection``, handed over after the run): does the protocol's opened ``final`` table
    equal its table entry for entry, and in what share of steps were the joint actions
    ``taken`` the same."""
    reference = run_observation_partitioned(options, "crl_fixed", seed, trial, agents, selection)
    return {"q_equal_reference": bool(np.array_equal(final.q, reference.table.q)),
            "action_agreement": float(np.mean([a == b for a, b
                                               in zip(taken, reference.taken)]))}


def _encryptions_per_step(sizes: list, moves: list, greedy_choices: bool = False,
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
