"""The private CB experiment's slowdowns and progress bars (its results:
tests/protocols/private_cb)."""

import pytest

from ppml.experiments.config import RunConfig
from ppml.experiments.private_cb import SHOWN, private_cb
from tests.runtime.bars import complete


def tiny(tmp_path, **keys) -> RunConfig:
    return RunConfig(experiment="private_cb", arms=10, dims=4, horizon=4, seed=3,
                     results_dir=str(tmp_path), **keys)


def test_the_summary_has_both_slowdowns_against_the_lean_loop_and_shows_the_total(tmp_path):
    out = private_cb(tiny(tmp_path, progress=False))
    s = out.summary
    assert s["plaintext_lean_s"] > 0 and s["lean_arm_agreement"] == 1.0
    assert 0 < s["slowdown_online"] <= s["slowdown_total"]
    assert s["slowdown_online"] == pytest.approx(s["online_s"] / s["plaintext_lean_s"])
    assert s["slowdown_total"] == pytest.approx(s["wall_s"] / s["plaintext_lean_s"])
    assert "slowdown" not in s
    assert ("slowdown_total", "slowdown") in SHOWN and "slowdown" in out.table


def test_progress_draws_the_steps_bar_on_stderr_and_false_draws_none(tmp_path, capfd):
    private_cb(tiny(tmp_path, progress=True))
    shown = capfd.readouterr().err
    assert "private_cb steps" in shown and "4/4" in shown
    private_cb(tiny(tmp_path, progress=False))
    assert "private_cb steps" not in capfd.readouterr().err


@pytest.mark.ray
@pytest.mark.slow
def test_under_ray_the_driver_draws_the_parties_bars_and_no_party_prints_one(
        tmp_path, capfd, ray_cluster):
    private_cb(tiny(tmp_path, progress=True, runtime="ray"))
    out, err = capfd.readouterr()
    assert "set-up" in err and "private_cb steps" in err and "4/4" in err
    assert "pid=" not in out + err
    private_cb(tiny(tmp_path, progress=False, runtime="ray"))
    out, err = capfd.readouterr()
    assert "private_cb steps" not in err and "set-up" not in err and "pid=" not in out + err


@pytest.mark.slow
def test_federated_the_driving_party_shows_the_bar_and_the_others_none(tmp_path, capfd):
    private_cb(tiny(tmp_path, progress=True, runtime="federated"))
    shown = capfd.readouterr().err
    assert shown.count("private_cb steps:   0%") == 1 and "4/4" in shown
    assert complete(shown, "private_cb set-up (links, keys)")      # the parties' start
    logs = {log.stem: log.read_text() for log in tmp_path.glob(".federated/*/*.log")}
    assert "private_cb steps" in logs.pop("party-0")
    assert not any("private_cb steps" in text or "set-up" in text for text in logs.values())
