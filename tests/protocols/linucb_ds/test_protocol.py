"""LinUCB-DS: exact agreement with fixed-point LinUCB, Fig. 3's messages, the parties' views,
checkpoints and resume."""

import dataclasses
from collections import Counter

import numpy as np
import pytest

from ppml.protocols.linucb_ds.reference import (Coins, FixedPoint, LinUCB, run_fixed_point)
from ppml.protocols.linucb_ds.spectral import SpectralUCB
from ppml.protocols.linucb_ds.config import LinUCBDSConfig
from ppml.protocols.linucb_ds import protocol
from ppml.protocols.linucb_ds.protocol import (PARTIES, coefficient_bound, mask_sum,
                                               run_protocol, score_bound)
from ppml.crypto.paillier import ObfuscatorPool, generate_keypair
from ppml.runtime.checkpoints import CheckpointPlan
from tests.protocols.linucb_ds.lost import CompLostAtRound10

KEY = bytes(range(32))


def instance(K=10, d=3, N=40, seed=1):
    rng = np.random.default_rng(seed)
    arms, theta = rng.normal(0, 1, (K, d)), rng.normal(0, 1, d)
    return arms, theta, rng.choice([-0.01, 0.01], (N, K))


def secure(arms, theta, noise, N, theta_norm_bound=4.0, **options):
    config = LinUCBDSConfig(**{"horizon": N, "key_bits": 512, "insecure_key_bits_ok": True,
                               "seed": 3, **options})
    return run_protocol(LinUCB(arms), theta, noise, config, coin_key=KEY,
                        theta_norm_bound=theta_norm_bound)


def fig3(N: int) -> list:
    return ([("1", "DC", "P", "N"), ("1", "DO", "P", "arms, theta*, constants")]
            + [("3.ii", "P", "Comp", "sigma(listB*)"), ("4.i", "Comp", "P", "argmax position")]
            * (N - 1)
            + [("5", "P", "Comp", "E_Comp(rand + s)"), ("6", "Comp", "P", "E_DC(rand + s)"),
               ("7", "P", "DC", "E_DC(s)")])


@pytest.fixture(scope="module")
def run():
    arms, theta, noise = instance()
    out = secure(arms, theta, noise, 40, record_views=True)
    ref = run_fixed_point(LinUCB(arms), theta, noise, 40, Coins(KEY), scale_bits=28)
    return out, ref


def test_secure_run_equals_fixed_point_linucb_exactly(run):
    out, ref = run
    assert out["arms"] == ref["arms"]
    assert out["sum_int"] == ref["sum_int"] and out["sum"] == ref["sum"]


def test_djn_obfuscators_change_neither_arms_nor_sum_nor_messages(run):
    _, ref = run
    out = secure(*instance(), 40, obfuscator="djn")
    assert out["arms"] == ref["arms"] and out["sum_int"] == ref["sum_int"]
    assert out["stats"]["P"]["messages"] == fig3(40)


def test_messages_are_exactly_fig3(run):
    out, _ = run
    assert out["stats"]["P"]["messages"] == fig3(40)
    assert out["layout"]["groups"] == 2                  # 512 bits: 6 slots, K = 10


def test_counts_against_fig5(run):
    out, _ = run
    d, K, N = 3, 10, 40
    p, comp = out["stats"]["P"]["counts"], out["stats"]["Comp"]["counts"]
    # per pull one EDP (d); per round d fixed-base products per packed ciphertext (2 here),
    # instead of Fig. 5's 2d + (N - 1)(d^2 + Kd + 2d): 3.i is plaintext (docs/linucb-ds.md)
    assert p["multiplications"] == d * N + (N - 1) * d * 2
    assert comp["decrypted_values"] == (N - 1) * K       # every score, packed ...
    assert comp["decryptions"] == (N - 1) * 2 + 1        # ... into 2 ciphertexts a round
    assert p["fresh_obfuscators"] == (N - 1) * 2 + 2


