"""A lost link in an in-process PPRL run partitioned by time, for the checkpoint tests."""

from ppml.protocols.pprl.roles import TimeAgent


class Cut:
    """Agents whose `TimeAgent.play` raises ConnectionError once the run has played ``at``
    steps, ``start`` of them before (a lost link, in this process)."""

    def __init__(self, monkeypatch, at: int, start: int = 0):
        play, self.played = TimeAgent.play, start

        def cut(agent, steps):
            self.played += steps
            if self.played > at:
                raise ConnectionError(f"lost at step {self.played}")
            play(agent, steps)
        monkeypatch.setattr(TimeAgent, "play", cut)
