"""The plaintext reference: Fig. 3 (generic cumulative reward maximisation) with Fig. 4's
algorithms, driven by the same random streams as a Samba run (Theorem 2).

The randomness Samba spreads over its participants is drawn here from the same streams:
sigma_t from the Controller's stream is argmax's tie-breaking (and epsilon-greedy's random arm,
the permuted list's first position), u drives probability matching (from Comp's stream under
mask=paper, from the Controller's under mask=mpc), theta_i from DO_i's own stream, x from
seed_eps.  Scores are never masked or encrypted here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ppml.protocols.samba.policies import MATCH, AlgorithmSpec, Arm, select_arm
from ppml.protocols.samba.draws import BetaDraws, Permutations, Words
from ppml.protocols.samba.keys import SambaKeys, streams
from ppml.protocols.samba.selection import U_BITS, match_position, match_words, score_key
from ppml.crypto.rng import Stream


@dataclass
class Trace:
    """Arms pulled at t = 1..N (index t - 1) and their rewards."""

    arms: list
    rewards: list

    @property
    def cumulative_reward(self) -> int:
        return int(sum(self.rewards))


def run_reference(data, horizon: int, spec: AlgorithmSpec, keys: SambaKeys,
                  mask: str = "mpc") -> Trace:
    """Fig. 3: pull each arm once (t = 1..K), then one arm per step t in [K + 1, N].

    ``mask`` (one of `config.MASKS`) picks the probability matching that Samba runs: ``paper``
    compares floats against Comp's u (`select_arm`), ``mpc`` the fixed-point keys of the
    selection on shares against the Controller's u (`selection.match_position`).  Argmax is
    the same float argmax either way."""
    arms = len(data.means)
    if horizon < arms:
        raise ValueError(f"horizon must be >= arms ({arms}): Fig. 3 pulls every arm once, "
                         f"got {horizon}")
    policy = spec.policy(arms)
    state = [Arm(BetaDraws(streams(keys.owner_key(i))[0])) for i in range(arms)]
    permutations = Permutations(streams(keys.controller_key())[0], arms)
    selection = Words(streams(keys.comp_key())[0])
    match = match_words(keys.controller_key())
    bound = policy.match_bound()
    explore = Words(Stream(keys.explore_key()))
    pulled, rewards = [], []

    def pull(t, arm):
        reward = int(data.reward(t - 1, arm))
        state[arm].record(reward)
        pulled.append(arm)
        rewards.append(reward)

    for i in range(arms):
        pull(i + 1, i)
    for a in state:
        a.p = policy.initial_p()
    for t in range(arms + 1, horizon + 1):
        if policy.explores(t, explore):
            pull(t, permutations.next()[0][0])
            continue
        for l in range(1, policy.iterations + 1):
            sigma = permutations.next()[0]
            scores = policy.compute_scores(t, l, state)
            kind = policy.kind(l)
            permuted = [scores[a] for a in sigma]
            if kind == MATCH and mask == "mpc":
                position = match_position([score_key(kind, x, bound) for x in permuted],
                                          match.word() >> (64 - U_BITS))
            else:
                position = select_arm(kind, permuted,
                                      selection.uniform() if kind == MATCH else None)
            chosen = sigma[position]
            if l < policy.iterations:
                policy.after_iteration(l, state, [int(i == chosen) for i in range(arms)])
        pull(t, chosen)
    return Trace(pulled, rewards)
