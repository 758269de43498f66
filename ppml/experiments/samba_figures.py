"""Samba's Fig. 8 (Ciucanu et al., section 6.2), drawn from whatever samba runs (`jobs.run
experiment=samba`) and bench_samba rows (`jobs.bench_samba`) a results folder holds
(`jobs.report`).  A figure without data for it is not drawn.

* Fig. 8(a): seconds against N at the largest K timed at two or more N (K = 100 in the paper and
  in ``bench_samba sweep=fig8a``), one line per algorithm;
* Fig. 8(b): seconds against K at the largest N timed at two or more K (N = 10^5: ``sweep=fig8b``);
  in both the secure run is solid, the plaintext reference dashed and the protocol without
  cryptography dotted.  Time does not depend on the dataset (section 6.2), so both datasets'
  runs are averaged; one panel per mask; the runs must share the runtime, key size and DO
  placement;
* Fig. 8(c): cumulative reward per algorithm (groups) and dataset (bars), the plaintext
  reference's as a black tick on each bar (Theorem 2: they are equal);
* Fig. 8(d): seconds of each participant (Comp, the Controller, one DO on average, DC with its
  key generation) per algorithm.

(c) and (d) use samba runs only (bench_samba rows carry neither rewards nor participants' times),
one panel per (K, N).  Runs that share a point (seeds, datasets) are averaged; error bars are one
standard deviation.  Every figure's caption lists the settings it holds fixed; runs that differ
in one of them are refused (`ppml.experiments.figures.MixedSettings`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ppml.protocols.samba.policies import ALGORITHMS
from ppml.experiments.figures import (draw_panels, figure, fixed_settings, grouped_bars,
                                      line_figure, runs_of, save)

TIME_SETTINGS = ("runtime", "key_bits", "samba.owners_per_actor", "samba.mask")
"""Settings that change a run's time; the others (dataset, algorithm parameters) barely do."""
REWARD_SETTINGS = ("samba.threshold", "samba.denominator", "samba.min_ratings",
                   "data_seed", "samba.epsilon", "samba.eps_decay", "samba.ucb_c",
                   "samba.softmax_tau", "samba.pursuit_beta", "samba.mask")
"""Settings that change a run's reward besides the algorithm, the dataset, K and N."""
TIMES = {"samba": ("wall_s", "plaintext_wall_s", "distributed_wall_s"),
         "bench_samba": ("secure_s", "plaintext_s", "distributed_s")}
"""Each source's columns of the secure, plaintext and crypto-free seconds."""
PARTICIPANTS = (("comp_s", "Comp"), ("controller_s", "Controller"),
                ("owner_mean_s", "each DO (mean)"), ("dc_s", "DC"))


def timed_runs(rows: list) -> list:
    """One dict per timed run of either source, its secure, plaintext and crypto-free seconds
    under samba's names (a samba run is its last row; every bench_samba row is a run)."""
    samba = runs_of([r for r in rows if r["experiment"] == "samba"])
    bench = [r for r in rows if r["experiment"] == "bench_samba"]
    return [{**run, **dict(zip(TIMES["samba"], (run.get(c) for c in TIMES[run["experiment"]])))}
            for run in samba + bench]


def _time_against(rows: list, x: str, held: str, folder: Path, labels: tuple) -> Path | None:
    """Seconds against ``x`` at the largest value of ``held`` with two or more values of ``x``.

    ``labels`` is (file name, x label, held label, figure).
    """
    runs = timed_runs(rows)
    swept = [v for v in {r[held] for r in runs}
             if len({r[x] for r in runs if r[held] == v}) >= 2]
    if not swept:
        return None
    name, xlabel, held_label, number = labels
    at = max(swept)
    return line_figure([r for r in runs if r[held] == at], folder, x, "samba.algorithm",
                       lambda r: r["wall_s"],
                       ("algorithm", name, xlabel, "seconds",
                        f"Samba: time against {xlabel} at {held_label} = {at} ({number})"),
                       settings=TIME_SETTINGS,
                       references=((lambda r: r["plaintext_wall_s"], "plaintext"),
                                   (lambda r: r["distributed_wall_s"], "no crypto")),
                       panels="samba.mask",
                       note="Runs at the same point (datasets, seeds) averaged: time does not "
                            "depend on the dataset (section 6.2).")