def test_comp_sees_only_the_permuted_scores(run):
    out, ref = run
    rounds = {}
    for row in out["views"]["Comp"].to_pylist():
        if row["l"] == 4:                                # step 4.i; l = 6 is the key switch
            rounds.setdefault(row["t"], []).append(int(row["exact"]))
    scale = 2.0 ** (FixedPoint.SCORE_K * 28)
    positions = []
    for t, values in sorted(rounds.items()):
        seen = np.sort([float(v - min(values)) / scale for v in values])
        scores = np.sort(ref["scores"][t])
        assert np.allclose(seen, scores - scores[0], atol=1e-12)   # the scores, shifted ...
        positions.append(int(np.argmax(values)))
    # ... in a fresh uniform order: the position of the maximum does not follow the arm
    rounds = len(positions)
    assert Counter(out["arms"][1:]).most_common(1)[0][1] >= 0.8 * rounds
    assert Counter(positions).most_common(1)[0][1] <= 0.5 * rounds and len(set(positions)) >= 4


@pytest.mark.parametrize("spectral", [False, True])
def test_public_bounds_hold_over_a_run_of_any_pulls(spectral):
    # the packing never spills: |C_ij| and |B_i| stay within the public bounds, whatever the
    # pulls (here the same arm over and over, the largest G in one direction, and random ones)
    rng, s, N, K, d = np.random.default_rng(7), 28, 300, 8, 4
    arms, theta = rng.normal(0, 1.5, (K, d)), rng.normal(0, 1, d)
    theta *= 2.0 / np.linalg.norm(theta)                 # S = 2
    noise = rng.choice([-0.01, 0.01], (N, K))
    make = (lambda: SpectralUCB(arms, np.linspace(0, 5, d), N)) if spectral else \
        (lambda: LinUCB(arms))
    fixed = FixedPoint(s)
    c_bound, b_bound = (coefficient_bound(fixed, make(), N),
                        score_bound(fixed, make(), 2.0, 0.01, N))
    x, theta_int = fixed.ints(arms), fixed.ints(theta)
    for pulls in (np.zeros(N, dtype=int), rng.integers(0, K, N)):
        policy, G, e = make(), np.full((d, d), 0, dtype=object), np.full(d, 0, dtype=object)
        largest_c = largest_b = 0
        for t, arm in enumerate(pulls):
            policy.pull(arm)
            eta = int(fixed.ints([noise[t][arm]], fixed.REWARD_K)[0])
            G, e = G + np.outer(x[arm], x[arm]), e + eta * x[arm]
            a_inverse, a_float = fixed.a_inverse(policy)
            C, w = fixed.score_terms(a_inverse, x, G, e)
            scores = C.dot(theta_int) + w + fixed.exploration(policy, t + 1, a_float)
            largest_c = max(largest_c, max(abs(int(c)) for c in C.ravel()))
            largest_b = max(largest_b, max(abs(int(b)) for b in scores))
        assert largest_c <= c_bound and largest_b <= b_bound
        assert b_bound < 2**12 * largest_b                # and not loose by more than 12 bits


def test_p_refuses_to_send_a_score_beyond_the_slot_bound(monkeypatch):
    import ppml.protocols.linucb_ds.protocol as ds
    monkeypatch.setattr(ds, "score_bound",               # room for the exponents, not the scores
                        lambda fixed, policy, *args: 4 * ds.coefficient_bound(fixed, policy,
                                                                              args[-1]))
    arms, theta, noise = instance(N=5)
    with pytest.raises(RuntimeError, match="round 1: a score could exceed the public bound"):
        secure(arms, theta, noise, 5)


def test_key_switch_value_is_uniform_whatever_the_sum():
    public_key, private_key = generate_keypair(512, insecure_key_bits_ok=True, seed=5)
    pool = ObfuscatorPool(public_key, 400)
    n = int(public_key.n)
    for s in (0, 2**200):
        sum_ct = public_key.encrypt_raw([s], pool.take(1))[0]
        seen = [int(private_key.decrypt_raw([mask_sum(public_key, sum_ct, pool.take(1)[0])[0]])[0])
                / n for _ in range(150)]
        assert abs(np.mean(seen) - 0.5) < 0.1 and len(set(seen)) == 150


def test_dc_learns_the_sum_and_p_never_a_private_key(run):
    out, ref = run
    assert out["sum_int"] == ref["sum_int"]
    assert set(out["stats"]["DC"]["counts"]) == {"decryptions"}
    assert "decryptions" not in out["stats"]["P"]["counts"]


def test_theta_norm_bound_is_checked():
    arms, theta, noise = instance(N=3)
    with pytest.raises(ValueError, match="theta_norm_bound"):
        secure(arms, theta, noise, 3, theta_norm_bound=0.1)


