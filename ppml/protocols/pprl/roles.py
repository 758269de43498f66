"""The agents of PPRL partitioned by time (Sakuma et al., section 4.1, Fig. 2).

Each `TimeAgent` makes its own Paillier key pair and keeps its private key; the Q-table travels
only under another agent's key.  In a turn, the agent that interacts with the environment (the
*holder*) keeps c(s, a) = e_o(Q(s, a)) under the key of the *owner* o, updates it with eq. 3
and a private division with the owner (`ppml.protocols.pprl.division`), and never sees a
Q-value; the owner sees only statistically masked values.  The first agent learns its own turn
in the clear (its Q-values are a function of its own perceptions: section 4.1), then encrypts
the table under its key for the next holder (Fig. 2, step 1).

When the turn passes from holder i to h' (`hand_over`):

* owner o is not h': i re-randomises the table and hands it to h' (o stays the owner);
* owner o is h' (always, with two agents): the table must move under another key, since h'
  could decrypt its own.  i adds a mask R (``q_bound_bits`` + kappa bits wide, so Q + R >= 0 is
  hidden within 2^-kappa) under o's key and sends it to o; o decrypts Q + R and encrypts it under
  i's key; i sends e_i(-R); h' = o multiplies: e_i(Q).  One exchange each way, no SFE: o learns
  Q + R only, i learns nothing (the issue's "statistically masked re-encryption").

These objects are the local runtime's agents: every call between them is a method call passing
ciphertexts or masked values, never a key.
"""

from __future__ import annotations

from ppml.crypto.paillier import generate_keypair
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl.division import DivisionHolder, DivisionOwner, Encryptor
from ppml.protocols.pprl.greedy import GreedyHolder
from ppml.protocols.pprl.masking import mask
from ppml.runtime.seat import drain_view

OPENED, HANDED_OVER, ENGINE, COMPARED = 0, 1, 2, 3
"""The ``l`` of an agent's view rows: a division's masked value, a hand-over's masked table
entry, a value the engine opened to it, a greedy selection's masked difference."""


class TimeAgent:
    """Agent ``index``: its own key pair (``seed``: INSECURE seeded keys), the owner's side of
    divisions under its key, and while it holds the table, the table under the owner's key."""

    def __init__(self, index: int, key_bits: int, insecure_key_bits_ok: bool,
                 seed: int | None, division_bits: int, obfuscator: str = "full",
                 record_views: bool = False, workers: int = 1):
        self.index = index
        self.view = ViewRecorder(record_views)
        """What it received in the clear (`ppml.privacy.views`): as owner, each masked value
        it opened (l = `OPENED`, position 0) and each masked table entry at a hand-over
        (l = `HANDED_OVER`, position: the entry); its openings on the engine (l = `ENGINE`)."""
        self.public_key, self._private_key = generate_keypair(
            key_bits, insecure_key_bits_ok=insecure_key_bits_ok,
            seed=None if seed is None else seed * 1000 + index)
        self.division_bits = division_bits
        self.encryptor = Encryptor(obfuscator, workers=workers)
        self.division_owner = DivisionOwner(self._private_key, division_bits, self.encryptor)
        self.decryptions = 0

    def encrypt_table(self, values: list) -> list:
        """Fig. 2, step 1: the table it learned in the clear, under its own key (signed
        integers)."""
        return self.encryptor.encrypt(self.public_key, values)

    def decrypt_seconds(self) -> float:
        """Time spent decrypting (as owner of divisions and comparisons)."""
        return self.division_owner.decrypt_seconds

    def counts(self) -> tuple:
        """(encryptions, decryptions) of this agent, its divisions included."""
        return (self.encryptor.encryptions,
                self.decryptions + self.division_owner.decryptions)

    # -- the owner's side ----------------------------------------------------------------------
    def open_masked(self, masked: list, turn: int) -> list:
        """A re-encryption's masked table (Q + R under this agent's key), decrypted, before
        ``turn``."""
        self.decryptions += len(masked)
        opened = self._private_key.decrypt_raw(masked)
        self.view.record(turn, HANDED_OVER, opened)
        return opened

    def reencrypt(self, opened: list, public_key) -> list:
        """The masked values encrypted under the next owner's key ``public_key``."""
        return self.encryptor.encrypt(public_key, opened)

    def reveal(self, table: list) -> list:
        """EVALUATION ONLY: the final table under this agent's key, decrypted (the run's
        output: the learned policy's Q-values)."""
        return self._private_key.decrypt_raw(table)


class Holding:
    """The holder's state in one turn: the table under the owner's key, and the holder's
    sides of the division and of greedy selection (their masks come from the holder's OS
    CSPRNG).  ``q_bound_bits``: |Q| < 2^(q_bound_bits - 1), so differences of Q-values lie
    within 2^q_bound_bits."""

    def __init__(self, agent: TimeAgent, owner: TimeAgent, table: list, bound_bits: int,
                 q_bound_bits: int):
        self.agent, self.owner, self.table = agent, owner, table
        self.q_bound_bits = q_bound_bits
        self.division = DivisionHolder(owner.public_key, bound_bits, agent.division_bits,
                                       agent.encryptor)
        self.greedy = GreedyHolder(owner.public_key, q_bound_bits, agent.encryptor)

    def rerandomized(self) -> list:
        """The table with fresh randomness (a hand-over to a holder other than the owner)."""
        return self.agent.encryptor.rerandomize(self.owner.public_key, self.table)

    def masked(self) -> tuple:
        """A re-encryption's first half: e_o(Q + o) for the owner, and e_i(-o) under this
        agent's own key for the next holder (`masking.mask`: o = 2^b + R, so Q + o >= 0)."""
        masked, offsets = mask(self.agent.encryptor, self.owner.public_key, self.table,
                               self.q_bound_bits)
        return masked, self.agent.encryptor.encrypt(self.agent.public_key,
                                                    [-o for o in offsets])


def record_engine(ctx, step: int, views: list) -> None:
    """With ``record_views``, each engine rank's openings since the last step into the view of
    the agent holding it (``views[rank]``, `ViewRecorder`s; l = `ENGINE`)."""
    if ctx.comm.views is not None:
        for rank, view in enumerate(views):
            view.record(step, ENGINE, drain_view(ctx.comm.views[rank]))
