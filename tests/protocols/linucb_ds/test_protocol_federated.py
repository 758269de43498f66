"""DO, DC, P and Comp each their own OS process over TLS links on loopback
(runtime=federated): the local runtime's arms and DC's exact sum, in the seeded mode, for
LinUCB-DS and SpectralUCB-DS; unseeded, P's own coins and the parties' own keys still give
the fixed-point reference's arms and sum."""

import pytest

from ppml.experiments.config import RunConfig
from ppml.experiments.linucb_ds import linucb_ds, spectral_ucb_ds

pytestmark = pytest.mark.slow

BASE = {"dataset": "synthetic", "arms": 4, "dims": 3, "horizon": 6, "key_bits": 1024,
        "insecure_key_bits_ok": True, "progress": False, "party_timeout_s": 60}


@pytest.mark.parametrize("experiment", [linucb_ds, spectral_ucb_ds])
def test_federated_parties_take_the_local_runtime_s_arms_and_sum(tmp_path, experiment):
    base = {**BASE, "experiment": experiment.__name__, "seed": 3,
            "results_dir": str(tmp_path)}
    local = experiment(RunConfig.from_columns({"runtime": "local", **base}))
    federated = experiment(RunConfig.from_columns({"runtime": "federated", **base}))
    assert [r["arm"] for r in local.rows] == [r["arm"] for r in federated.rows]
    assert local.summary["secure_cumulative_reward"] == \
        federated.summary["secure_cumulative_reward"]
    assert federated.summary["sum_exact"] and federated.summary["arm_agreement"] == 1.0
    assert federated.summary["decryptions"] == local.summary["decryptions"]


def test_an_unseeded_federated_run_matches_its_reference(tmp_path):
    out = linucb_ds(RunConfig.from_columns({**BASE, "experiment": "linucb_ds",
                                            "runtime": "federated",
                                            "results_dir": str(tmp_path)}))
    assert out.summary["sum_exact"] and out.summary["arm_agreement"] == 1.0


def test_federated_refuses_record_views(tmp_path):
    with pytest.raises(ValueError, match="record_views=true is not supported"):
        linucb_ds(RunConfig.from_columns({**BASE, "experiment": "linucb_ds",
                                          "runtime": "federated", "record_views": True,
                                          "results_dir": str(tmp_path)}))
