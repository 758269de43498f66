"""The scaling figures: the exponent fit recovers a known power law, a figure is drawn from
synthetic rows (no runs), per axis with the other sizes fixed, mixed settings are refused, and
every scaling config composes with the sweep its figure plots."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from PIL import Image

from jobs.run import CONF_DIR
from ppml.experiments import scaling_figures as scaling
from ppml.experiments.config import load_config
from ppml.experiments.figures import FIGURES, MixedSettings, subplots


def run(run_id, arms=8, parties=2, dims=10, **extra):
    """A private_cb run's summary row whose secure seconds go as |A|^1 P^2 and plaintext's as
    |A|^0.5."""
    plain = 1e-3 * arms ** 0.5
    total = 0.01 * arms * parties ** 2
    return {"run_id": run_id, "experiment": "private_cb", "arms": arms, "parties": parties,
            "dims": dims, "horizon": 1000, "dataset": "kmeans_digits", "runtime": "local",
            "plaintext_lean_s": plain, "slowdown_total": total / plain,
            "slowdown_online": 0.8 * total / plain, **extra}


def sweep(axis, values, **extra):
    return [run(f"{axis}-{v}", **{axis: v}, **extra) for v in values]


def test_fit_recovers_a_known_power_law():
    sizes = [2, 4, 8, 16, 32]
    exponent, coefficient = scaling.fit_exponent(sizes, [3.0 * n ** 1.7 for n in sizes])
    assert exponent == pytest.approx(1.7) and coefficient == pytest.approx(3.0)


@pytest.mark.parametrize("sizes, seconds, named", [
    ([4, 4], [1.0, 2.0], "two distinct"), ([1, 2], [0.0, 1.0], "seconds"),
    ([0, 2], [1.0, 1.0], "sizes"), ([1, 2, 3], [1.0, 2.0], "same length")])
def test_fit_refuses_what_has_no_log_log_line(sizes, seconds, named):
    with pytest.raises(ValueError, match=named):
        scaling.fit_exponent(sizes, seconds)


def test_every_kind_is_drawn_with_its_exponent():
    runs = scaling.scaling_runs(sweep("arms", (2, 4, 8, 16)), scaling.FAMILIES["private_cb"])
    _, ax = subplots()
    scaling.draw_costs(ax, runs, "arms", "|A|")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["secure total ~ |A|^1.00", "secure online ~ |A|^1.00",
                      "plaintext ~ |A|^0.50"]


def test_the_fit_goes_through_the_medians_not_a_slow_run():
    rows = sweep("arms", (2, 4, 8)) + [dict(r, run_id=r["run_id"] + k) for r in
                                      sweep("arms", (2, 4, 8)) for k in "ab"]
    rows[-1] = dict(rows[-1], slowdown_total=rows[-1]["slowdown_total"] * 50)   # a busy machine
    runs = scaling.scaling_runs(rows, scaling.FAMILIES["private_cb"])
    _, ax = subplots()
    scaling.draw_costs(ax, runs, "arms", "|A|")
    assert ax.get_legend().get_texts()[0].get_text() == "secure total ~ |A|^1.00"


def test_one_figure_per_swept_axis_with_the_other_sizes_fixed(tmp_path):
    rows = sweep("arms", (2, 4, 8, 16)) + sweep("parties", (2, 3, 4)) + sweep("dims", (5, 10))
    arms = scaling.scaling_figure("private_cb", "arms", rows, tmp_path)
    parties = scaling.scaling_figure("private_cb", "parties", rows, tmp_path)
    assert arms.name == "scaling_private_cb_arms.png"
    caption = Image.open(arms).info["Description"]
    assert "parties=2" in caption and "dims=10" in caption and "horizon=1000" in caption
    assert "arms=" not in caption
    assert "arms=8" in Image.open(parties).info["Description"]


def test_no_figure_without_two_sizes_at_the_same_other_sizes(tmp_path):
    rows = [run("a", arms=2, parties=2), run("b", arms=4, parties=3)]
    assert scaling.scaling_figure("private_cb", "arms", rows, tmp_path) is None


def test_runs_that_timed_nothing_draw_nothing(tmp_path):
    rows = [{"run_id": f"p{n}", "experiment": "pprl", "pprl.steps_per_agent": n,
             "method": "crl", "learning_s": None} for n in (10, 20)]
    assert scaling.scaling_figure("pprl", "pprl.steps_per_agent", rows, tmp_path) is None


def test_a_product_sweep_is_split_into_panels(tmp_path):
    rows = sweep("arms", (2, 4, 8), parties=2) + [
        dict(r, run_id=r["run_id"] + "-3") for r in sweep("arms", (2, 4, 8), parties=3)]
    two = Image.open(scaling.scaling_figure("private_cb", "arms", rows, tmp_path))
    assert "parties" not in two.info["Description"]
    one = Image.open(scaling.scaling_figure("private_cb", "arms", rows[:3], tmp_path))
    assert two.size[0] == 2 * one.size[0]           # one panel per value of P, side by side


def test_runs_mixing_another_setting_are_refused(tmp_path):
    rows = sweep("arms", (2, 4)) + [run("c", arms=8, horizon=500)]
    with pytest.raises(MixedSettings, match=r"horizon \(500, 1000\)"):
        scaling.scaling_figure("private_cb", "arms", rows, tmp_path)


def test_pprl_costs():
    rows = [{"method": "crl", "learning_s": 0.1}, {"method": "pprl", "learning_s": 9.0,
                                                   "online_s": 7.0}]
    assert scaling.pprl_costs(rows) == {"secure total": 9.0, "secure online": 7.0,
                                        "plaintext": 0.1}


def test_every_family_and_axis_is_registered():
    registered = [fn.args for fns in FIGURES.values() for fn in fns if hasattr(fn, "args")]
    assert sorted(registered) == sorted((name, axis) for name, family
                                        in scaling.FAMILIES.items() for axis in family.axes)


SWEEPS = {"private_cb_arms": ("private_cb", "arms"),
          "private_cb_parties": ("private_cb", "parties"),
          "private_cb_dims": ("private_cb", "dims"),
          "linucb_ds_arms": ("linucb_ds", "arms"), "linucb_ds_dims": ("linucb_ds", "dims"),
          "spectral_ucb_ds_arms": ("spectral_ucb_ds", "arms"),
          "samba_arms": ("samba", "arms"), "samba_horizon": ("samba", "horizon"),
          "pprl_steps": ("pprl", "pprl.steps_per_agent"),
          "masked_lark_reports": ("masked_lark_aggregate", "masked_lark.reports"),
          "masked_lark_helpers": ("masked_lark_train", "parties")}
"""Each scaling sweep config -> the figure (family, axis) that draws its runs."""
FIXED_POINTS = ("private_cb", "linucb_ds", "samba", "masked_lark")
"""The configs the sweeps of a family with several start from."""


def test_every_scaling_config_composes_with_one_swept_size_of_its_figure():
    files = sorted(p.stem for p in (Path(CONF_DIR) / "experiment" / "scaling").glob("*.yaml"))
    assert files == sorted([*SWEEPS, *FIXED_POINTS])
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        for config_name, (name, axis) in SWEEPS.items():
            overrides = [f"experiment=scaling/{config_name}"]
            params = dict(compose("config", overrides=overrides,
                                  return_hydra_config=True).hydra.sweeper.params)
            assert list(params) == [axis], config_name
            assert len(params[axis].split(",")) >= 3, config_name
            config = load_config(compose("config", overrides=overrides))
            family = scaling.FAMILIES[name]
            assert config.experiment == family.experiment
            assert all(config.columns()[key] == value for key, value in family.where)
            assert config.results_dir == f"results/scaling/{family.experiment}"
