"""The ``masked_lark`` config group (Charles et al., Masked LARK): what the browsers report, the
sparse-reporting threshold k, the noise the helpers add and the synthetic log.  Each value is
checked once, when the object is made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ppml.checks import check_bool, check_int, check_one_of, check_positive, check_real
from ppml.privacy.discrete import FAMILIES
from ppml.protocols.masked_lark.models import MODELS

TASKS = ("aggregate", "train")
"""``aggregate``: the differentially private map-reduce of conversion reports (slides
"Requirements for Helpers" and "Example: Counting conversions"); ``train``: a conversion model
trained by minibatch SGD on masked gradients (slide "Our solution - Masked aggregation")."""
MAX_VALUE_BITS = 40
"""The largest bound B a report's coordinate may have is 2^40: sums of up to 2^22 reports stay
far inside the ring's signed half, and the range check's comparisons are exact there."""


@dataclass
class MaskedLarkOptions:
    """The ``masked_lark`` group."""

    task: str = "aggregate"
    """One of `TASKS`."""
    reports: int = 10_000
    """Browsers reporting in the time window, one report each."""
    d: int = 2
    """Coordinates of a report's value vector (the slides' <clicks, conversions>: 2)."""
    bound: int = 1
    """B: every coordinate of an honest report lies in [0, B]; the helpers check it on their
    shares before a report counts, so one report moves a sum by at most B."""
    k: int = 10
    """The sparse-reporting threshold: a key reported by fewer than k distinct users is
    dropped (slide "Requirements for Helpers")."""
    noise: str = "gaussian"
    """The noise family each helper adds: one of `ppml.privacy.discrete.FAMILIES`."""
    epsilon: float = 1.0
    """The privacy the ad network publishes for one release, with `delta` for the Gaussian;
    it sets sigma_hat (docs/masked-lark.md) unless `sigma_hat` is given."""
    delta: float = 1e-9
    """The Gaussian's delta of (epsilon, delta)-DP per release."""
    sigma_hat: Optional[float] = None
    """The noise scale per independent observation (the slides' notes): each helper draws its
    noise at scale sigma_hat * sqrt(k).  None: the scale that gives `epsilon`."""
    queries: int = 200
    """Distinct queries of the synthetic log."""
    advertisers: int = 20
    """Distinct advertisers of the synthetic log."""
    zipf: float = 1.1
    """The exponent of the Zipf law of the (query, advertiser) keys' popularity."""
    click_rate: float = 0.3
    """The chance that a report's browser clicked (else it only saw the ad)."""
    conversion_rate: float = 0.1
    """The chance that a click converts."""
    fake_records: int = 0
    """Per browser, self-cancelling pairs of fake records added to its report (slides
    "Masked LARK - Notes"); they change no released sum."""
    polluters: int = 0
    """Browsers that report out of range (every coordinate B + 1; the range check drops
    them)."""
    model: Optional[str] = None
    """task=train: one of `models.MODELS`; None: logistic for two classes, else softmax."""
    epochs: int = 3
    """task=train: passes over the training examples."""
    batch_size: int = 64
    """task=train: examples per SGD step (the last batch of an epoch may be smaller)."""
    learning_rate: float = 0.5
    """task=train: the SGD step size on the mean gradient."""
    clip: float = 1.0
    """task=train: every per-example gradient is clipped to this L2 norm (the noise's
    sensitivity)."""
    private: bool = True
    """task=train: the helpers add noise for ``epsilon`` per epoch; false: masked gradients
    without noise (exact)."""

    def __post_init__(self) -> None:
        check_one_of("masked_lark.task", self.task, TASKS)
        check_int("masked_lark.reports", self.reports, 1)
        check_int("masked_lark.d", self.d, 1, 1024)
        check_int("masked_lark.bound", self.bound, 1, 2**MAX_VALUE_BITS)
        check_int("masked_lark.k", self.k, 1)
        check_one_of("masked_lark.noise", self.noise, FAMILIES)
        check_positive("masked_lark.epsilon", self.epsilon)
        check_real("masked_lark.delta", self.delta, 0.0, 1.0, low_open=True, high_open=True)
        if self.sigma_hat is not None:
            check_positive("masked_lark.sigma_hat", self.sigma_hat)
        check_int("masked_lark.queries", self.queries, 1)
        check_int("masked_lark.advertisers", self.advertisers, 1)
        check_positive("masked_lark.zipf", self.zipf)
        for name in ("click_rate", "conversion_rate"):
            check_real(f"masked_lark.{name}", getattr(self, name), 0.0, 1.0)
        check_int("masked_lark.fake_records", self.fake_records, 0)
        check_int("masked_lark.polluters", self.polluters, 0, self.reports)
        if self.model is not None:
            check_one_of("masked_lark.model", self.model, MODELS)
        check_int("masked_lark.epochs", self.epochs, 1)
        check_int("masked_lark.batch_size", self.batch_size, 1)
        check_positive("masked_lark.learning_rate", self.learning_rate)
        check_positive("masked_lark.clip", self.clip)
        check_bool("masked_lark.private", self.private)
