"""The release-error and training-AUC figures are drawn from masked_lark rows, only when such
rows exist."""

from ppml.experiments import masked_lark_figures as figs


def key(users, suppressed, run="masked_lark-1"):
    return {"run_id": run, "users": users, "suppressed": suppressed, "true_sum": [users, 1],
            "released_sum": None if suppressed else [users + 3, -2], "masked_lark.k": 10,
            "epsilon_release": 1.0}


def epoch(method, e, auc, run="masked_lark-2"):
    return {"run_id": run, "method": method, "epoch": e, "auc": auc, "dataset": "digits",
            "masked_lark.epsilon": 1.0, "masked_lark.private": True}


def test_both_figures_are_drawn_from_their_rows(tmp_path):
    keys = [key(u, u < 10) for u in (2, 5, 12, 40, 300)]
    assert figs.release_error(keys, tmp_path).exists()
    epochs = [epoch(m, e, 0.6 + 0.1 * e) for m in ("masked", "plaintext") for e in range(3)]
    assert figs.training_auc(epochs, tmp_path).exists()


def test_no_figure_without_its_rows(tmp_path):
    assert figs.release_error([epoch("masked", 0, 0.5)], tmp_path) is None
    assert figs.training_auc([key(3, True)], tmp_path) is None


def test_auc_against_epsilon_takes_each_private_runs_last_epoch(tmp_path):
    rows = []
    for run, eps in (("a", 0.5), ("b", 4.0)):
        rows += [dict(epoch(m, e, 0.5 + eps / 10 + 0.01 * e, run), **{"masked_lark.epsilon": eps})
                 for m in ("masked", "plaintext") for e in range(2)]
    rows += [dict(epoch("masked", 0, 0.9, "c"), **{"masked_lark.private": False})]
    assert figs.training_auc(rows, tmp_path).exists()
