"""A lost link in an in-process PPRL run, for the checkpoint tests."""

from ppml.protocols.pprl.roles import TimeAgent
from ppml.protocols.pprl.shares import SharedTable


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


class SharesCut:
    """Engines of the shares backend whose learning step (`SharedTable.learn`) raises
    ConnectionError once the run has learned ``at`` steps on the shares, ``start`` of them
    before (a lost link, in this process)."""

    def __init__(self, monkeypatch, at: int, start: int = 0):
        learn, self.learned = SharedTable.learn, start

        def cut(table, *args):
            self.learned += 1
            if self.learned > at:
                raise ConnectionError(f"lost at step {self.learned}")
            learn(table, *args)
        monkeypatch.setattr(SharedTable, "learn", cut)
