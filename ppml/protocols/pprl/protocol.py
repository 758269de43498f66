"""PPRL partitioned by time (Sakuma et al., section 4.1, Fig. 2; section 5): SARSA and
Q-learning with random, greedy or epsilon-greedy selection on Q-values encrypted under another
agent's key, in the local runtime.

Agent 0 learns its turn in the clear (`FixedPointQ`: its Q-values are a function of its own
perceptions), encrypts the table under its key and hands it to agent 1 (Fig. 2, step 1).  In
every later turn the holder updates c(s, a) by eq. 3,

    e(K dQ) = e(alpha K L r) c(s', a')^(alpha gamma K) c(s, a)^(-alpha K),

divides it by K with the owner (`division`), and adds the quotient (eq. 4).  The reward term
e(alpha K L r), the same plaintext as e(L r)^(alpha K), rides in the division's mask
encryption (the holder knows r), so a step costs the holder two encryptions and the owner two
encryptions and one decryption, whatever the reward (a skipped encryption would time the
reward).  Greedy choices (greedy and epsilon-greedy selection) and Q-learning's max,
max_a Q(s', a) = Q(s', a*), are the holder's private greedy selection with the owner (`greedy`):
the holder learns a* (Statement 2), the owner nothing, not even how many a step needed (each
step runs the same number, `EncryptedTurn`).  Between turns the table changes hands
(`roles.Holding`, `roles.TimeAgent`).  The learned table is opened at the end (the run's
output, from which every agent reads the policy).

Each agent's random choices (actions, epsilon draws, the permutations that break ties) come from
OS entropy in a fresh run (from the public seed only in the INSECURE seeded mode); the
evaluation hands that entropy to the fixed-point reference after the run (EVALUATION ONLY,
never used by the agents), so the reference takes the same actions and must end with the same
table, entry for entry (the row's ``q_equal_reference``).  The partitioning by observation is
`observation`.  Not built yet: the Ray and federated runtimes.
"""

from __future__ import annotations

import secrets
import time

import numpy as np
from gmpy2 import mpz

import ppml.mpc as mpc
from ppml.protocols.pprl import greedy, tasks
from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.config import PPRLOptions
from ppml.crypto.paillier import ops
from ppml.protocols.pprl.division import divide
from ppml.protocols.pprl.learners import FixedPointQ, PrivateRows
from ppml.protocols.pprl.reference import (TrialResult, evaluate, generators, learner,
                                           play_turns, run_time_partitioned)
from ppml.protocols.pprl.roles import COMPARED, OPENED, Holding, TimeAgent, record_engine


def comparisons_per_step(options: PPRLOptions, actions: int) -> int:
    """The private greedy selections each step of an encrypted turn runs, whatever happens:
    up to two selections (the next action, and a new episode's first) and Q-learning's max;
    the steps that need fewer run blind ones (`EncryptedTurn`)."""
    if actions == 1:
        return 0
    return 2 * (options.selection != "random") + (options.learner == "qlearning")


class EncryptedTurn:
    """The holder's view of one turn: `update` is eqs. 3-4 with a private division, greedy
    selection and Q-learning's max a private comparison (`greedy`).

    The owner sees every comparison and every division, so the number of comparisons between
    two divisions must not depend on the holder's perceptions: an exploring step of
    epsilon-greedy makes none, a step that ends an episode makes one more (the new episode's
    first action).  Each step therefore runs exactly `comparisons_per_step` of them, filling up
    with blind ones: the same masked pairs of differences over ciphertexts of 0 (the owner's
    y = 0 + o is distributed as any other, within 2^-kappa), whose result the holder drops."""

    def __init__(self, holding: Holding, actions: int, rules: FixedPointQ, ctx, reward_bound,
                 per_step: int):
        self.holding, self.actions, self.rules, self.ctx = holding, actions, rules, ctx
        self.reward_bound, self.per_step = reward_bound, per_step
        self.q = PrivateRows(self)
        self.divisions = self.comparisons = self.step = 0
        self.seconds = {"division": 0.0, "comparison": 0.0}
        """Online time in the private divisions and comparisons (their encryptions,
        decryptions and engine rounds included)."""
        self._since = 0
        """Comparisons since the last division."""

    def _compare(self, ciphertexts: list) -> int:
        owner = self.holding.owner
        began = time.perf_counter()
        position = greedy.first_maximum(owner.division_owner, self.holding.greedy, self.ctx,
                                        ciphertexts)
        self.seconds["comparison"] += time.perf_counter() - began
        owner.view.record(self.step + 1, COMPARED, owner.division_owner.opened())
        self.comparisons += 1
        self._since += 1
        return position

    def first_maximum(self, state: int, order) -> int:
        """The position in ``order`` of the first maximum of Q(state, .), which the holder
        learns (Statement 2)."""
        if self.actions == 1:
            return 0
        table = self.holding.table
        return self._compare([table[state * self.actions + int(a)] for a in order])

    def _target(self, s2: int, a2: int) -> int:
        """The table index of Q(s', a') (SARSA) or of max_a Q(s', a) (Q-learning)."""
        if self.rules.learner == "sarsa":
            return s2 * self.actions + a2
        return s2 * self.actions + self.first_maximum(s2, np.arange(self.actions))

    def update(self, s: int, a: int, r: float, s2: int, a2: int) -> None:
        if not abs(r) <= self.reward_bound:
            raise ValueError(f"a reward of {r!r} is outside pprl.reward_bound="
                             f"{self.reward_bound}")
        table, public_key = self.holding.table, self.holding.owner.public_key
        f, owner = self.rules, self.holding.owner
        here, there = s * self.actions + a, self._target(s2, a2)
        if self._since > self.per_step:
            raise RuntimeError(f"a step ran {self._since} comparisons, more than the "
                               f"{self.per_step} that every step shows the owner")
        while self._since < self.per_step:
            self._compare([mpz(1)] * self.actions)                     # blind: e(0), r = 1
        self._since = 0
        k_delta = ops.dot(public_key, [table[there], table[here]],
                          [f.alpha_gamma_k, -f.alpha_k])                    # eq. 3, and below
        began = time.perf_counter()
        (delta,) = divide(owner.division_owner, self.holding.division, self.ctx, [k_delta],
                          [f.alpha_k * f.scaled_reward(r)])                 # its reward term
        self.seconds["division"] += time.perf_counter() - began
        (table[here],) = ops.add(public_key, [table[here]], [delta])      # eq. 4
        step = self.step = self.step + 1
        owner.view.record(step, OPENED, owner.division_owner.opened())
        record_engine(self.ctx, step, [owner.view, self.holding.agent.view])  # ranks 0, 1
        self.divisions += 1


