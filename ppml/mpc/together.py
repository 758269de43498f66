"""Independent computations in shared rounds: each round carries every strand's message.

    opened, scaled = together(ctx, lambda: reveal_argmax(scores, to=puller),
                              lambda: quotients(u, quad))

runs the strands as coroutines (greenlets) in one thread, one after the other, each until it
asks the communicator for a round (`Comm.exchange`, `broadcast` or `deliver`) or returns.  When
every live strand waits, their exchanges to the same receivers go out as ONE round: the pieces
of every strand in one frame per peer; a broadcast, a delivery or an exchange to other
receivers is a round of its own.  The answers go back to each strand, and the strands run on.
Two strands of 12 and 9 rounds thus take 12 rounds, not 21 (the private contextual bandit's
argmax and eq. 1's quotients, docs/private-cb.md).

Every party runs the same strands in the same order, so every party takes the same dealer
material, PRSS draws and rounds in the same order: the merged program is as deterministic as the
sequential one, in every runtime, and the local runtime gives the same results as the others.
What crosses the wire is what the strands would send on their own, in fewer frames.

Bookkeeping: each strand keeps its own stack of operation labels (`Comm.operation`), and a
merged round counts for the operation of the first strand in it.  Strands must be independent:
neither may wait for a value the other computes (they could not: a strand sees the other's work
only through the values they share, and those come back only at the round's end).
"""

from __future__ import annotations

from greenlet import greenlet, getcurrent

_ROUNDS = ("exchange", "broadcast", "deliver")


def together(ctx, *strands) -> list:
    """Run the zero-argument callables ``strands`` with their rounds merged; returns their
    results, in order.  An exception in a strand stops the others and propagates.

    The first strand runs in the caller; each other strand is a greenlet that the first one's
    round requests (or, once it is done, the caller) run up to their own next request.
    """
    if not strands:
        raise ValueError("together needs at least one strand")
    if len(strands) == 1:
        return [strands[0]()]
    return _Strands(ctx.comm, strands).run()


class _Strands:
    def __init__(self, comm, strands):
        self.comm, self.strands = comm, strands
        self.real = {name: getattr(comm, name) for name in _ROUNDS}
        self.outer = comm._ops
        self.ops = [list(self.outer) for _ in strands]
        self.lets = {i: greenlet(strand) for i, strand in enumerate(strands) if i}
        self.answers = {i: () for i in self.lets}   # what each resumes with (nothing: start)
        self.results = [None] * len(strands)
        self.main = getcurrent()
        self.failure = None
        """The first exception of a strand: raised again however the first strand handles it."""

    def run(self) -> list:
        comm = self.comm
        patched = {name: vars(comm)[name] for name in _ROUNDS if name in vars(comm)}
        for name in _ROUNDS:
            setattr(comm, name, self._asking(name))
        try:
            comm._ops = self.ops[0]
            self.results[0] = self.strands[0]()
            while self.lets and self.failure is None:  # the first strand is done: the others
                self._serve(self._advance())
            if self.failure is not None:
                raise self.failure
            return self.results
        finally:
            comm._ops = self.outer
            for name in _ROUNDS:              # the class's methods again, or an outer together's
                if name in patched:
                    setattr(comm, name, patched[name])
                else:
                    delattr(comm, name)
            for let in self.lets.values():
                if let and not let.dead:
                    let.throw()               # GreenletExit: unwinds a stopped strand

    def _asking(self, name: str):
        def ask(*args, **kwargs):
            return self._ask((name, args, kwargs))

        def exchange(payloads, to=None, tag="open"):
            return self._ask(("exchange", payloads, to, tag))
        return exchange if name == "exchange" else ask

    def _ask(self, request: tuple):
        me = getcurrent()
        if me is not self.main:
            if me in self.lets.values():              # another strand: to the caller's loop
                return self.main.switch(request)
            return self._pass_on(request)             # a strand of an outer `together`
        if self.failure is not None:
            raise self.failure
        if self.lets:                                 # the first strand: run the others up to
            answer = self._serve({0: request, **self._advance()})[0]   # their next round
        else:                                         # the first strand, alone now
            answer = self._serve({0: request})[0]
        self.comm._ops = self.ops[0]
        return answer

    def _pass_on(self, request: tuple):
        """A round asked for by a strand of an outer `together` (this one runs inside one of
        its strands): that one's to make."""
        if request[0] == "exchange":
            return self.real["exchange"](request[1], to=request[2], tag=request[3])
        return self.real[request[0]](*request[1], **request[2])

    def _advance(self) -> dict:
        """Run every other live strand up to its next round request: index -> request."""
        asked = {}
        for i, let in list(self.lets.items()):
            self.comm._ops = self.ops[i]
            try:
                out = let.switch(*self.answers[i])
            except BaseException as exc:
                del self.lets[i]
                self.failure = self.failure or exc
                raise
            if let.dead:
                self.results[i] = out
                del self.lets[i]
            else:
                asked[i] = out
        self.comm._ops = self.outer
        return asked

    def _serve(self, asked: dict) -> dict:
        """Make the rounds asked for: one exchange per set of receivers, then each other
        request alone; index -> answer (the others' are kept to resume them with)."""
        comm, answers, groups = self.comm, {}, {}
        for i, request in asked.items():              # in strand order
            if request[0] == "exchange":
                groups.setdefault(request[2], []).append((i, request[1], request[3]))
            else:
                comm._ops = self.ops[i]
                answers[i] = self.real[request[0]](*request[1], **request[2])
        for to, members in groups.items():
            comm._ops = self.ops[members[0][0]]
            tags = "+".join(dict.fromkeys(tag for _, _, tag in members))
            stacks = self.real["exchange"]([p for _, payloads, _ in members for p in payloads],
                                           to=to, tag=tags)
            start = 0
            for i, payloads, _ in members:
                answers[i] = None if stacks is None else stacks[start:start + len(payloads)]
                start += len(payloads)
        comm._ops = self.outer
        for i, answer in answers.items():
            if i:
                self.answers[i] = (answer,)
        return answers
