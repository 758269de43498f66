"""``python -m jobs.performance``: the README's command as written at ``size=small`` (one row per
family, each slowdown its secure seconds over the plaintext loop's, measured in the same run),
and its refusals."""

import re

import pyarrow.parquet as pq
import pytest

from jobs import performance
from jobs.cli import InputError
from tests.jobs.readme import readme_commands, run_command

(COMMAND,) = readme_commands("python -m jobs.performance")


def test_the_readme_command_measures_every_family_against_its_plaintext(tmp_path):
    done = run_command(COMMAND, ["size=small", "progress=false", f"results_dir={tmp_path}"])
    (written,) = re.findall(r"results: (\S+\.parquet)", done.stdout)
    rows = pq.read_table(written).to_pylist()
    assert [row["family"] for row in rows] == list(performance.FAMILIES)
    for row in rows:
        assert 0 < row["secure_online_s"] <= row["secure_total_s"], row["family"]
        assert row["slowdown_total"] == pytest.approx(row["secure_total_s"] / row["plaintext_s"])
        assert row["slowdown_online"] <= row["slowdown_total"], row["family"]
        assert row["agreement"] >= 0.95, row["family"]
        assert row["counts"] == performance.COUNTS[row["family"]]


@pytest.mark.parametrize("argv, named", [(["size=huge"], "size must be one of issue, small"),
                                         (["families=samba,lark"], "families must be among")])
def test_an_unknown_size_or_family_is_refused_by_name(argv, named):
    with pytest.raises(InputError, match=named):
        performance.main(argv)
