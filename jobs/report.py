"""Draw the figures of a results folder: ``python -m jobs.report results_dir=results``.

Reads every Parquet run in ``results_dir`` as one dataset and draws each figure whose experiment
has runs there (ppml/experiments/figures.py), into ``figures_dir`` (default
``<results_dir>/figures``).  A run file that is not readable Parquet (corrupted, cut short) is
left out with a warning on stderr naming it, and the report goes on with the other runs: a folder
of many runs should not lose its figures to one damaged file.  A figure whose runs mix settings
it does not plot is not drawn; its line ``not drawn: ...`` names the settings to hold fixed.
A bar counts the figures drawn (``progress=false``: none).
"""

from jobs.cli import options as parse_options, run_command
from ppml.experiments.figures import draw_all
from ppml.runtime import progress

DEFAULTS = {"results_dir": "results", "figures_dir": None}


def main(argv=None) -> list:
    options = parse_options(DEFAULTS, argv)
    refused = []
    with progress.showing(options["progress"]):
        paths = draw_all(options["results_dir"], options["figures_dir"], refused)
    for path in paths:
        print(path)
    for message in refused:
        print(f"not drawn: {message}")
    if not paths and not refused:
        print(f"no runs with figures in {options['results_dir']}")
    return paths


if __name__ == "__main__":
    run_command(main)
