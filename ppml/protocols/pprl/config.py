"""The ``pprl`` config group (Sakuma et al., section 6): the task, how its perceptions are
partitioned among the agents, the learner, the action selection, the methods to run and the
fixed point of the protocol.  Each value is checked once, when the object is made."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from ppml.checks import check_int, check_one_of, check_positive, check_real, check_text
from ppml.crypto.paillier.pool import OBFUSCATORS
from ppml.protocols.pprl.learners import LEARNERS, MAX_SCALE_BITS, SELECTIONS

PARTITIONS = ("time", "observation")
BACKENDS = ("paillier", "shares")
"""PPRL's Q-table under Paillier (the paper's) or as Z/2^64 shares between the agents
(`shares`, beyond the paper)."""
METHODS = ("crl", "crl_fixed", "idrl", "rdrl", "pprl")
"""The plaintext methods: CRL (one agent holds every perception; float64), CRL in the
protocol's fixed point (`learners.FixedPointQ`), IDRL (each agent learns alone from its own
perceptions) and RDRL (IDRL with the global reward shared; partitioned by observation only);
and PPRL, the encrypted protocol (`protocol` partitioned by time, `observation` partitioned by
observation)."""
OBSERVATION_TASKS = ("load_balancing",)
"""Tasks whose state, action and reward are split among the agents."""
TASK_REWARD_BOUNDS = {"random_walk": 1.0, "load_balancing": 50.0}
"""The largest |reward| of each of section 6's tasks, per agent (load balancing: a factory's;
the global reward of m factories is bounded by m times it)."""


@dataclass
class PPRLOptions:
    """The ``pprl`` group."""

    task: str = "random_walk"
    """``random_walk``, ``load_balancing`` or a discrete Gymnasium id (`tasks.make`)."""
    partition: str = "time"
    """``time`` (the agents take turns with the environment) or ``observation`` (each agent
    perceives its own part of every step; load_balancing)."""
    learner: str = "sarsa"
    """One of `learners.LEARNERS`."""
    selection: str = "random"
    """One of `learners.SELECTIONS`."""
    methods: list = field(default_factory=lambda: ["crl", "crl_fixed", "idrl"])
    """The `METHODS` to run, e.g. ``pprl.methods=[crl,idrl]`` (rdrl: partition=observation
    only)."""
    alpha: float = 0.1
    """Learning rate (the paper does not give it)."""
    gamma: float = 0.9
    """Discount rate (the paper does not give it)."""
    epsilon: float = 0.1
    """epsilon-greedy's exploration probability (the paper does not give it)."""
    trials: int = 30
    """Independent trials (section 6.1: 30; section 6.2: 100)."""
    steps_per_agent: int = 15_000
    """partition=time: learning steps of each agent's turn (section 6.1: A 15,000, then B)."""
    rounds: int = 1
    """partition=time: how many times the turns go round the agents (section 6.1: once;
    section 4.1's general setting: more, each return to the owner switching the key)."""
    episodes: int = 1000
    """partition=observation: learning episodes (the paper does not say; docs/pprl.md)."""
    episode_steps: int = 100
    """partition=observation: steps per episode (the paper does not say; docs/pprl.md)."""
    scale_bits: int = 128
    """The protocol's L = 2^scale_bits: Q-values and rewards are held scaled by L."""
    obfuscator: str = "full"
    """PPRL's Paillier obfuscators, precomputed before each turn: ``full`` (r^n),
    ``multibase`` (within 2^-128 of r^n, 3-5x cheaper each after 260 r^n per pool: the choice
    for long turns) or ``djn`` (short exponents: cheaper still, and only about 80-bit secure
    against the key owner, who could then link the masked values it opens to table entries);
    docs/paillier.md and docs/pprl.md."""
    reward_bound: Optional[float] = None
    """The largest |reward| the learner sees (the protocol's plaintext bounds); None: the task's
    own (random walk 1, load balancing 50 per factory); a Gymnasium task needs it."""
    backend: str = "paillier"
    """One of `BACKENDS`: ``shares`` keeps the table as Z/2^64 shares (L small
    enough that |K dQ| < 2^62)."""
    trials_together: int = 1
    """backend=shares, partition=observation: how many trials one engine runs at once, each
    round carrying all of them (each trial's result is its own, the rounds shared); the
    others: 1."""
    division_bits: int = 16
    """The protocol's K = 2^division_bits: alpha K and alpha gamma K are rounded to integers and
    each update divided by K (a floor)."""

    def __post_init__(self) -> None:
        check_text("pprl.task", self.task)
        check_one_of("pprl.partition", self.partition, PARTITIONS)
        check_one_of("pprl.learner", self.learner, LEARNERS)
        check_one_of("pprl.selection", self.selection, SELECTIONS)
        check_one_of("pprl.obfuscator", self.obfuscator, OBFUSCATORS)
        check_one_of("pprl.backend", self.backend, BACKENDS)
        if isinstance(self.methods, str) or not isinstance(self.methods, Sequence) \
                or not self.methods:
            raise ValueError(f"pprl.methods must be a non-empty list of {', '.join(METHODS)} "
                             f"(pprl.methods=[crl,idrl]), got {self.methods!r}")
        for method in self.method_list():
            check_one_of("pprl.methods", method, METHODS)
        if self.partition == "observation" and self.task not in OBSERVATION_TASKS:
            raise ValueError(f"pprl.partition=observation needs a task whose perceptions are "
                             f"split among agents ({', '.join(OBSERVATION_TASKS)}), got "
                             f"pprl.task={self.task!r}")
        if self.partition == "time" and self.task in OBSERVATION_TASKS:
            raise ValueError(f"pprl.task={self.task!r} is partitioned by observation; set "
                             "pprl.partition=observation")
        if "rdrl" in self.method_list() and self.partition != "observation":
            raise ValueError("pprl.methods: rdrl shares the global reward of a task partitioned "
                             "by observation; with pprl.partition=time there is one reward")
        check_real("pprl.alpha", self.alpha, 0.0, 1.0, low_open=True)
        check_real("pprl.gamma", self.gamma, 0.0, 1.0, high_open=True)
        check_real("pprl.epsilon", self.epsilon, 0.0, 1.0)
        if self.reward_bound is not None:
            check_positive("pprl.reward_bound", self.reward_bound)
        check_int("pprl.trials", self.trials, 1)
        check_int("pprl.steps_per_agent", self.steps_per_agent, 1)
        check_int("pprl.rounds", self.rounds, 1)
        check_int("pprl.episodes", self.episodes, 1)
        check_int("pprl.episode_steps", self.episode_steps, 1)
        check_int("pprl.scale_bits", self.scale_bits, 1, MAX_SCALE_BITS)
        check_int("pprl.division_bits", self.division_bits, 1, MAX_SCALE_BITS)
        check_int("pprl.trials_together", self.trials_together, 1)
        if self.trials_together > 1 and (self.backend, self.partition) != ("shares",
                                                                           "observation"):
            raise ValueError(f"pprl.trials_together={self.trials_together} runs trials together "
                             f"on the shares backend partitioned by observation only (pprl."
                             f"backend=shares pprl.partition=observation); here it must be 1")

    def task_reward_bound(self, agents: int = 1) -> float:
        """`reward_bound`, or the task's own bound on the reward its learner sees (partitioned
        by observation: the global reward of ``agents``)."""
        if self.reward_bound is not None:
            return self.reward_bound
        if self.task not in TASK_REWARD_BOUNDS:
            raise ValueError(f"pprl.reward_bound must be set for pprl.task={self.task!r} (the "
                             "largest |reward|: the protocol's plaintexts are bounded by it)")
        shared = agents if self.partition == "observation" else 1
        return TASK_REWARD_BOUNDS[self.task] * shared

    def method_list(self) -> list:
        return list(self.methods)

