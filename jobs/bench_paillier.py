"""Benchmark: Paillier with ppml.crypto.paillier against phe, per key size.

``python -m jobs.bench_paillier [key_bits=1024,2048] [values=64] [dim=10] [workers=1,2]
[repeats=3] [results_dir=results]`` times, for each key size (1024 bits are accepted here with
``insecure_key_bits_ok`` to compare with the 1024-bit figures of Ciucanu et al.):

* encryption: phe's ``encrypt`` (fresh r), the pool's offline r^n, the online pooled encryption;
* decryption of ``values`` scores at scale exponent 2 (like LinUCB-DS's B_i): phe's
  ``raw_decrypt``, ppml's CRT, the textbook L(c^lambda) mu without CRT, and packed decryption
  (packing and decryption per value);
* a ciphertext x 52-bit scalar product and a dot product of length ``dim``, ppml against phe;
* bulk decryption of ``values`` ciphertexts and a ``values`` x ``dim`` plaintext-matrix x
  encrypted-vector product with each ``workers`` count (Ray tasks / actors pinned to this node).

Each row gives the median over ``repeats`` of the time of the whole batch, microseconds per value
and the speedup over the first method of its operation.  Prints the table, writes one Parquet
file.  The numbers measured on this project's machines are in docs/paillier.md.
"""

import datetime as dt
import secrets
import statistics
import time
from contextlib import nullcontext

import gmpy2
import numpy as np
import phe

from jobs.cli import InputError, cases, finish, options, parse_ints, run_command
from ppml.runtime import cluster
from ppml.crypto.paillier import (Decryptor, Encoding, EncryptedArray, ObfuscatorPool, SlotLayout,
                                  fresh_obfuscators, generate_keypair, pack)

SCALAR_BITS = 52
"""A real of magnitude below 2^20 at scale 2^-32: the plaintext factors of LinUCB-DS step (3)."""


