"""Packing many bounded values into one ciphertext before decryption.

Comp's decryption of the K permuted scores B_i (Ciucanu et al., Fig. 4(b), step (4).i) dominates
LinUCB-DS: K decryptions per round, each two half-size exponentiations.  The party holding the
ciphertexts (P) packs them first, homomorphically:

    E(v_0 + v_1 2^b + v_2 2^(2b) + ...) = prod_i E(v_i)^(2^(i b))   (Horner: b squarings a slot)

so that Comp decrypts ceil(K / slots) ciphertexts and reads the slots off the bits.

Slot layout (`SlotLayout`), for a key of ``key_bits`` bits::

    bit:  0        b        2b             (slots-1) b     slots b        key_bits - 2
          | slot 0 | slot 1 | ...          | slot slots-1  | zero ...     |

A slot holds the sum of at most ``terms`` values, each in [0, value_max]; its width is
b = bit_length(terms * value_max), so terms * value_max < 2^b: the headroom for the additions the
protocol makes on packed ciphertexts.  slots = floor((key_bits - 2) / b), so the packed plaintext
stays below 2^(key_bits - 2) <= (n - 1) / 2.

Signed values are shifted into [0, hi - lo] by the public lower bound lo of their array (one
plaintext addition per packed ciphertext), and shifted back after unpacking.  No slot can spill:
`pack` refuses an array whose public interval is wider than ``value_max`` and `PackedArray.__add__`
refuses more than ``terms`` summands, each with a ValueError naming the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import gmpy2
import numpy as np

from ppml.checks import check_int
from ppml.crypto.paillier import ops
from ppml.crypto.paillier.array import EncryptedArray
from ppml.crypto.paillier.encoding import objects, to_residues


@dataclass(frozen=True)
class SlotLayout:
    """Slots of ``slot_bits`` bits, ``slots`` per ciphertext of a ``key_bits``-bit key, each holding
    the sum of at most ``terms`` values in [0, ``value_max``]."""

    key_bits: int
    value_max: int
    terms: int = 1

    def __post_init__(self):
        for name in ("key_bits", "value_max", "terms"):
            value = check_int(name, getattr(self, name), 1, what="an integer")
            object.__setattr__(self, name, value)
        if self.slots < 1:
            raise ValueError(f"a slot of {self.slot_bits} bits (terms * value_max = "
                             f"{self.terms * self.value_max}) does not fit below 2^"
                             f"{self.key_bits - 2} in a {self.key_bits}-bit key")

    @classmethod
    def for_key(cls, public_key, value_max: int, terms: int = 1) -> "SlotLayout":
        return cls(public_key.bits, value_max, terms)

    @property
    def slot_bits(self) -> int:
        return (self.terms * self.value_max).bit_length()

    @property
    def slots(self) -> int:
        return (self.key_bits - 2) // self.slot_bits

    def weight(self, count: int) -> int:
        """sum_{i < count} 2^(i b): a value added to every one of ``count`` slots."""
        return ((1 << (count * self.slot_bits)) - 1) // ((1 << self.slot_bits) - 1)


@dataclass(frozen=True)
class PackedArray:
    """Packed ciphertexts ``data`` (1-D, k = 0) of an array of ``shape``.

    Slot j of ciphertext i holds value i * slots + j minus ``offset`` (a sum of ``terms`` packed
    values, minus the sum of their offsets); the values have scale exponent ``k``.  Everything
    here is public."""

    data: EncryptedArray
    layout: SlotLayout
    shape: tuple
    k: int
    offset: int
    terms: int = 1

    def __add__(self, other: "PackedArray") -> "PackedArray":
        """Slotwise sums, within the layout's headroom of ``terms`` summands."""
        if (other.layout, other.shape, other.k) != (self.layout, self.shape, self.k):
            raise ValueError("packed arrays must share layout, shape and scale exponent "
                             "to be added")
        terms = self.terms + other.terms
        if terms > self.layout.terms:
            raise ValueError(f"a slot would hold the sum of {terms} packed values, but the layout "
                             f"reserves headroom for terms={self.layout.terms}")
        return PackedArray(self.data + other.data, self.layout, self.shape, self.k,
                           self.offset + other.offset, terms)

    def rerandomize(self, pool) -> "PackedArray":
        return PackedArray(self.data.rerandomize(pool), self.layout, self.shape, self.k,
                           self.offset, self.terms)

    def decrypt_integers(self, key) -> np.ndarray:
        """One decryption per packed ciphertext; the signed integers in ``shape`` (object array)."""
        count = int(np.prod(self.shape, dtype=np.int64))
        values = unpack(list(self.data.decrypt_integers(key).ravel()), self.layout.slot_bits,
                        self.layout.slots, count)
        return objects([v + self.offset for v in values], self.shape)

    def decrypt(self, key) -> np.ndarray:
        return self.data.encoding.decode(self.decrypt_integers(key), self.k)


def pack(array: EncryptedArray, layout: SlotLayout) -> PackedArray:
    """Pack ``array`` (any shape, flattened in C order) into ceil(size / slots) ciphertexts.

    Raises a ValueError naming ``value_max`` if the array's public interval is wider than a slot
    input may be, or if the layout was made for another key size.
    """
    public_key = array.public_key
    if layout.key_bits != public_key.bits:
        raise ValueError(f"layout made for a {layout.key_bits}-bit key, array under a "
                         f"{public_key.bits}-bit key")
    width = array.hi - array.lo
    if width > layout.value_max:
        raise ValueError(f"values span [{array.lo}, {array.hi}] (width {width}) at scale exponent "
                         f"{array.k}, more than a slot input may: value_max={layout.value_max}")
    flat = array.ciphertexts.ravel()
    packed = pack_ciphertexts(public_key, list(flat), layout.slot_bits, layout.slots)
    offsets = [-array.lo * layout.weight(len(flat[start:start + layout.slots]))
               for start in range(0, len(flat), layout.slots)]
    packed = ops.add_plain(public_key, packed, to_residues(offsets, public_key.n))
    data = EncryptedArray(public_key, array.encoding, objects(packed, (len(packed),)), 0, 0,
                          width * layout.weight(layout.slots), "packed values")
    return PackedArray(data, layout, array.shape, array.k, array.lo)


def pack_ciphertexts(public_key, ciphertexts: list, slot_bits: int, slots: int) -> list:
    """E(v_0 + v_1 2^b + ...) for each group of ``slots`` raw ciphertexts E(v_i), by Horner
    (b = ``slot_bits`` squarings a slot); the v_i must lie in [0, 2^b) for the slots to stay
    apart, and slots * b must stay below the key's bits - 1."""
    nsquare, shift = public_key.nsquare, 1 << slot_bits
    packed = []
    for start in range(0, len(ciphertexts), slots):
        group = ciphertexts[start:start + slots]
        acc = group[-1]
        for c in group[-2::-1]:
            acc = gmpy2.powmod(acc, shift, nsquare) * c % nsquare
        packed.append(acc)
    return packed


def unpack(plaintexts: list, slot_bits: int, slots: int, count: int) -> list:
    """The first ``count`` slot values of decrypted packed plaintexts (`pack_ciphertexts`)."""
    mask = (1 << slot_bits) - 1
    values = [int(m) >> (j * slot_bits) & mask for m in plaintexts for j in range(slots)]
    return values[:count]
