"""jobs/bench_paillier.py runs end to end at a tiny size and writes its table."""

import pytest

from jobs import bench_paillier
from jobs.cli import InputError
from ppml.experiments.results import read_results


def test_the_benchmark_writes_every_operation(tmp_path, capsys):
    """In-process only (workers=1): the Ray paths are tested in test_bulk.py."""
    bench_paillier.main(["key_bits=512", "values=4", "dim=2", "repeats=1", "workers=1",
                         f"results_dir={tmp_path}"])
    rows = read_results(tmp_path).to_pylist()
    assert {r["op"] for r in rows} == {"keygen", "encrypt", "decrypt", "scalar product",
                                       "dot product", "bulk decrypt", "bulk matvec (values x dim)"}
    assert {r["method"] for r in rows if r["op"] == "bulk decrypt"} == {"workers=1"}
    assert all(r["seconds"] > 0 and r["speedup"] > 0 for r in rows)
    assert "results:" in capsys.readouterr().out


def test_bad_options_are_refused(tmp_path):
    with pytest.raises(InputError, match="dim must be <= values"):
        bench_paillier.main(["values=2", "dim=3", f"results_dir={tmp_path}"])
