"""Draw the figures of a results folder: ``python -m jobs.report results_dir=results``.

Reads every Parquet run in ``results_dir`` as one dataset and draws each figure whose experiment
has runs there (ppml/experiments/figures.py), into ``figures_dir`` (default
``<results_dir>/figures``).
"""

import sys

from ppml.experiments.figures import draw_all

KEYS = ("results_dir", "figures_dir")


def parse(argv: list) -> dict:
    """``key=value`` arguments; only the keys in KEYS are accepted."""
    options = {"results_dir": "results", "figures_dir": None}
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or key not in KEYS:
            raise SystemExit(f"jobs.report takes {' '.join(k + '=...' for k in KEYS)}; got {arg!r}")
        options[key] = value
    return options


def main(argv=None) -> list:
    options = parse(sys.argv[1:] if argv is None else argv)
    paths = draw_all(options["results_dir"], options["figures_dir"])
    for path in paths:
        print(path)
    if not paths:
        print(f"no runs with figures in {options['results_dir']}")
    return paths


if __name__ == "__main__":
    main()
