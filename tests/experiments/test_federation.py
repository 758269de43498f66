"""A federated run hands every party the whole config as Hydra overrides; each composes back
exactly the same config, lists and quoted strings included."""

from ppml.experiments.config import RunConfig, load_config
from ppml.experiments.federation import overrides
from ppml.protocols.pprl.config import PPRLOptions


def test_overrides_compose_back_to_the_same_config(compose_run_config):
    config = RunConfig(experiment="pprl", seed=4, results_dir="it's here", data_dir="/data",
                       pprl=PPRLOptions(methods=["crl", "idrl"], trials=3), run_id="r-1")
    again = load_config(compose_run_config(*overrides(config)))
    assert again.columns() == config.columns()
