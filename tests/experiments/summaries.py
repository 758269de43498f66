"""What every printed summary must do (`ppml.experiments.table`)."""

from ppml.experiments.table import WIDTH


def fits(printed: str) -> bool:
    """Whether every line of ``printed`` (a summary table, or a job's output, up to its
    ``results:`` line) is at most `WIDTH` characters."""
    return max(map(len, printed.partition("results: ")[0].splitlines())) <= WIDTH
