"""The plaintext reference of the reporting: in range, once per browser and key, k users; the
curator's release adds one noise draw to each kept key's sum."""

import numpy as np

from ppml.protocols.masked_lark.reference import aggregate, counted, curator_release


def test_a_report_counts_in_range_and_once_per_browser_and_key():
    browsers = np.array([0, 0, 1, 2, 3])
    keys = [(0, 0), (0, 0), (0, 0), (1, 0), (0, 0)]
    values = np.array([[1], [1], [2], [1], [9]])
    assert counted(browsers, keys, values, bound=5).tolist() == [True, False, True, True, False]


def test_keys_below_k_users_are_suppressed_with_their_true_sums():
    browsers = np.arange(5)
    keys = [(0, 0)] * 3 + [(1, 1)] * 2
    values = np.array([[1, 0], [1, 1], [0, 1], [1, 1], [1, 0]])
    out = aggregate(browsers, keys, values, bound=1, k=3)
    assert (out[(0, 0)].users, out[(0, 0)].suppressed, out[(0, 0)].sum) == (3, False, [2, 2])
    assert (out[(1, 1)].users, out[(1, 1)].suppressed) == (2, True)


def test_the_curators_release_is_each_kept_sum_plus_its_noise():
    browsers = np.arange(5)
    keys = [(0, 0)] * 3 + [(1, 1)] * 2
    values = np.array([[1, 0], [1, 1], [0, 1], [1, 1], [1, 0]])
    shapes = []

    def noise(shape):
        shapes.append(shape)
        return np.full(shape, 7, dtype=np.int64)
    out = curator_release(browsers, keys, values, bound=1, k=3, draw_noise=noise)
    assert list(out) == [(0, 0)] and out[(0, 0)].tolist() == [9, 9] and shapes == [(1, 2)]
