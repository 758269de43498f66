"""What the property tests share (tests/*/test_*properties.py): their settings, numbers of
every numpy dtype inside a bound, the bad inputs every entry point must refuse, and
`assert_refused`, the one rule for a refusal.

The rule (issue: property tests of every public entry point): a call either returns the right
answer within its documented error, or raises a ValueError or TypeError whose message names the
parameter.  Any other exception, or a message that does not name the parameter, fails.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
NUMBER_DTYPES = ("bool",) + INT_DTYPES + FLOAT_DTYPES
"""Every real numpy dtype a caller may hand over."""

NOT_NUMBERS = (
    "abc", np.array(["1", "2"]), b"12", None, {}, [[1.0], [2.0, 3.0]],
    np.array([1.0, None], dtype=object), np.array(["2020-01-01"], dtype="datetime64[D]"),
    np.array([1, 2], dtype="timedelta64[s]"),
)
"""Values that are no array of real numbers: strings, bytes, None, a dict, a ragged list, an
object array holding None, dates and time spans."""


def fast(examples: int) -> settings:
    """A property's settings: ``examples`` examples, no deadline, and a fixed seed so that CI
    runs the same examples every time."""
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def assert_refused(call, *names: str, errors=(ValueError, TypeError)) -> Exception:
    """``call()`` must raise one of ``errors`` (a class or a tuple) whose message contains every
    one of ``names``; returns the exception.  A result, another exception type, or a message
    that misses a name fails, saying what happened instead."""
    errors = errors if isinstance(errors, tuple) else (errors,)
    try:
        result = call()
    except errors as exc:
        missing = [name for name in names if name not in str(exc)]
        assert not missing, f"{type(exc).__name__} does not name {missing}: {exc}"
        return exc
    except Exception as exc:                                          # noqa: BLE001
        raise AssertionError(f"raised {type(exc).__name__} instead of "
                             f"{' or '.join(e.__name__ for e in errors)}: {exc}") from exc
    raise AssertionError(f"accepted, returned {result!r:.200}")


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 3):
    """Small array shapes, empty ones included unless ``min_side`` > 0."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def _elements(dtype: np.dtype, bound: float):
    """Values of ``dtype`` with |v| < ``bound``."""
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        top = int(np.ceil(bound)) - 1
        return st.integers(max(int(info.min), -top), min(int(info.max), top))
    top = min(float(bound), float(np.finfo(dtype).max))
    return st.floats(-top, top, exclude_min=top == bound, exclude_max=top == bound,
                     width=8 * dtype.itemsize)


@st.composite
def arrays(draw, shape, bound: float, dtypes=NUMBER_DTYPES) -> np.ndarray:
    """An array of ``shape`` of a dtype drawn from ``dtypes``, every |v| < ``bound`` (a
    power of two, or any bound exactly representable in the float dtypes)."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    return draw(hnp.arrays(dtype, shape, elements=_elements(dtype, bound)))


@st.composite
def given_as(draw, array: np.ndarray):
    """``array`` as a caller may give it: the array, a nested list (when not empty: an empty list
    has neither shape nor dtype), or (0-d) a Python or numpy scalar."""
    forms = [array] + ([array.tolist()] if array.size else []) + \
        ([array[()], array.item()] if array.ndim == 0 else [])
    return draw(st.sampled_from(forms))


@st.composite
def non_finite(draw, shape) -> np.ndarray:
    """A float array of ``shape`` (size >= 1) with NaN, inf or -inf at one random place."""
    x = draw(arrays(shape, 1.0, FLOAT_DTYPES))
    flat = x.reshape(-1)
    flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    return x


@st.composite
def complex_values(draw, shape) -> np.ndarray:
    """Complex values (imaginary parts possibly zero): they must never lose them silently."""
    dtype = draw(st.sampled_from(["complex64", "complex128"]))
    values = draw(arrays(shape, 4.0, ("float32",)))
    return (values + 1j * draw(st.sampled_from([0.0, 0.5]))).astype(dtype)


@st.composite
def too_large(draw, shape, bound: int, integers: bool = False) -> np.ndarray:
    """An array of ``shape`` (size >= 1, or a strategy of shapes) whose largest |v| is at least
    ``bound`` (a power of two at most 2^63): a float, a Python integer (up to 2^200), or an
    unsigned 64-bit word (at or above 2^63 it would read as negative); integers only with
    ``integers``."""
    kinds = ["python int", "uint64"] + ([] if integers else ["float"])
    kind = draw(st.sampled_from(kinds))
    shape = draw(shape) if isinstance(shape, st.SearchStrategy) else shape
    x = np.zeros(shape, dtype=object if kind == "python int" else
                 np.uint64 if kind == "uint64" else np.float64)
    flat = x.reshape(-1)
    at = draw(st.integers(0, flat.size - 1))
    sign = draw(st.sampled_from([1, -1]))
    if kind == "float":
        flat[at] = sign * draw(st.floats(float(bound), 1e300))
    elif kind == "python int":
        flat[at] = sign * draw(st.integers(bound + (sign < 0), 2**200))   # -2^63 is an int64
    else:
        flat[at] = draw(st.integers(min(bound, 2**63), 2**64 - 1))
    return x
