"""Samba in the local runtime: every algorithm pulls the reference's arm at every step and DC
decrypts the reference's cumulative reward (Theorem 2); op counts of Theorem 4; refusals."""

import os

import numpy as np
import pytest

from ppml.protocols.samba.reference import run_reference
from ppml.protocols.samba.policies import ALGORITHMS, AlgorithmSpec
from ppml.protocols.samba.config import SambaConfig
from ppml.protocols.samba.protocol import owner_groups, run_samba
from ppml.protocols.samba.keys import SambaKeys
from ppml.protocols.samba.roles import (Comp, DataOwner, DataOwnerGroup, hand_over_context,
                                        unpack_scores)
from ppml.protocols.samba.wire import SCORE_BYTES, unpack_bits
from ppml.crypto.aead import MessageRejected
from ppml.crypto.agreement import KeyAgreement
from ppml.crypto.paillier import generate_keypair


class ToyArms:
    """Stand-in of ppml.data.bernoulli_items.BernoulliArms for protocol tests."""

    def __init__(self, means, horizon, seed=0):
        self.name, self.means = "toy", np.asarray(means, dtype=float)
        self.item_ids = np.arange(len(means))
        self._draws = np.random.default_rng(seed).random((horizon, len(means)))

    def reward(self, t, arm):
        return int(self._draws[t, arm] < self.means[arm])

    def arm(self, index):
        return OneArm(self, index)


class OneArm:
    """What one DO holds of ToyArms: its own arm's rewards."""

    def __init__(self, arms, index):
        self.index, self._draws, self._mean = index, arms._draws[:, index].copy(), arms.means[index]

    def reward(self, t):
        return int(self._draws[t] < self._mean)


def setup_for(name, seed, horizon, **options):
    spec = AlgorithmSpec(name, epsilon=0.2, softmax_tau=0.05)
    return SambaConfig(horizon, spec, key_bits=512,
                      insecure_key_bits_ok=True, seed=seed, **options)


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("seed, mask", [(1, "mpc"), (2, "mpc"), (1, "paper")])
def test_secure_run_matches_the_reference(name, seed, mask):
    data = ToyArms([0.3, 0.5, 0.5, 0.7, 0.2], 60, seed)
    setup = setup_for(name, seed, 60, owners_per_actor=2, mask=mask)
    secure = run_samba(data, setup)
    reference = run_reference(data, 60, setup.spec, SambaKeys.for_seed(seed), mask)
    assert secure.arms == reference.arms
    assert secure.cumulative_reward == reference.cumulative_reward


def test_operation_counts_follow_theorem_4():
    arms, horizon = 4, 30
    run = run_samba(ToyArms([0.2, 0.4, 0.6, 0.8], horizon), setup_for("pursuit", 3, horizon))
    steps = (horizon - arms) * 2                      # nb_A = 2
    assert run.counts["aes_gcm_ops"] == steps * 4 * arms     # 2K enc + 2K dec per iteration
    assert run.counts["paillier_encryptions"] == arms
    assert run.counts["paillier_decryptions"] == 1
    assert set(run.seconds) == {"controller_s", "comp_s", "dc_s", "keygen_s", "owner_mean_s",
                                "owner_max_s", "offline_s", "setup_s", "steps_s", "end_s"}
    assert 0 < run.seconds["offline_s"] <= run.seconds["setup_s"]
    assert run.seconds["setup_s"] + run.seconds["steps_s"] + run.seconds["end_s"] <= run.wall_s


def test_exploration_shortcut_sends_no_scores():
    data = ToyArms([0.2, 0.4, 0.6], 40)
    spec = AlgorithmSpec("eps_greedy", epsilon=1.0)
    run = run_samba(data, SambaConfig(40, spec, key_bits=512, insecure_key_bits_ok=True,
                                      seed=4))
    assert run.counts["aes_gcm_ops"] == (40 - 3) * 2 * 3      # only the bits
    assert run.arms == run_reference(data, 40, spec, SambaKeys.for_seed(4)).arms


@pytest.mark.parametrize("mask", ["mpc", "paper"])
def test_without_crypto_same_run_no_operations(mask):
    """crypto=False drops AES-GCM and Paillier; the selection on shares stays (it is how
    mask=mpc hides the scores, not an encryption)."""
    data = ToyArms([0.3, 0.6, 0.5], 40)
    plain = run_samba(data, setup_for("ucb", 5, 40, crypto=False, mask=mask))
    secure = run_samba(data, setup_for("ucb", 5, 40, mask=mask))
    assert plain.arms == secure.arms
    assert plain.counts == {"aes_gcm_ops": 0, "paillier_encryptions": 0,
                            "paillier_additions": 0, "paillier_decryptions": 0,
                            "selection_rounds": secure.counts["selection_rounds"],
                            "selection_bytes": secure.counts["selection_bytes"]}
    assert (plain.counts["selection_rounds"] > 0) == (mask == "mpc")


def test_placement_of_owners():
    assert [list(g) for g in owner_groups(3, None, 8)] == [[0], [1], [2]]
    assert [list(g) for g in owner_groups(3, None, 1)] == [[0, 1, 2]]
    assert [list(g) for g in owner_groups(10, None, 2)] == [list(range(5)), list(range(5, 10))]
    assert len(owner_groups(100, None, 8)) == 8 and len(owner_groups(100, 50, 8)) == 2


def test_short_horizon_and_2048_bit_policy_are_refused():
    with pytest.raises(ValueError, match="horizon must be >= arms"):
        run_samba(ToyArms([0.5] * 4, 4), setup_for("ucb", 1, 3))
    with pytest.raises(ValueError, match="key_bits must be >= 2048"):
        run_samba(ToyArms([0.5] * 2, 4), SambaConfig(4, AlgorithmSpec("ucb"), key_bits=512))