def test_2048_bit_keys_from_the_csprng():
    arms, theta, noise = instance(K=4, d=2, N=3)
    out = run_protocol(LinUCB(arms), theta, noise, LinUCBDSConfig(horizon=3), coin_key=KEY,
                       theta_norm_bound=4.0)
    ref = run_fixed_point(LinUCB(arms), theta, noise, 3, Coins(KEY), scale_bits=28)
    assert out["arms"] == ref["arms"] and out["sum_int"] == ref["sum_int"]
    assert out["layout"]["slots"] >= 4 and out["layout"]["groups"] == 1


def test_ray_runtime_with_workers_matches(ray_cluster):
    arms, theta, noise = instance(N=8)
    out = secure(arms, theta, noise, 8, runtime="ray", workers=2)
    ref = run_fixed_point(LinUCB(arms), theta, noise, 8, Coins(KEY), scale_bits=28)
    assert out["arms"] == ref["arms"] and out["sum_int"] == ref["sum_int"]
    assert out["stats"]["P"]["messages"] == fig3(8)


@pytest.mark.ray
def test_step_3i_is_split_over_arms_only_from_its_crossover_with_the_same_run(ray_cluster,
                                                                             spy):
    arms, theta, noise = instance(N=6)
    ref = run_fixed_point(LinUCB(arms), theta, noise, 6, Coins(KEY), scale_bits=28)
    calls = spy(protocol, "over_rows")
    K, d = arms.shape
    for min_work, splits in ((K * d * d, [(K, 2)] * 5), (K * d * d + 1, [])):
        calls.clear()
        out = secure(arms, theta, noise, 6, workers=2, split_min_work=min_work)
        assert [args[3:5] for args in calls] == splits      # rounds 1..5, from K d^2 on
        assert out["arms"] == ref["arms"] and out["sum_int"] == ref["sum_int"]
    with pytest.raises(ValueError, match="split_min_work must be >= 1"):
        LinUCBDSConfig(horizon=6, split_min_work=0)


@pytest.mark.parametrize("seed", [3, None])
@pytest.mark.parametrize("spectral", [False, True])
def test_a_run_resumes_from_its_checkpoints(tmp_path, monkeypatch, seed, spectral):
    """Cut at step 11 with checkpoints every 4 steps, resumed from step 8: the uninterrupted
    run's arms and DC's exact sum, steps 9-10 replayed, Comp's and DC's counts as if never cut.
    Unseeded, the resumed Comp and DC make fresh keys and take their own back from their
    checkpoints (s* is under Comp's), and P its coins (``coin_key`` None: P draws its own)."""
    arms, theta, noise = instance(K=6, d=3, N=14)
    make = (lambda: SpectralUCB(arms, np.linspace(0, 2, 3), 14)) if spectral else \
        (lambda: LinUCB(arms))
    plan = CheckpointPlan(str(tmp_path), 4, PARTIES, "s")

    def attempt(plan, coin_key=None):
        config = LinUCBDSConfig(horizon=14, key_bits=512, insecure_key_bits_ok=True, seed=seed,
                                checkpoints=plan)
        return run_protocol(make(), theta, noise, config, coin_key=coin_key,
                            theta_norm_bound=4.0)

    with monkeypatch.context() as patch:
        patch.setattr(protocol, "Comp", CompLostAtRound10)
        with pytest.raises(ConnectionError, match="round 10"):
            attempt(plan)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(PARTIES)
    assert all(plan.store(name).steps() == [4, 8] for name in PARTIES)
    assert plan.store("p").progress() == 10
    held = {name: plan.store(name).load(8) for name in ("comp", "dc", "do")}
    assert set(held["comp"]) == {"counts", "seconds", "key", "rounds", "view"}
    assert set(held["dc"]) == {"counts", "seconds", "key"}
    assert set(held["do"]) == {"counts", "seconds"}
    assert set(plan.store("p").load(8)["program"]) == {                # no private key
        "counts", "seconds", "comp_key", "dc_key", "coins", "A", "G", "e", "s", "arms"}
    out = attempt(dataclasses.replace(plan, resume=True))
    assert out["replays"] == [(8, 10)]
    whole = attempt(None, out["coin_key"])
    ref = run_fixed_point(make(), theta, noise, 14, Coins(out["coin_key"]), scale_bits=28)
    assert out["arms"] == whole["arms"] == ref["arms"]
    assert out["sum_int"] == whole["sum_int"] == ref["sum_int"]
    for name in ("Comp", "DC"):
        assert out["stats"][name]["counts"] == whole["stats"][name]["counts"]
    assert whole["replays"] == []
