"""Figs. 6(a, b), 6(c) and 7 are drawn from linucb_ds / spectral_ucb_ds rows."""

import pytest

from ppml.experiments import linucb_ds_figures as figs
from ppml.experiments.figures import MixedSettings


def run(experiment, arms, dims, horizon, workers, wall, key_bits=2048):
    return {"run_id": f"{experiment}-{arms}-{dims}-{horizon}-{workers}", "experiment": experiment,
            "step": horizon - 1, "arms": arms, "dims": dims, "horizon": horizon,
            "workers": workers, "wall_s": wall, "time_3i_s": wall / 10, "time_3ii_s": wall / 2,
            "time_4i_s": wall / 4, "key_bits": key_bits, "dataset": "synthetic"}


def test_figures_are_drawn_when_their_runs_exist(tmp_path):
    linucb = [run("linucb_ds", 50, 5, 200, w, 10.0 / w) for w in (1, 2)]
    linucb += [run("linucb_ds", k, k // 10, 200, 1, k / 5) for k in (10, 20, 30)]
    linucb += [run("linucb_ds", k, 5, k, 1, k / 3) for k in (10, 15)]
    spectral = [run("spectral_ucb_ds", k, 5, k, 1, k / 4) for k in (10, 15)]
    assert figs.costly_steps_against_workers(linucb, tmp_path).exists()
    assert figs.time_against_arms(linucb, tmp_path).exists()
    assert figs.fig7(linucb + spectral, tmp_path).exists()
    assert figs.fig7(spectral, tmp_path) is None                      # no LinUCB-DS runs


def test_no_figure_without_runs(tmp_path):
    one = [run("linucb_ds", 15, 3, 100, 1, 5.0)]
    assert figs.costly_steps_against_workers(one, tmp_path) is None
    assert figs.time_against_arms(one, tmp_path) is None


def test_runs_of_another_key_size_are_refused_by_name(tmp_path):
    runs = [run("linucb_ds", 50, 5, 200, 1, 10.0), run("linucb_ds", 50, 5, 200, 2, 6.0, 1024)]
    with pytest.raises(MixedSettings, match=r"differ in key_bits \(1024, 2048\)"):
        figs.costly_steps_against_workers(runs, tmp_path)
