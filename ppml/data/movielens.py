"""MovieLens 100K user and movie embeddings by alternating least squares (Ciucanu et al.,
LinUCB-DS, section 5).

"The collection of ratings is represented by a matrix F (943x1682) [...] we factored it using
low-rank matrix factorization [...] a user embedding matrix U (943 x d) [...] and a movie
embedding matrix M (1682 x d) [...] learned such that the product UM^T is a good approximation
of the ratings matrix F."  The authors' factor.py re-initialises its TensorFlow variables after
training, so the embeddings they shipped are the random normal start, not a factorization; ppml
fits its own and reports the error so it is visible that they are trained.

Split: ml-100k's own ``u1.base`` / ``u1.test``, made from ``u.data`` by the dataset's ``mku.sh``:
u1.test is lines 1..20,000 of u.data and u1.base the other 80,000, each sorted numerically by
user then item (`mku_split`).  The factorization sees u1.base only; RMSE is reported on both.

Model: ratings r_ui ~ p_u . q_i with no bias and no centring, so that the dot product of a user's
and a movie's embedding *is* the expected rating, as the paper's linear bandit needs (theta = p_u,
arm x_i = q_i, reward theta . x_i).  The first factor learns the positive mean level; measured,
this is as accurate as factorising mean-centred ratings (docs/data.md).  Objective (ALS-WR, Zhou
et al. 2008): sum over training ratings of (r_ui - p_u . q_i)^2 + lambda (sum_u n_u |p_u|^2 +
sum_i n_i |q_i|^2), n the number of training ratings, lambda = 0.15 (chosen on a validation fold
inside u1.base, never on u1.test), 20 alternations from a seeded start.  Movies with no rating in
u1.base (32, each rated once in all of u.data) get the zero embedding.

The fit takes a fraction of a second for d <= 10 and is cached on disk (ppml.data.cache) per
(d, seed, u.data's SHA-256, the constants above).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Union

import numpy as np

from ppml.checks import check_int
from ppml.data.bandit_data import seeded_rng
from ppml.data.cache import cache_key, cached_arrays
from ppml.data.checksums import CHECKSUMS, verified_path

RATINGS_FILE = "ml-100k/u.data"
USERS = 943
MOVIES = 1682
RATINGS = 100_000
FOLD_SIZE = 20_000
"""mku.sh cuts u.data into five consecutive blocks of 20,000 lines; block i is u<i>.test."""
REGULARIZATION = 0.15
"""lambda of ALS-WR (per training rating of the row being solved)."""
ITERATIONS = 20
MAX_DIMS = 100
PathLike = Union[str, os.PathLike, None]


def read_ratings(data_dir: PathLike = None) -> np.ndarray:
    """``u.data`` as int64 [100000, 4] (user id, item id, rating, timestamp), in file order; ids
    are 1-based as in the file.  The file's SHA-256 is verified first."""
    ratings = np.loadtxt(verified_path(data_dir, RATINGS_FILE), dtype=np.int64, ndmin=2)
    if ratings.shape != (RATINGS, 4):
        raise ValueError(f"{RATINGS_FILE} must hold {RATINGS} rows of 4 columns, "
                         f"got {ratings.shape}")
    return ratings


