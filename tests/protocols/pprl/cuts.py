"""A lost link in an in-process PPRL run, for the checkpoint tests."""

from ppml.protocols.pprl.roles import TimeAgent


class Cut:
    """``role.method`` raises ConnectionError once the run has played ``at`` steps, ``start``
    of them before (a lost link, in this process): each call plays as many steps as its first
    argument says (`TimeAgent.play`, the default), or ``each`` (by observation, one per
    `ObservationAgent.apply_from`, a step's last call)."""

    def __init__(self, monkeypatch, at: int, start: int = 0, role=TimeAgent,
                 method: str = "play", each: int | None = None):
        original, self.played = getattr(role, method), start

        def cut(instance, *args):
            self.played += args[0] if each is None else each
            if self.played > at:
                raise ConnectionError(f"lost at step {self.played}")
            return original(instance, *args)
        monkeypatch.setattr(role, method, cut)
