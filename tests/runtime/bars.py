"""Reading the bars of `ppml.runtime.progress` in captured stderr."""

import re


def final(err: str, desc: str) -> str:
    """The last drawing of the bar named ``desc`` in ``err``, from its name on ("" if it never
    showed): tqdm redraws a bar in place, after a carriage return (a bar below another also
    after a newline and a cursor move)."""
    draws = [line[line.index(f"{desc}:"):] for line in re.split(r"[\r\n]", err)
             if f"{desc}:" in line]
    return draws[-1] if draws else ""


def complete(err: str, desc: str) -> bool:
    """Whether the bar named ``desc`` showed and its last drawing is n/n (n >= 1)."""
    return re.search(r"\b([1-9]\d*)/\1\b", final(err, desc)) is not None