def median_time(fn, repeats: int, warmup: bool = False) -> float:
    """Median wall time of ``fn`` over ``repeats`` calls (after one untimed call if ``warmup``:
    Ray starts worker processes on first use)."""
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def textbook_decrypt(private_key, ciphertexts) -> list:
    """L(c^lambda mod n^2) mu mod n, without CRT (the baseline CRT is measured against)."""
    n, nsquare = private_key.public_key.n, private_key.public_key.nsquare
    lam = gmpy2.lcm(private_key.p - 1, private_key.q - 1)
    mu = gmpy2.invert((gmpy2.powmod(n + 1, lam, nsquare) - 1) // n, n)
    return [(gmpy2.powmod(c, lam, nsquare) - 1) // n * mu % n for c in ciphertexts]


def measure_key(bits: int, opts: dict, workers: list[int]) -> list[dict]:
    count, dim, repeats = opts["values"], opts["dim"], opts["repeats"]
    rows = []

    def row(op, method, size, seconds):
        rows.append({"key_bits": bits, "op": op, "method": method, "size": size,
                     "seconds": seconds, "us_per_value": seconds / size * 1e6})

    start = time.perf_counter()
    public_key, private_key = generate_keypair(bits, insecure_key_bits_ok=True)
    row("keygen", "ppml", 1, time.perf_counter() - start)
    phe_public = phe.PaillierPublicKey(int(public_key.n))
    phe_private = phe.PaillierPrivateKey(phe_public, int(private_key.p), int(private_key.q))
    encoding = Encoding()
    values = np.linspace(-100.0, 100.0, count)

    row("encrypt", "phe", count, median_time(
        lambda: [phe_public.encrypt(float(v)) for v in values], repeats))
    row("encrypt", "ppml offline r^n", count, median_time(
        lambda: fresh_obfuscators(public_key, count), repeats))
    pool = ObfuscatorPool(public_key, count * (repeats + 4), on_empty="raise")
    row("encrypt", "ppml online pooled", count, median_time(
        lambda: EncryptedArray.encrypt(values, pool, encoding), repeats))

    encrypted = EncryptedArray.encrypt(values, pool, encoding)
    vector, weights = encrypted[:dim], values[:dim] / 7.0
    matrix = np.resize(values / 3.0, (count, dim))
    scores = vector.rmatmul(matrix)  # like LinUCB-DS's B_i: scale exponent 2
    raw = list(scores.ciphertexts)
    row("decrypt", "phe raw_decrypt", count, median_time(
        lambda: [phe_private.raw_decrypt(int(c)) for c in raw], repeats))
    row("decrypt", "ppml CRT", count, median_time(lambda: private_key.decrypt_raw(raw), repeats))
    row("decrypt", "textbook, no CRT", count, median_time(
        lambda: textbook_decrypt(private_key, raw), repeats))
    layout = SlotLayout.for_key(public_key, value_max=scores.hi - scores.lo)
    packed = pack(scores, layout)
    pack_s = median_time(lambda: pack(scores, layout), repeats)
    unpack_s = median_time(lambda: packed.decrypt_integers(private_key), repeats)
    row("decrypt", f"packed: pack ({layout.slots} slots of {layout.slot_bits} bits)", count, pack_s)
    row("decrypt", "packed: decrypt + unpack", count, unpack_s)
    row("decrypt", "packed: total", count, pack_s + unpack_s)

    scalars = [secrets.randbits(SCALAR_BITS) - (1 << (SCALAR_BITS - 1)) for _ in range(count)]
    phe_numbers = [phe.EncryptedNumber(phe_public, int(c)) for c in encrypted.ciphertexts]
    row("scalar product", "phe", count, median_time(
        lambda: [x * k for x, k in zip(phe_numbers, scalars)], repeats))
    plain = encoding.encode(np.array(scalars, dtype=object), k=0,
                            bounds=(-(1 << SCALAR_BITS), 1 << SCALAR_BITS))
    row("scalar product", "ppml", count, median_time(lambda: encrypted * plain, repeats))

    row("dot product", "phe", dim, median_time(
        lambda: sum(x * float(w) for x, w in zip(phe_numbers[:dim], weights)), repeats))
    row("dot product", "ppml", dim, median_time(lambda: vector @ weights, repeats))

    for w in workers:
        with Decryptor(private_key, workers=w) as decryptor:
            row("bulk decrypt", f"workers={w}", count, median_time(
                lambda: decryptor.decrypt_raw(raw), repeats, warmup=True))
        row("bulk matvec (values x dim)", f"workers={w}", count * dim, median_time(
            lambda: vector.rmatmul(matrix, workers=w), repeats, warmup=True))
    return rows


def with_speedups(rows: list[dict]) -> list[dict]:
    """Speedup of each row over the first method of its (key_bits, op), per value."""
    baseline = {}
    for r in rows:
        baseline.setdefault((r["key_bits"], r["op"]), r["us_per_value"])
        r["speedup"] = baseline[(r["key_bits"], r["op"])] / r["us_per_value"]
    return rows


def main(argv=None) -> None:
    opts = options({"key_bits": "1024,2048", "values": 64, "dim": 10, "workers": "1,2",
                    "repeats": 3, "results_dir": "results"}, argv)
    started_at = dt.datetime.now(dt.timezone.utc)
    workers = parse_ints(opts["workers"], "workers")
    if opts["dim"] > opts["values"]:
        raise InputError(f"dim must be <= values, got dim={opts['dim']} values={opts['values']}")
    ray_needed = max(workers) > 1
    with cluster.connected(num_cpus=max(workers), dashboard=False) if ray_needed else nullcontext():
        rows = [r for bits in cases(parse_ints(opts["key_bits"], "key_bits"), "bench_paillier",
                                    opts, unit="key size")
                for r in measure_key(bits, opts, workers)]
    finish("bench_paillier", with_speedups(rows), opts, started_at)


if __name__ == "__main__":
    run_command(main)