def mku_split(ratings: np.ndarray, fold: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(u<fold>.base, u<fold>.test) as ml-100k's mku.sh makes them from u.data's rows:

        head -`expr $i \\* 20000` u.data | tail -20000        -> sorted -> u$i.test
        head -`expr \\( $i - 1 \\) \\* 20000` u.data;
        tail -`expr \\( 5 - $i \\) \\* 20000` u.data          -> sorted -> u$i.base

    "sorted" is ``sort -t<tab> -k 1,1n -k 2,2n``: numerically by user, then by item (a (user,
    item) pair occurs once in u.data, so the order is total)."""
    fold = check_int("fold", fold, 1, RATINGS // FOLD_SIZE, "mku.sh makes u1..u5")
    start, stop = (fold - 1) * FOLD_SIZE, fold * FOLD_SIZE

    def by_user_item(block: np.ndarray) -> np.ndarray:
        return block[np.lexsort((block[:, 1], block[:, 0]))]

    return (by_user_item(np.concatenate([ratings[:start], ratings[stop:]])),
            by_user_item(ratings[start:stop]))


def _solve_rows(rated: sparse.csr_matrix, weighted: sparse.csr_matrix,
                other: np.ndarray) -> np.ndarray:
    """Ridge solution of every row (user or movie) given the other side's embeddings ``other``
    [m, d]: (sum_j x_j x_j^T + lambda n_row I)^-1 sum_j r_j x_j over the row's ratings, with
    ``rated`` the 0/1 [rows, m] rating pattern and ``weighted`` the ratings themselves.  The Gram
    matrices come from one sparse product with the m outer products x_j x_j^T."""
    dims = other.shape[1]
    outer = np.einsum("md,me->mde", other, other).reshape(len(other), dims * dims)
    gram = (rated @ outer).reshape(-1, dims, dims)
    counts = np.asarray(rated.sum(axis=1)).ravel()
    gram += (REGULARIZATION * np.maximum(counts, 1))[:, None, None] * np.eye(dims)
    return np.linalg.solve(gram, (weighted @ other)[:, :, None])[:, :, 0]


def fit_als(train: np.ndarray, dims: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """User [943, dims] and movie [1682, dims] embeddings of ``train`` (rows of u.data's format)
    by ALS-WR: `ITERATIONS` alternations from a seeded start, `REGULARIZATION` per rating."""
    from scipy import sparse                    # imported here: see ppml/data/__init__.py
    cells = (train[:, 0] - 1, train[:, 1] - 1)
    weighted = sparse.csr_matrix((train[:, 2].astype(np.float64), cells), shape=(USERS, MOVIES))
    rated = sparse.csr_matrix((np.ones(len(train)), cells), shape=(USERS, MOVIES))
    weighted_t, rated_t = weighted.T.tocsr(), rated.T.tocsr()
    rng = seeded_rng(seed, "movielens-als", dims)
    movie_embeddings = 1.0 + 0.1 * rng.standard_normal((MOVIES, dims))
    for _ in range(ITERATIONS):
        user_embeddings = _solve_rows(rated, weighted, movie_embeddings)
        movie_embeddings = _solve_rows(rated_t, weighted_t, user_embeddings)
    return user_embeddings, movie_embeddings


def rmse(user_embeddings: np.ndarray, movie_embeddings: np.ndarray,
         ratings: np.ndarray) -> float:
    """Root-mean-square error of the (unclipped) dot products on ``ratings`` (u.data rows)."""
    predicted = np.einsum("nd,nd->n", user_embeddings[ratings[:, 0] - 1],
                          movie_embeddings[ratings[:, 1] - 1])
    return float(np.sqrt(np.mean((predicted - ratings[:, 2]) ** 2)))


@dataclass(frozen=True, eq=False)
class MovieLensEmbeddings:
    """The factorization of u1.base: ``users @ movies.T`` approximates the ratings."""

    users: np.ndarray
    """[943, d]; row u is the user with id u + 1."""
    movies: np.ndarray
    """[1682, d]; row i is the movie with id i + 1 (zero for the 32 movies absent from
    u1.base)."""
    rmse_train: float
    """RMSE on u1.base (the 80,000 training ratings)."""
    rmse_test: float
    """RMSE on u1.test (the 20,000 held-out ratings)."""
    d: int
    seed: int


def load_movielens_embeddings(dims: int, *, seed: int = 0, data_dir: PathLike = None,
                              cache_dir: PathLike = None) -> MovieLensEmbeddings:
    """ALS embeddings of dimension ``dims`` of MovieLens 100K's u1.base (``data_dir``, else
    ``$PPML_DATA``), with their RMSE on u1.base and u1.test; cached on disk (``cache_dir``, else
    ``$PPML_CACHE``, else ~/.cache/ppml).  ``seed`` draws the ALS start."""
    dims = check_int("dims", dims, 1, MAX_DIMS, "ALS here is for small ranks; the paper uses "
                     "d <= 18")
    seed = check_int("seed", seed, 0)
    verified_path(data_dir, RATINGS_FILE)
    key = cache_key("movielens-als", dims=dims, seed=seed, split="u1",
                    regularization=REGULARIZATION, iterations=ITERATIONS,
                    files={RATINGS_FILE: CHECKSUMS[RATINGS_FILE][1]})

    def compute() -> dict[str, np.ndarray]:
        base, test = mku_split(read_ratings(data_dir), fold=1)
        users, movies = fit_als(base, dims, seed)
        return {"users": users, "movies": movies,
                "rmse": np.array([rmse(users, movies, base), rmse(users, movies, test)])}

    arrays = cached_arrays(cache_dir, key, compute)
    for name in ("users", "movies"):
        arrays[name].flags.writeable = False
    return MovieLensEmbeddings(users=arrays["users"], movies=arrays["movies"],
                               rmse_train=float(arrays["rmse"][0]),
                               rmse_test=float(arrays["rmse"][1]), d=dims, seed=seed)