def run_time_protocol(options: PPRLOptions, agents: int, seed: int, trial: int,
                      key_bits: int, insecure_key_bits_ok: bool = False,
                      key_seed: int | None = None, record_views: bool = False,
                      workers: int = 1) -> TrialResult:
    """One trial of PPRL partitioned by time among ``agents``; the row carries the
    comparison with the fixed-point reference of the same trial.  ``key_seed``: INSECURE
    seeded keys (and the engine's), for reproducible experiments.  With ``record_views`` the
    result's ``views`` has each agent's view (`roles.TimeAgent.view`); ``workers`` > 1 fills
    each agent's obfuscator pools with that many Ray tasks while the steps run (Ray must be
    up)."""
    reward_bound = options.task_reward_bound()
    env = tasks.make(options.task)
    states, actions = env.observation_space.n, env.action_space.n
    selection = None if key_seed is not None else secrets.randbits(128)
    env_seed, rng, evaluation = generators(seed, trial, selection)
    rules = learner(options, 1, 1, fixed=True)              # alpha K, alpha gamma K, L
    q_bits, k_delta_bits = bounds(rules, options, reward_bound)
    start = time.perf_counter()
    parties = [TimeAgent(i, key_bits, insecure_key_bits_ok, key_seed, options.division_bits,
                         options.obfuscator, record_views, workers) for i in range(agents)]
    ctx = mpc.local_context(2, seed=key_seed, record_views=record_views)
    setup_s = time.perf_counter() - start
    first = learner(options, states, actions, fixed=True)
    turns, offline = [], [0.0]
    compared = comparisons_per_step(options, actions)
    per_step = 2 + compared * actions * (actions - 1) // 2   # the holder's encryptions a step

    def each_turn():
        yield first                                         # agent 0, in the clear
        holding = Holding(parties[1], parties[0], parties[0].encrypt_table(list(first.q.ravel())),
                          k_delta_bits, q_bits)
        for holder in range(1, agents):
            if holder > 1:
                holding = hand_over(holding, parties[holder], k_delta_bits, q_bits)
            began = time.perf_counter()                     # offline: each step's obfuscators
            for agent, count in ((holding.agent, per_step), (holding.owner, 2)):
                agent.encryptor.prepare(holding.owner.public_key,
                                        count * options.steps_per_agent)
            offline[0] += time.perf_counter() - began
            turns.append(EncryptedTurn(holding, actions, rules, ctx, reward_bound, compared))
            yield turns[-1]

    taken = play_turns(env, env_seed, each_turn(), options, rng)
    holding = turns[-1].holding if turns else None
    final = first if holding is None else _opened(holding, first, options, states, actions)
    seconds = time.perf_counter() - start
    reference = run_time_partitioned(options, "crl_fixed", agents, seed, trial, selection)
    counts = [p.counts() for p in parties]
    result = evaluate(env, final, evaluation, trial, seconds,
                    q_equal_reference=bool(np.array_equal(final.q, reference.table.q)),
                    action_agreement=float(np.mean(np.array(taken) ==
                                                   np.array(reference.taken))),
                    setup_s=setup_s, online_s=seconds - setup_s - offline[0],
                    offline_s=offline[0],
                    encryptions=sum(e for e, _ in counts),
                    decryptions=sum(d for _, d in counts),
                    divisions=sum(t.divisions for t in turns),
                    comparisons=sum(t.comparisons for t in turns),
                    **split([t.seconds for t in turns], parties))
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


def hand_over(holding: Holding, holder: TimeAgent, k_delta_bits: int, q_bits: int) -> Holding:
    """The table passes from ``holding.agent`` to ``holder`` (`roles`): re-randomised if the
    owner stays another agent, else re-encrypted under the previous holder's key."""
    previous, owner = holding.agent, holding.owner
    if owner is not holder:
        return Holding(holder, owner, holding.rerandomized(), k_delta_bits, q_bits)
    masked, negatives = holding.masked()
    reencrypted = owner.reencrypt(owner.open_masked(masked, holder.index), previous.public_key)
    return Holding(holder, previous, ops.add(previous.public_key, reencrypted, negatives),
                   k_delta_bits, q_bits)


def _opened(holding: Holding, like: FixedPointQ, options: PPRLOptions, states: int,
            actions: int) -> FixedPointQ:
    """EVALUATION ONLY: the final table, decrypted by its owner, as signed integers."""
    n = int(holding.owner.public_key.n)
    values = [int(v) - n if v > n // 2 else int(v) for v in holding.owner.reveal(holding.table)]
    table = learner(options, states, actions, fixed=True)
    table.q = np.array(values, dtype=object).reshape(states, actions)
    return table