def participants(arms=3, seed=6):
    """A DO group and Comp set up as the Controller sets them up under mask=paper (keys
    relayed sealed)."""
    spec, run_id = AlgorithmSpec("ucb"), b"r" * 16
    group, comp = DataOwnerGroup(), Comp(arms, spec, run_id, True, seed, mask="paper")
    publics = group.join([ToyArms([0.5] * arms, 20).arm(i) for i in range(arms)], seed,
                         mask="paper")
    aes, alpha = comp.share_enc_key(publics), group.share_alpha(publics, run_id)
    group.setup({i: {"aes-gcm": aes[i], **({"masks": alpha[i]} if i else {})}
                 for i in range(arms)},
                {"aes-gcm": ("Comp", comp.public()), "masks": ("DO0", publics[0])}, bytes(32),
                run_id, arms, 20, spec, True,
                generate_keypair(512, insecure_key_bits_ok=True, seed=seed)[0])
    return group, comp


def test_each_data_owner_is_its_own_object_with_its_own_state_and_secrets():
    group, _ = participants()
    owners = group.owners
    assert all(type(o) is DataOwner and not hasattr(o, "__dict__") for o in owners)
    for field in ("draws", "own_key", "agreement", "pool", "pulled"):
        assert len({id(getattr(o, field)) for o in owners}) == len(owners)
    assert [o.pulled for o in owners] == [[1], [2], [3]] and [o.n for o in owners] == [1, 1, 1]
    assert [o.rewards.index for o in owners] == [0, 1, 2]
    assert not any(hasattr(obj, "data") for obj in (group, *owners))    # no other arm's rewards


def test_a_group_refuses_data_owners_that_opened_different_shared_keys():
    """Enc's key and seed_alpha, which every DO opens from its own box, are held once by the
    group: DOs that opened different ones (a Comp sealing another key to one DO) stop it."""
    run_id, group = b"r" * 16, DataOwnerGroup()
    publics = group.join([ToyArms([0.5] * 3, 20).arm(i) for i in range(3)], 6, mask="paper")
    comp = KeyAgreement(os.urandom(32))
    boxes = {i: comp.seal(publics[i], bytes([i // 2]) * 32,        # DO 2 gets another key
                          hand_over_context(run_id, "aes-gcm", "Comp", f"DO{i}"))
             for i in range(3)}
    alpha = group.share_alpha(publics, run_id)
    with pytest.raises(MessageRejected, match="DOs 0-2 opened different Enc or seed_alpha keys"):
        group.setup({i: {"aes-gcm": boxes[i], **({"masks": alpha[i]} if i else {})}
                     for i in range(3)},
                    {"aes-gcm": ("Comp", comp.public), "masks": ("DO0", publics[0])},
                    bytes(32), run_id, 3, 20, AlgorithmSpec("ucb"), True, None)


def test_a_data_owner_refuses_another_arms_rewards():
    with pytest.raises(ValueError, match="DO 1 was given arm 0's rewards"):
        DataOwner(1, ToyArms([0.5, 0.5], 4).arm(0), 6)


def test_participants_refuse_replayed_misrouted_and_malformed_messages():
    group, comp = participants()
    scores = group.exchange(None, (4, 1))
    with pytest.raises(MessageRejected, match="replayed within the list"):
        comp.select(4, 1, [scores[0]] * 3)
    with pytest.raises(MessageRejected, match="t=5, l=1, kind=score"):
        comp.select(5, 1, scores)                        # scores of step 4 offered as step 5
    bits = comp.select(6, 1, group.exchange(None, (6, 1)))
    with pytest.raises(MessageRejected, match="expected 3 bit messages"):
        group.exchange((6, 1, bits[:2]), None)
    group.exchange((6, 1, bits), None)
    with pytest.raises(MessageRejected, match="already accepted"):
        group.exchange((6, 1, bits), None)               # the same bits again
    with pytest.raises(MessageRejected, match="neither 0 nor 1"):
        unpack_bits([bytes(SCORE_BYTES), b"\x02" + bytes(SCORE_BYTES - 1)])
    with pytest.raises(MessageRejected, match="non-zero padding"):
        unpack_scores([bytes(8) + b"\x01" + bytes(SCORE_BYTES - 9)])


def test_a_tampered_share_fails_the_run_at_once_naming_comp(monkeypatch):
    """mask=mpc: Comp refuses a share altered on its way and closes its seat, so the Controller's
    seat, waiting for Comp, fails at once with Comp's own error, not after its timeout."""
    import time
    exchange = DataOwnerGroup.exchange

    def tampering(self, delivery, asked):
        sealed = exchange(self, delivery, asked)
        if asked == (6, 1):
            sealed[0] = sealed[0][:-1] + bytes([sealed[0][-1] ^ 1])
        return sealed

    monkeypatch.setattr(DataOwnerGroup, "exchange", tampering)
    start = time.monotonic()
    with pytest.raises(MessageRejected, match="authentication failed") as err:
        run_samba(ToyArms([0.3, 0.6, 0.5], 20), setup_for("ucb", 5, 20))
    assert "(in Comp.select)" in err.value.__notes__ and time.monotonic() - start < 30


def test_softmax_temperature_too_small_for_the_shares_is_refused():
    spec = AlgorithmSpec("softmax", softmax_tau=0.02)
    with pytest.raises(ValueError, match="samba.softmax_tau must be >= 0.048"):
        run_samba(ToyArms([0.3, 0.6], 10), SambaConfig(10, spec, key_bits=512,
                                                       insecure_key_bits_ok=True, seed=1))
    run_samba(ToyArms([0.3, 0.6], 10), SambaConfig(10, spec, key_bits=512, mask="paper",
                                                   insecure_key_bits_ok=True, seed=1))
