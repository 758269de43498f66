"""The private learner against the plaintext reference (Hannun et al. Algorithm 1)."""

import dataclasses
import functools
import math
import os

import numpy as np
import pytest

from ppml.runtime import roles, spmd
import ppml.mpc as mpc
from ppml.protocols.private_cb.config import PrivateCBConfig
from ppml.experiments.config import RunConfig
from ppml.experiments.private_cb import privacy_level, private_cb
from ppml.data import load_contextual
from ppml.protocols.private_cb.protocol import program
from ppml.protocols.private_cb.world import World
from ppml.runtime.checkpoints import CheckpointPlan
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S
from tests.experiments.summaries import fits


def run(**overrides):
    """The experiment on digits; ``overrides`` as on the command line (``mpc.truncation``...)."""
    base = {"experiment": "private_cb", "dataset": "digits", "arms": 10, "dims": 20,
            "horizon": 300, "private_cb.epsilon": 0.1, "seed": 3, "progress": False}
    return private_cb(RunConfig.from_columns({**base, **overrides}))


@pytest.mark.parametrize("parties", [2, 3])
def test_short_run_takes_the_reference_decisions(parties):
    out = run(parties=parties)
    assert out.summary["arm_agreement"] == 1.0 and out.summary["lean_arm_agreement"] == 1.0
    assert out.summary["secure_cumulative_reward"] == out.summary["plaintext_cumulative_reward"]
    assert len(out.rows) == 300 and {"step", "arm", "reward", "plaintext_arm"} <= set(out.rows[0])
    assert math.isclose(out.summary["eta"], math.log(10 / 0.1))


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["digits", "mnist"])
@pytest.mark.parametrize("parties", [2, 3])
def test_two_thousand_steps(parties, dataset):
    """At least 99% of the arms agree and the average rewards differ by at most 0.01."""
    if dataset == "mnist" and not os.environ.get("PPML_DATA"):
        pytest.skip("MNIST needs PPML_DATA (CI sets it to ../shared/datasets)")
    # A fixed (insecure) seed keeps the test deterministic: over fresh dealer secrets the
    # agreement at P=3 on MNIST was >= 99% in 7 of 8 runs, 98.45% in the eighth (docs).
    out = run(parties=parties, horizon=2000, seed=5, dataset=dataset)
    assert out.summary["arm_agreement"] >= 0.99
    gap = abs(out.summary["secure_cumulative_reward"] - out.summary["plaintext_cumulative_reward"])
    assert gap / 2000 <= 0.01
    assert out.rows[-1]["average_reward"] > 0.5  # it learns: chance is 0.1


def test_exploration_matches_theorem_1():
    """Fixed scores: the best arm w.p. 1 - eps + eps/|A|, each other w.p. eps/|A|; the log
    ratio is log(|A|/eps - |A| + 1) <= eta = log(|A|/eps)."""
    arms, eps, n = 5, 0.3, 20_000
    scores = np.tile([0.1, 0.7, 0.3, -0.2, 0.5], (n, 1))
    ctx = mpc.local_context(2, seed=4)
    s = ctx.share(scores, owner=0)
    y = mpc.bernoulli(ctx, eps, (n, 1))
    v = mpc.uniform(ctx, (n, arms))
    counts = mpc.argmax(s + y * (v - s)).reveal().sum(axis=0)
    p = counts / n
    assert abs(p[1] - (1 - eps + eps / arms)) < 0.015
    assert np.all(np.abs(np.delete(p, 1) - eps / arms) < 0.01)
    ratio = p.max() / p.min()
    assert math.log(ratio) <= privacy_level(arms, eps) + 0.15
    assert abs(math.log(ratio) - math.log(arms / eps - arms + 1)) < 0.15


def test_bad_parameters_name_the_parameter():
    with pytest.raises(ValueError, match="epsilon"):
        PrivateCBConfig(parties=2, arms=3, dims=4, horizon=1, epsilon=1.5)
    with pytest.raises(ValueError, match="dims"):
        PrivateCBConfig(parties=5, arms=3, dims=4, horizon=1, epsilon=0.1)
    with pytest.raises(ValueError, match="argmax_method"):
        PrivateCBConfig(parties=2, arms=3, dims=4, horizon=1, epsilon=0.1, argmax_method="x")
    with pytest.raises(ValueError, match="unknown dataset|dataset"):
        run(dataset="cifar")
    from ppml.experiments.private_cb import run_plaintext
    with pytest.raises(ValueError, match="timings must be an integer >= 1"):
        run_plaintext(None, None, bytes(32), 20, timings=0)


def test_state_is_kept_at_2l_only_where_the_ring_has_room():
    config = PrivateCBConfig(parties=2, arms=10, dims=4, horizon=60000, epsilon=0.1)
    assert config.wide(20, "bounded") and config.wide(20, "exact")
    assert not config.wide(20, "probabilistic")              # fails with |value| / 2^64
    assert not config.wide(21, "bounded")                    # u_a at 3L = 63 bits: no room
    long = PrivateCBConfig(parties=2, arms=3, dims=4, horizon=2**21, epsilon=0.1)
    assert not long.wide(20, "bounded")                      # |b_a| 2^40 may reach 2^61
    many = PrivateCBConfig(parties=2, arms=5000, dims=4, horizon=60000, epsilon=0.1)
    assert not many.wide(20, "bounded")                      # the argmax keys s~ A 2^40
    with pytest.raises(ValueError, match="reward_bound"):
        PrivateCBConfig(parties=2, arms=3, dims=4, horizon=1, epsilon=0.1, reward_bound=0)


