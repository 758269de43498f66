import numpy as np
import pytest

from ppml.runtime import spmd

PARTIES = (2, 3, 5)


def run_local(program, parties, seed=11, **kwargs):
    """Run ``program`` with every party in this process and return party 0's output."""
    return spmd.run(program, parties=parties, runtime="local", seed=seed, **kwargs)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
