import numpy as np
import pytest

from ppml.data.bandit_data import ClassificationData, ContextualData, stream_order


class HalfData(ContextualData):
    """Every arm has mean 1/2: realised rewards are the uniforms' coin flips."""

    def mean_rewards_at(self, steps):
        return np.full((len(self._steps(steps)), self.arms), 0.5)


def half_data(name="half", seed=3, horizon=50, arms=7):
    contexts = np.zeros((horizon, 2))
    contexts[:, 0] = 1.0
    return HalfData(name=name, contexts=contexts, arms=arms, seed=seed,
                    source_index=np.arange(horizon))


def test_reward_is_the_same_however_often_and_in_whatever_order_asked():
    data = half_data()
    first = [data.reward(t, a) for t in range(50) for a in range(7)]
    again = [data.reward(t, a) for t in reversed(range(50)) for a in reversed(range(7))][::-1]
    assert first == again
    assert set(first) == {0.0, 1.0}
    assert 0.35 < np.mean(first) < 0.65


def test_rewards_are_reproducible_from_name_and_seed_only():
    a, b = half_data(), half_data(horizon=20, arms=7)
    assert all(np.array_equal(a.rewards(t), b.rewards(t)) for t in range(20))
    c = half_data(seed=4)
    d = half_data(name="other")
    assert any(not np.array_equal(a.rewards(t), c.rewards(t)) for t in range(20))
    assert any(not np.array_equal(a.rewards(t), d.rewards(t)) for t in range(20))


def test_uniforms_look_uniform_and_independent_across_arms():
    data = half_data(horizon=2000, arms=8)
    u = np.stack([data.uniforms(t) for t in range(2000)])
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01
    assert np.all(np.abs(np.corrcoef(u.T) - np.eye(8)) < 0.08)


def test_reward_compares_uniform_with_mean():
    data = half_data()
    for t in range(10):
        assert np.array_equal(data.rewards(t), (data.uniforms(t) < 0.5).astype(float))


def test_classification_rewards_and_regret():
    labels = np.array([2, 0, 1])
    data = ClassificationData(name="c", contexts=np.eye(3), arms=3, seed=0,
                              source_index=np.arange(3), labels=labels)
    assert np.array_equal(data.mean_rewards(0), [0, 0, 1])
    assert data.reward(0, 2) == 1.0 and data.reward(0, 1) == 0.0
    assert data.best_arm(1) == 0 and data.best_mean(1) == 1.0
    assert data.regret(2, 0) == 1.0 and data.regret(2, 1) == 0.0
    assert np.array_equal(data.regrets([2, 1]), [0.0, 1.0])
    assert data.horizon == 3 and data.dims == 3


def test_arrays_are_read_only_copies():
    contexts = np.eye(3)
    data = ClassificationData(name="c", contexts=contexts, arms=3, seed=0,
                              source_index=np.arange(3), labels=[0, 1, 2])
    contexts[0, 0] = 5.0
    assert data.contexts[0, 0] == 1.0
    with pytest.raises(ValueError):
        data.contexts[0, 0] = 2.0
    with pytest.raises(ValueError):
        data.labels[0] = 2


def test_contexts_must_have_unit_rows():
    with pytest.raises(ValueError, match="unit length"):
        ClassificationData(name="c", contexts=2 * np.eye(3), arms=3, seed=0,
                           source_index=np.arange(3), labels=[0, 1, 2])


def test_steps_and_arms_out_of_range():
    data = half_data(horizon=5, arms=3)
    with pytest.raises(IndexError, match=r"\[0, 5\)"):
        data.mean_rewards(5)
    with pytest.raises(IndexError):
        data.reward(-1, 0)
    with pytest.raises(IndexError, match=r"arm must be .* \[0, 3\)"):
        data.reward(0, 3)


def test_stream_order_is_prefix_stable_and_reshuffles_each_pass():
    order = stream_order(10, 35, seed=1)
    assert len(order) == 35
    for p in range(3):
        assert sorted(order[10 * p:10 * p + 10]) == list(range(10))
    assert not np.array_equal(order[:10], order[10:20])
    assert np.array_equal(stream_order(10, 12, seed=1), order[:12])
    assert not np.array_equal(stream_order(10, 10, seed=2), order[:10])


def test_regrets_in_chunks_match_stepwise_regret():
    data = half_data(horizon=2500, arms=3)
    labels = np.arange(2500) % 3
    classes = ClassificationData(name="c", contexts=data.contexts, arms=3, seed=0,
                                 source_index=np.arange(2500), labels=labels)
    pulled = (np.arange(2500) * 7) % 3
    assert np.array_equal(classes.regrets(pulled),
                          [classes.regret(t, int(a)) for t, a in enumerate(pulled)])


def test_survives_pickling_for_ray_actors():
    import pickle

    data = half_data()
    copy = pickle.loads(pickle.dumps(data))
    assert all(np.array_equal(copy.rewards(t), data.rewards(t)) for t in range(50))


def test_single_reward_matches_the_vectorised_rewards():
    from ppml.data import load_contextual
    for name in ("digits", "synthetic"):
        data = load_contextual(name, arms=10, horizon=50, data_seed=3)
        for t in range(0, 50, 7):
            assert [data.reward(t, a) for a in range(10)] == list(data.rewards(t))
