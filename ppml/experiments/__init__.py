"""Experiments: the run configuration, the registry of experiments and the Parquet results sink.

Importing this package registers every experiment: each experiment module is imported below and
registers itself with `ppml.experiments.registry.register`.
"""

from ppml.experiments import registry

# Experiment modules (each registers itself on import), one import line per experiment:
from ppml.experiments import bench_ops, truncation_study  # noqa: F401,E402
from ppml.experiments import private_cb, private_cb_figures, private_cb_parties  # noqa: F401,E402
from ppml.experiments import samba, samba_figures, samba_parties  # noqa: F401,E402
from ppml.experiments import linucb_ds, linucb_ds_figures, linucb_ds_parties  # noqa: F401,E402
from ppml.experiments import pprl, pprl_figures, pprl_parties  # noqa: F401,E402
from ppml.experiments import masked_lark, masked_lark_figures, masked_lark_parties  # noqa: F401,E402
from ppml.experiments import scaling_figures  # noqa: F401,E402