@figure("samba", "bench_samba")
def time_against_budget(rows: list, folder: Path) -> Path | None:
    """Fig. 8(a): seconds against the budget N, one line per algorithm (K = 100 in the paper)."""
    return _time_against(rows, "horizon", "arms", folder,
                         ("samba_fig8a_time_vs_budget", "budget N", "K", "Fig. 8(a)"))


@figure("samba", "bench_samba")
def time_against_arms(rows: list, folder: Path) -> Path | None:
    """Fig. 8(b): seconds against the number of arms K, one line per algorithm (N = 10^5)."""
    return _time_against(rows, "arms", "horizon", folder,
                         ("samba_fig8b_time_vs_arms", "arms K", "N", "Fig. 8(b)"))


def _algorithms(runs: list) -> list:
    """The algorithms of ``runs`` in Fig. 4's order."""
    return [a for a in ALGORITHMS if any(r["samba.algorithm"] == a for r in runs)]


def _per_algorithm(runs: list, value) -> tuple[dict, dict]:
    """algorithm -> mean, and algorithm -> standard deviation, of ``value(run)``."""
    groups = {a: [value(r) for r in runs if r["samba.algorithm"] == a] for a in _algorithms(runs)}
    return ({a: float(np.mean(v)) for a, v in groups.items()},
            {a: float(np.std(v)) for a, v in groups.items()})


def _per_size(rows: list, folder: Path, name: str, draw, settings: tuple, title: str,
              note: str) -> Path | None:
    """One panel per (K, N) of the runs in ``rows``, drawn by ``draw(ax, its runs)``
    (`draw_panels`), ``settings`` held fixed; None without runs."""
    runs = runs_of(rows)
    if not runs:
        return None
    sizes = sorted({(r["arms"], r["horizon"]) for r in runs})
    panels = [(f"K = {K}, N = {N}", [r for r in runs if (r["arms"], r["horizon"]) == (K, N)])
              for K, N in sizes]
    fig, _ = draw_panels(panels, draw, (7, 4), title)
    return save(fig, folder, name, fixed_settings(runs, (), settings, name), note)


@figure("samba")
def reward_per_algorithm(rows: list, folder: Path) -> Path | None:
    """Fig. 8(c): cumulative reward per algorithm and dataset, secure bars, plaintext ticks,
    one panel per (K, N)."""
    return _per_size(rows, folder, "samba_fig8c_reward", _rewards, REWARD_SETTINGS,
                     "Samba: cumulative reward per algorithm (Fig. 8(c))",
                     "Runs at the same point (seeds) averaged.")


def _rewards(ax, runs: list) -> None:
    """Fig. 8(c)'s bars of ``runs`` (one K and N) on ``ax``."""
    by_dataset = {d: [r for r in runs if r["dataset"] == d]
                  for d in sorted({r["dataset"] for r in runs})}
    secure = {d: _per_algorithm(mine, lambda r: r["secure_cumulative_reward"])
              for d, mine in by_dataset.items()}
    algorithms = _algorithms(runs)
    positions = grouped_bars(ax, {d: s[0] for d, s in secure.items()}, algorithms,
                             {d: s[1] for d, s in secure.items()})
    for k, (d, mine) in enumerate(by_dataset.items()):
        plain, _ = _per_algorithm(mine, lambda r: r["plaintext_cumulative_reward"])
        ax.plot([positions[d][algorithms.index(a)] for a in plain], list(plain.values()),
                "k_", markersize=14, markeredgewidth=2, label="plaintext" if k == 0 else None)
    ax.set_ylabel("cumulative reward")
    ax.legend(fontsize=8)


@figure("samba")
def time_per_participant(rows: list, folder: Path) -> Path | None:
    """Fig. 8(d): each participant's own seconds per algorithm, one panel per (K, N)."""
    return _per_size(rows, folder, "samba_fig8d_time_per_participant", _participants,
                     TIME_SETTINGS, "Samba: time per participant (Fig. 8(d))",
                     "Runs at the same point (seeds, datasets) averaged.")


def _participants(ax, runs: list) -> None:
    """Fig. 8(d)'s bars of ``runs`` (one K and N) on ``ax``."""
    seconds = {label: _per_algorithm(runs, lambda r, c=column: r[c])
               for column, label in PARTICIPANTS}
    grouped_bars(ax, {p: s[0] for p, s in seconds.items()}, _algorithms(runs),
                 {p: s[1] for p, s in seconds.items()})
    ax.set_ylabel("seconds")
    ax.legend(fontsize=8)