@pytest.mark.parametrize("truncation, method, start", [
    ("bounded", "window", "linear"), ("probabilistic", "window", "linear"),
    ("bounded", "newton", "linear"), ("probabilistic", "newton", "linear"),
    ("bounded", "newton", "paper")])
def test_both_state_scales_take_the_reference_decisions(truncation, method, start):
    # the paper's start squares its argument, so x^T u_a (at 2L when wide) goes to L first
    out = run(parties=2, horizon=150, **{"mpc.truncation": truncation,
                                          "private_cb.reciprocal": method,
                                          "private_cb.reciprocal_start": start})
    assert out.summary["arm_agreement"] == 1.0


def test_a_reward_outside_the_public_bound_is_refused():
    import functools

    from ppml.protocols.private_cb.protocol import program
    from ppml.data import load_contextual

    class GenerousWorld:                                     # pays 2, beyond reward_bound = 1
        def pull(self, t, arm):
            pass

        def reward(self, t):
            return 2.0

    data = load_contextual("digits", arms=10, dims=20, horizon=3, data_seed=0)
    config = PrivateCBConfig(parties=2, arms=10, dims=20, horizon=3, epsilon=0.1)
    world = roles.spawn(GenerousWorld, "local",           # the world is a role (ppml.runtime)
                        timeout_s=DEFAULT_TIMEOUT_S)
    inputs = {p: {f"features_{p}": data.contexts[:3, cols]}
              for p, cols in enumerate(config.feature_blocks)}
    inputs.update({2: {"world": world}, 3: {"world": world}})
    with pytest.raises(ValueError, match="reward_bound=1.0"):
        spmd.run(functools.partial(program, config=config), parties=2, clients=2, seed=1,
                inputs=inputs)


def test_membership_audit_on_checkpoints():
    out = run(parties=2, horizon=200, **{"private_cb.checkpoints": 4})
    audited = [r for r in out.rows if r.get("mi_advantage") is not None]
    assert [r["step"] + 1 for r in audited] == [50, 100, 150, 200]
    assert all(-1 <= r["mi_advantage"] <= 1 and 0 <= r["mi_tpr"] <= 1 for r in audited)
    printed = out.table.splitlines()                      # the summary shows the attack's results
    assert "membership inference (Yeom et al.) at each checkpoint:" in printed
    assert [line.split()[0] for line in printed[-4:]] == ["50", "100", "150", "200"]
    assert fits(out.table) and "None" not in out.table


def test_a_reward_bound_beyond_the_product_range_is_refused_before_any_step():
    """Rewards enter the engine as inputs: at L = 20 they must stay below 2^11, and a bound
    above that is refused at the start, naming it, not when the first large reward comes."""
    import ppml.mpc as mpc
    from ppml.protocols.private_cb.protocol import PrivateLinearBandit

    config = PrivateCBConfig(parties=2, arms=3, dims=4, horizon=2, reward_bound=5000.0)
    with pytest.raises(ValueError, match=r"reward_bound .*2\^11"):
        PrivateLinearBandit(mpc.local_context(2, seed=1, precision_bits=20), config)


class FailingWorld:
    """The world, failing once at the pull of step ``at``, as a lost party would."""

    def __init__(self, world, at: int):
        self.world, self.at, self.name = world, at, "world"

    def call(self, method, *args):
        if method == "pull" and args[0] == self.at:
            raise ConnectionError(f"the world went away at step {self.at}")
        return self.world.call(method, *args)


@pytest.mark.parametrize("seed", [3, None])
def test_a_run_resumes_from_its_checkpoints(tmp_path, seed):
    """Cut at step 17 with checkpoints every 5 steps, resumed from step 15: the same arms and
    rewards as without the cut in seeded mode (and, with fresh keys, a run that still learns
    the same way), steps 16-17 reported as replayed, each party's files its own."""
    config = PrivateCBConfig(parties=2, arms=10, dims=6, horizon=24, epsilon=0.1)
    data = load_contextual("digits", arms=10, dims=6, horizon=24)
    names = ("party-0", "party-1", "puller", "rewarder")

    def attempt(world_of, plan=None):
        inputs = {p: {f"features_{p}": data.contexts[:24, cols], "checkpoints": plan}
                  for p, cols in enumerate(config.feature_blocks)}
        world = world_of(roles.spawn(World, "local", data, timeout_s=DEFAULT_TIMEOUT_S))
        inputs[2] = {"world": world, "checkpoints": plan}
        inputs[3] = {"world": world, "checkpoints": plan}
        outs = spmd.run(functools.partial(program, config=config), parties=2, clients=2,
                        seed=seed, inputs=inputs, dealer_secret=bytes(32))
        return outs[2]["arms"], outs[3]["rewards"], outs[0]["replays"]

    plan = CheckpointPlan(str(tmp_path), 5, names, "s")
    with pytest.raises(ConnectionError, match="step 17"):
        attempt(lambda world: FailingWorld(world, 17), plan)
    assert plan.store("party-0").steps() == [10, 15] and plan.store("puller").progress() == 17
    arms, rewards, replays = attempt(lambda world: world, dataclasses.replace(plan, resume=True))
    assert replays == [(15, 17)]
    whole_arms, whole_rewards, _ = attempt(lambda world: world)
    if seed is not None:
        assert (arms, rewards) == (whole_arms, whole_rewards)
    else:
        assert np.mean(np.equal(arms, whole_arms)) >= 0.9 and len(arms) == 24
