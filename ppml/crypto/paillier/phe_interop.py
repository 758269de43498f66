"""Ciphertexts across to phe (python-paillier) and back.

Both libraries use g = n + 1, so a ppml ciphertext (a raw mpz residue mod n^2) *is* a phe
ciphertext; only the reading of its plaintext differs:

* phe's `EncryptedNumber` decrypts to mantissa * 16^exponent, the mantissa signed with
  |mantissa| <= n // 3 - 1 (a larger one raises phe's OverflowError).
* ppml's plaintext m is a residue in [0, n), signed by `encoding.from_residues` up to (n - 1) / 2,
  and a real at scale exponent k is m / 2^(k s) (`encoding.Encoding`).

So a residue is phe's number at exponent 0, an integer; and a ppml value at scale exponent k maps
exactly to phe's exponent -(k s) / 4 when 4 divides k s (s = 32 by default: k = 1 is 16^-8).
Other scales have no exact phe exponent and `phe_exponent` refuses them.  Keys convert with
`PublicKey.to_phe` / `from_phe` and `PrivateKey.to_phe` / `from_phe` (keys.py).

phe is imported inside the functions only: its import costs 15-100 ms.
"""

from __future__ import annotations

import numbers

from gmpy2 import mpz

from ppml.checks import check_int

PHE_BASE_BITS = 4
"""phe's `EncodedNumber.BASE` is 16 = 2^4: its exponent e scales by 2^(4 e)."""


def phe_exponent(encoding, k: int) -> int:
    """phe's exponent for ppml values at scale exponent ``k`` of ``encoding``.

    Args:
      encoding (Encoding): the run's public scale 2^-s.
      k (int): the scale exponent (0 for integers).

    Returns:
      int: -(k s) / 4, so that 16^exponent = 2^-(k s) exactly.

    Raises:
      ValueError: if k is no integer >= 0, or 4 does not divide k s (no phe exponent gives that
        scale exactly).
    """
    shift = check_int("k", k, 0, what="a scale exponent") * encoding.scale_bits
    if shift % PHE_BASE_BITS:
        raise ValueError(f"scale 2^-{shift} (k = {k}, scale_bits = {encoding.scale_bits}) is no "
                         "power of phe's base 16: phe cannot read it exactly")
    return -(shift // PHE_BASE_BITS)


def to_phe_number(public_key, ciphertext, exponent: int = 0):
    """A ppml ciphertext as a phe EncryptedNumber (the same integer, no re-encryption).

    Args:
      public_key (PublicKey): the ppml key the ciphertext is under.
      ciphertext (mpz or int): a raw ciphertext in (0, n^2), e.g. from `PublicKey.encrypt_raw`
        or `EncryptedArray.ciphertexts`.
      exponent (int): phe's exponent: 0 for integers (residues signed as `from_residues` does,
        within phe's |m| <= n // 3 - 1), or `phe_exponent(encoding, k)` for values at scale
        exponent k.

    Returns:
      phe.EncryptedNumber: under ``public_key.to_phe()``.

    Raises:
      ValueError: if the ciphertext is no integer in (0, n^2), or the exponent no integer.
    """
    import phe

    if isinstance(ciphertext, bool) or not isinstance(ciphertext, numbers.Integral) or \
            not 0 < ciphertext < public_key.nsquare:
        raise ValueError(f"ciphertext must be an integer in (0, n^2) for this "
                         f"{public_key.bits}-bit key")
    if isinstance(exponent, bool) or not isinstance(exponent, numbers.Integral):
        raise ValueError(f"exponent must be an integer (phe's), got {exponent!r}")
    return phe.EncryptedNumber(public_key.to_phe(), int(ciphertext), exponent)


def from_phe_number(number, *, be_secure: bool = True) -> tuple[mpz, int]:
    """A phe EncryptedNumber as a ppml ciphertext and its phe exponent.

    Args:
      number (phe.EncryptedNumber): the number to convert; its key is
        ``PublicKey.from_phe(number.public_key)``.
      be_secure (bool): as phe's ``EncryptedNumber.ciphertext``: obfuscate the number first if
        phe has not (results of its homomorphic operations).

    Returns:
      tuple: (mpz ciphertext in (0, n^2), exponent).  At exponent 0 the ciphertext decrypts
      (`PrivateKey.decrypt_raw`, then `encoding.from_residues`) to phe's integer; at exponent
      -(k s) / 4 it is a ppml value at scale exponent k; any other exponent has no exact ppml
      scale (phe's `decrease_exponent_to` can lower it to one first).

    Raises:
      TypeError: if *number* is not a phe.EncryptedNumber.
    """
    import phe

    if not isinstance(number, phe.EncryptedNumber):
        raise TypeError(f"number must be a phe.EncryptedNumber, got {type(number).__name__}")
    return mpz(number.ciphertext(be_secure=be_secure)), number.exponent
