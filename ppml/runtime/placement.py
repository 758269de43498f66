"""Where the actors of a Ray run go: custom resources that pin parties and the dealer to nodes.

``placement`` (the ``run(..., runtime="ray", placement=...)`` option) is one of

* ``None`` (default): no custom resources, everything runs wherever Ray puts it (a laptop);
* ``True``: party i asks for one unit of ``party_<i>`` (cluster.yaml gives each party node type
  one unit, so each party sits alone on its own node), and the dealer actor a little of
  ``dealer`` (cluster.yaml's dealer node type: the dealer never shares a party's node; the
  autoscaler starts it when the run asks);
* a dict: party index -> resource name and/or ``"dealer"`` -> resource name; parties or the
  dealer not named there are not pinned.

A pinned party takes a whole unit, so two parties never share a node; the dealer takes
``DEALER_UNITS``.
"""

from __future__ import annotations

PARTY_UNITS = 1.0
DEALER_UNITS = 0.01
DEALER_RESOURCE = "dealer"


def resources(placement, parties: int) -> dict:
    """Actor name (party index or "dealer") -> the ``resources`` option of its actor."""
    if placement is None:
        return {}
    if placement is True:
        names = {p: f"party_{p}" for p in range(parties)}
        names["dealer"] = DEALER_RESOURCE
    elif isinstance(placement, dict):
        names = dict(placement)
        for who, name in names.items():
            party = isinstance(who, int) and not isinstance(who, bool) and 0 <= who < parties
            if not (party or who == "dealer"):
                raise ValueError(f"placement keys must be party indices 0..{parties - 1} or "
                                 f"'dealer', got {who!r}")
            if not isinstance(name, str) or not name:
                raise ValueError(f"placement[{who!r}] must be a resource name, got {name!r}")
    else:
        raise ValueError(f"placement must be None, True or a dict of resource names, got "
                         f"{placement!r}")
    return {who: {name: DEALER_UNITS if who == "dealer" else PARTY_UNITS}
            for who, name in names.items()}
