"""Masked LARK with each helper, the ad network, the browsers and the engine's dealer their own
OS process over TLS links on loopback (runtime=federated): the local runtime's release, rows
and views in the seeded mode; unseeded, each party's own keys and randomness still give the
plaintext reference's release plus exactly the helpers' noise."""

import pytest

from ppml.experiments.config import RunConfig
from ppml.experiments.masked_lark import masked_lark
from ppml.experiments.masked_lark_parties import SERVED
from ppml.protocols.masked_lark.config import MaskedLarkOptions

pytestmark = pytest.mark.slow

BASE = {"experiment": "masked_lark", "progress": False, "party_timeout_s": 60}
REPORTS = dict(reports=400, queries=6, advertisers=4, k=4, polluters=5, fake_records=1, d=3,
               bound=4)


def _untimed(rows: list) -> list:
    return [{k: v for k, v in r.items() if not k.endswith("_s")} for r in rows]


def _run(tmp_path, runtime: str, seed, options: MaskedLarkOptions, **extra):
    return masked_lark(RunConfig(runtime=runtime, seed=seed, results_dir=str(tmp_path),
                                 masked_lark=options, **BASE, **extra))


def test_federated_helpers_release_what_the_local_run_releases(tmp_path):
    """Three helpers; polluting browsers and decoys; each helper's view as in one process."""
    options = MaskedLarkOptions(**REPORTS)
    local, federated = (_run(tmp_path, runtime, 61, options, parties=3, record_views=True)
                        for runtime in ("local", "federated"))
    assert federated.summary["release_equal_reference"]
    assert federated.summary["reports_counted"] == local.summary["reports_counted"] < 800
    assert _untimed(local.rows) == _untimed(federated.rows)
    assert set(federated.views) == {"helper-0", "helper-1", "helper-2"}
    for helper, view in federated.views.items():
        assert view.num_rows and view.equals(local.views[helper])


def test_an_unseeded_federated_release_matches_the_reference(tmp_path):
    out = _run(tmp_path, "federated", None, MaskedLarkOptions(**REPORTS), parties=2)
    assert out.summary["release_equal_reference"] and out.summary["keys_released"] > 0


def test_federated_training_takes_the_local_runs_steps(tmp_path):
    options = MaskedLarkOptions(task="train", epochs=2, batch_size=128)
    local, federated = (_run(tmp_path, runtime, 62, options, parties=2,
                             dataset="breast_cancer", record_views=True)
                        for runtime in ("local", "federated"))
    assert federated.summary["gradient_equal_plaintext_steps"] == federated.summary["steps"]
    assert local.rows == federated.rows
    assert federated.views["helper-1"].equals(local.views["helper-1"])


def test_no_party_serves_what_is_for_the_evaluation_only():
    """The browsers' records and the ad network's history leave their party only in its own
    outputs, never as a call; the leader alone calls the ad network and the browsers."""
    for task in SERVED.values():
        for party, callers in task.items():
            methods = set().union(*callers.values())
            assert not methods & {"truth", "records", "history", "seconds", "pair"}, party
            assert set(callers) <= {"helper-0", "browsers"}


def test_federated_training_resumes_from_each_partys_own_checkpoints(tmp_path):
    """A finished training's checkpoints resumed (runtime=federated, each party its own plan
    and store): steps 7-8 run again from step 6, to the same rows."""
    options = MaskedLarkOptions(task="train", epochs=2, batch_size=128)
    keys = dict(parties=2, dataset="breast_cancer", checkpoint_every=3, run_id="lark")
    whole = _run(tmp_path, "federated", 62, options, **keys)
    held = sorted(p.name for p in (tmp_path / "checkpoints" / "lark").iterdir())
    assert held == ["adnet", "helper-0", "helper-1", "settings.json"]
    resumed = _run(tmp_path, "federated", 62, options, **{**keys, "resume": "lark"})
    assert [row["step"] for row in resumed.rows if row["replayed"]] == [6, 7]
    assert _replayed_aside(resumed.rows) == _replayed_aside(whole.rows)


def _replayed_aside(rows: list) -> list:
    return [{k: v for k, v in row.items() if k != "replayed"} for row in rows]
