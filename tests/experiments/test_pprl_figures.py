"""Table 2, Table 3 and Fig. 5 are drawn from pprl rows, and only when such rows exist."""

from ppml.experiments import pprl_figures as figs


def walk(method, selection, trial, steps):
    return {"experiment": "pprl", "pprl.task": "random_walk", "pprl.selection": selection,
            "pprl.learner": "sarsa", "run_id": "pprl-1", "method": method, "trial": trial, "episode": None, "steps_to_goal": steps,
            "reached_goal": steps is not None}


def balance(method, trial, episode, reward):
    return {"experiment": "pprl", "pprl.task": "load_balancing", "pprl.selection":
            "epsilon_greedy", "pprl.learner": "sarsa", "run_id": "pprl-2", "method": method, "trial": trial, "episode": episode,
            "episode_reward": reward}


def test_table2_and_fig5_are_drawn_from_their_rows(tmp_path):
    walks = [walk(m, s, t, 39 if m == "crl" else (None if t else 300))
             for m in ("crl", "idrl") for s in ("random", "epsilon_greedy") for t in range(3)]
    balances = [balance(m, t, e, 80 + e + (5 if m == "crl" else 0))
                for m in ("crl", "rdrl", "idrl") for t in range(2) for e in range(10)]
    assert figs.table2(walks, tmp_path).exists()
    assert figs.fig5(balances, tmp_path).exists()
    for row in balances:
        if row["episode"] == 9:
            row["learning_s"] = 1.5
    assert figs.table3(balances + [{**balance("pprl", 0, 9, 90.0), "learning_s": 40.0,
                                    "q_equal_reference": True}], tmp_path).exists()


def test_no_figure_without_its_rows(tmp_path):
    balances = [balance("crl", 0, e, 90.0) for e in range(3)]
    assert figs.table2(balances, tmp_path) is None
    assert figs.fig5([walk("crl", "random", 0, 39)], tmp_path) is None
    assert figs.table3([walk("crl", "random", 0, 39)], tmp_path) is None
