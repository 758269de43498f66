"""jobs/federated_local.py: ``python -m jobs.run`` with ``runtime=federated``, refusing what
jobs.run refuses (its runs are in test_federated_commands.py)."""

import pytest

from jobs.cli import InputError
from jobs.federated_local import main


def test_another_runtime_is_refused():
    with pytest.raises(InputError, match="runs runtime=federated only"):
        main(["experiment=private_cb", "runtime=ray"])


def test_a_key_spelt_the_old_way_is_refused_with_its_new_name():
    with pytest.raises(InputError, match="algorithm is now samba.algorithm"):
        main(["experiment=samba", "algorithm=ucb"])
