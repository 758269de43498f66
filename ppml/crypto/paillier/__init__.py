"""Paillier encryption for LinUCB-DS (Ciucanu et al.): keys, one-scale encoding, vectorised
homomorphic operations, the offline obfuscator pool, packing, and bulk work on Ray.

One concept per module, each layer using only those above it:

    keys.py        keygen (CSPRNG; seeded = INSECURE), key-size policy, encrypt / CRT decrypt
    encoding.py    reals <-> integers at one public scale 2^-s, residues mod n, bound bookkeeping
    ops.py         homomorphic sums, scalar products, dot products on raw gmpy2 ciphertexts
    bulk.py        chunked work as Ray tasks pinned to this node; resident actors (decryptor)
    fixed_base.py  fixed-base exponentiation from precomputed tables (subset products; combs)
    djn.py         Damgard-Jurik-Nielsen short-exponent obfuscators h_s^a (with a complement)
    multibase.py   products of short powers of many fresh r^n: within 2^-128 of r^n
    pool.py        precomputed obfuscators (r^n mod n^2, multibase or djn), each used once
    array.py       EncryptedArray: ciphertexts with scale exponent and public bounds
    packing.py     many bounded values per ciphertext before decryption
    phe_interop.py ciphertexts to and from phe's EncryptedNumber (keys convert in keys.py)

Design, slot layout and measurements: docs/paillier.md.
"""

from ppml.crypto.paillier.array import EncryptedArray
from ppml.crypto.paillier.bulk import Decryptor
from ppml.crypto.paillier.encoding import Encoded, Encoding, check_headroom
from ppml.crypto.paillier.keys import (DEFAULT_KEY_BITS, MIN_KEY_BITS, PrivateKey, PublicKey,
                                       generate_keypair)
from ppml.crypto.paillier.packing import PackedArray, SlotLayout, pack
from ppml.crypto.paillier.phe_interop import from_phe_number, phe_exponent, to_phe_number
from ppml.crypto.paillier.pool import (OBFUSCATORS, ObfuscatorPool, PoolExhaustedError,
                                       fresh_obfuscators)

__all__ = [
    "DEFAULT_KEY_BITS", "MIN_KEY_BITS", "OBFUSCATORS", "Decryptor", "Encoded", "Encoding",
    "EncryptedArray", "ObfuscatorPool", "PackedArray", "PoolExhaustedError", "PrivateKey",
    "PublicKey", "SlotLayout", "check_headroom", "fresh_obfuscators", "from_phe_number",
    "generate_keypair", "pack", "phe_exponent", "to_phe_number",
]
