"""Private contextual bandits: Hannun et al.'s Algorithm 1 on secret shares.

Roles (every role is a party of the engine: an index in the local runtime, an actor in Ray):

* feature parties 0..P-1 hold the shares and each owns a contiguous block of the D context
  features, which it never shows (lines 5-7);
* p' (rank P, a client of the engine: it holds no shares) learns the arm a_t and pulls it
  (lines 16-18);
* p'' (rank P + 1, a client) receives the reward r_t and shares it (line 19).

State per arm a, shared: W_a^-1 (identity at the start, lines 1-3) and b_a (zero).  Every step
updates all arms, masked by the secret one-hot o_a, so no feature party learns the arm.  Scores
use s_{t,a} = b_a^T (W_a^-1 x_t), which equals w_a^T x_t with w_a = W_a^-1 b_a (lines 10-11)
because W_a^-1 is symmetric, and share u_a = W_a^-1 x_t with the Sherman-Morrison update (eq. 1):
    W_a^-1 <- W_a^-1 - o_a u_a u_a^T / (1 + x_t^T u_a).
Since W_a >= (1 + delta) I and |x_t| = 1, the denominator lies in [1, 1 + 1 / (1 + delta)]: the
reciprocal's domain.

The state (and the scores s~ and x^T u_a) is kept at scale 2L when the ring allows it
(`PrivateCBConfig.wide`): the update of lines 20-23 is then added untruncated, so eq. 1 loses
nothing to rounding.  Options of the paper's section 7, off by default: a diagonal regulariser
delta (W_a starts at (1 + delta) I) and a Newton-Schulz refresh of W_a^-1 every k steps.

Rounds of a step, the scale 2L and its bounds, and measurements: docs/private-cb.md, "One step"
(with "The state at scale 2L") and "Speed"; docs/decisions.md, "Private CB: W^-1, b and the
scores at scale 2L".
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

import ppml.mpc as mpc
from ppml.mpc.ranges import limit
from ppml.mpc.together import together
from ppml.protocols.private_cb.config import PrivateCBConfig
from ppml.runtime import progress as progress_
from ppml.runtime.checkpoints import CheckpointPlan, RankCheckpoints


class PrivateLinearBandit:
    """The shared state of Algorithm 1 and its steps, for the ranks held in a context."""

    def __init__(self, ctx, config: PrivateCBConfig):
        self.ctx, self.config = ctx, config
        limit(ctx.precision_bits, real=True).check("reward_bound", config.reward_bound)
        a, d = config.arms, config.dims
        eye = np.tile(np.eye(d), (a, 1, 1))
        self.wide = config.wide(ctx.precision_bits, ctx.truncation)
        self.w_inv = ctx.constant(eye / (1.0 + config.regularizer)).at_scale(self.state_bits)
        self.w = ctx.constant(eye * (1.0 + config.regularizer)) if config.refresh_every else None
        self.b = ctx.constant(np.zeros((a, d))).at_scale(self.state_bits)      # lines 1-3
        self.steps = 0

    @property
    def state_bits(self) -> int:
        """The scale of W_a^-1 and b_a: 2L when `wide`, else L."""
        return self.ctx.precision_bits * (2 if self.wide else 1)

    def share_context(self, blocks: dict):
        """Lines 5-7: every feature party shares its own block; the blocks are concatenated.

        ``blocks`` maps the feature parties held here to their block of x_t.
        """
        parts = [self.ctx.share(blocks.get(p), owner=p, shape=(len(cols),))
                 for p, cols in enumerate(self.config.feature_blocks)]
        return mpc.concatenate(parts)

    def private_scores(self, x) -> tuple:
        """Lines 8-13: the differentially private scores, and what the update reuses.

        Line 13's y v + (1 - y) s is assembled from products made beside u_a = W_a^-1 x:
        (1 - y) b_a and y v (bits times reals, no truncation), so that
        s~ = (1 - y) b_a^T u_a + y v_a needs no round of its own; the next round gives
        (1 - y) s_{t,a} and x^T u_a together.
        """
        c = self.config
        y = mpc.bernoulli(self.ctx, c.epsilon)                                # line 8
        v = mpc.uniform(self.ctx, (c.arms,))                                  # line 12
        u, kept, explored = mpc.products([(self.w_inv, x), (1 - y, self.b), (y, v)],
                                         kind=["matmul", "mul", "mul"])       # u_a = W_a^-1 x
        rows = mpc.stack([kept, x.broadcast_to((c.arms, c.dims))], axis=1)   # [A, 2, D]
        (dots,) = mpc.products([(rows, u.reshape(c.arms, c.dims, 1))], kind="matmul",
                               keep_scale=self.wide)                          # at 2L if wide
        dots = dots.reshape(c.arms, 2)
        return dots[:, 0] + explored, u, dots[:, 1]                           # line 13; x^T u_a

    def quotients(self, u, quad):
        """Eq. 1's u_a / (1 + x^T u_a) for every arm: the windowed reciprocal and one product
        (4 rounds), or Newton's with the quotient in its own rounds (9).

        It needs nothing from p' or p'', so it runs while they take their part of the step
        (lines 16-19): their inputs wait in the mailbox instead of on the step's critical path.
        """
        c = self.config
        return (quad.reshape(c.arms, 1) + 1).reciprocal(
            domain=c.denominator_domain(), numerator=u, **c.reciprocal_options())

    def update(self, x, u, scaled, onehot, reward) -> None:
        """Lines 20-23 for every arm, masked by the one-hot o, with eq. 1 for W_a^-1:

            W_a^-1 <- W_a^-1 - (u_a / (1 + x^T u_a)) (o_a u_a)^T,    b_a <- b_a + (o_a r_t) x_t,

        where ``scaled`` is u_a / (1 + x^T u_a) (:meth:`quotients`).  o_a u_a and o_a r_t take
        one round (bits times reals: no truncation), and both updates one more, with the only
        [A, D, D] product of the step, truncated to L only when the state is kept at L
        (`PrivateCBConfig.wide`).
        """
        c = self.config
        paid, picked = mpc.products([(onehot, reward), (onehot.reshape(c.arms, 1), u)])
        step_w, step_b = mpc.products([(scaled.reshape(c.arms, c.dims, 1),
                                        picked.reshape(c.arms, 1, c.dims)),
                                       (paid.reshape(c.arms, 1), x.reshape(1, c.dims))],
                                      keep_scale=self.wide)
        self.w_inv = self.w_inv - step_w                                      # eq. 1, line 21
        self.b = self.b + step_b                                              # line 22
        if self.w is not None:
            outer = x.reshape(c.dims, 1) * x.reshape(1, c.dims)
            self.w = self.w + onehot.reshape(c.arms, 1, 1) * outer            # line 21 itself
        self.steps += 1
        if c.refresh_every and self.steps % c.refresh_every == 0:
            self.refresh()

    def state(self, at: int, saved: list) -> dict:
        """What the feature party at position ``at`` of the held axis checkpoints: its shares
        of W^-1, b (and W with the refresh), and of the audit's snapshots ``saved``."""
        return {"w_inv": self.w_inv.data[at], "b": self.b.data[at],
                "w": None if self.w is None else self.w.data[at],
                "audit": [(step, w[at], b[at], frac) for step, w, b, frac in saved]}

    def resume(self, step: int, states: list) -> list:
        """Take the shares of the held feature parties' checkpoints of ``step`` (``states`` in
        held-rank order: the compute parties first); returns the audit's snapshots."""
        mine = states[:len(self.ctx.held)]
        stacked = {name: np.stack([state[name] for state in mine]) for name in ("w_inv", "b")}
        self.w_inv = type(self.w_inv)(self.ctx, stacked["w_inv"], self.state_bits)
        self.b = type(self.b)(self.ctx, stacked["b"], self.state_bits)
        if self.w is not None:
            self.w = type(self.w)(self.ctx, np.stack([state["w"] for state in mine]),
                                  self.w.frac_bits)
        self.steps = step
        return [(audit[0][0], np.stack([a[1] for a in audit]), np.stack([a[2] for a in audit]),
                 audit[0][3]) for audit in zip(*(state["audit"] for state in mine))]

    def refresh(self) -> None:
        """Two Newton-Schulz iterations X <- X (2I - W X): the drift of eq. 1 squared away."""
        eye = np.tile(np.eye(self.config.dims), (self.config.arms, 1, 1))
        for _ in range(2):
            self.w_inv = self.w_inv @ (2.0 * eye - self.w @ self.w_inv)
        self.w_inv = self.w_inv.at_scale(self.state_bits)


def program(ctx, config: PrivateCBConfig, progress: bool = False, checkpoint_steps=(),
            world=None, checkpoints: CheckpointPlan | None = None, **features):
    """Algorithm 1 for T steps, SPMD for every role.

    ``features_<p>`` is feature party p's [T, D_p] block of the contexts; ``world`` (given to p'
    and p'', a `ppml.runtime.roles.Role`) pulls arms and pays rewards.  Returns, per rank: the
    arms p' pulled, the rewards p'' received, every rank's communication stats and the seconds
    its program ran (``program_s``: in this process, whatever the runtime), and each feature
    party's own shares of (W^-1, b) and their scale after each step in ``checkpoint_steps`` (for
    an audit that holds every party's checkpoint, such as the membership-inference experiment;
    no party sees another's).

    ``checkpoints`` (a `CheckpointPlan`): every ``every`` steps each rank saves what it holds
    (a feature party its shares, p' its arms, p'' its rewards, each with the engine's state) to
    its own store; a resumed plan goes on from the last step all hold, and every rank returns
    ``replays`` (`RankCheckpoints.replays`: which steps ran twice).

    A process that holds only p' or p'' (Ray and federated) follows only the rounds it takes
    part in (:func:`client_steps`), not the feature parties' arithmetic.  So every input the
    feature parties share here gives its shape: a shape sent by broadcast would go to p' and
    p'' too, who do not take it (their next round would then fail, out of step).
    """
    start = time.perf_counter()
    saving = checkpoints and RankCheckpoints(checkpoints, ctx)
    first, states = saving.start() if saving else (0, [{} for _ in ctx.comm.held_ranks])
    held = dict(zip(ctx.comm.held_ranks, states))
    arms = held.get(config.puller, {}).get("arms", [])
    rewards = held.get(config.rewarder, {}).get("rewards", [])
    if not ctx.comm.held:
        client_steps(ctx, config, world, range(first, config.horizon), arms, rewards, saving)
        return _outputs(ctx, config, start, arms, rewards, [], saving)
    bandit = PrivateLinearBandit(ctx, config)
    saved = bandit.resume(first, states) if first else []
    mine = {p: features[f"features_{p}"] for p in range(config.parties)
            if f"features_{p}" in features}
    for t in progress_.track(range(first, config.horizon), "private_cb steps",
                             config.horizon, initial=first,
                             enabled=progress and ctx.holds(0)):
        with _naming_the_step(t, config.horizon):
            x = bandit.share_context({p: block[t] for p, block in mine.items()})
            private, u, quad = bandit.private_scores(x)
            opened, scaled = together(                                             # lines 15-16
                ctx, lambda: mpc.reveal_argmax(private, to=config.puller,         # and eq. 1
                                               method=config.argmax_method),
                lambda: bandit.quotients(u, quad))
            pulled = ctx.value_at(opened, config.puller)
            o, r = _pull_and_pay(ctx, config, world, t, pulled, arms, rewards)     # lines 17-19
            bandit.update(x, u, scaled, o, r)                                      # lines 20-23
            if t + 1 in checkpoint_steps:
                saved.append((t + 1, bandit.w_inv.data.copy(), bandit.b.data.copy(),
                              bandit.state_bits))
            if saving:
                _checkpoint(ctx, config, saving, t + 1, bandit, saved, arms, rewards)
    return _outputs(ctx, config, start, arms, rewards, saved, saving)


def client_steps(ctx, config: PrivateCBConfig, world, steps: range, arms: list, rewards: list,
                 saving: RankCheckpoints | None) -> None:
    """The part of Algorithm 1 that p' and p'' take, alone, in a process that holds no shares:
    per step, p' takes the one round that opens the arm to it (lines 15-16), and each shares its
    input (lines 18-19).  Appends to the arms pulled and the rewards received, where held."""
    for t in steps:
        with _naming_the_step(t, config.horizon):
            pulled = (mpc.receive_argmax(ctx, (config.arms,), config.puller,
                                         config.argmax_method)
                      if ctx.holds(config.puller) else None)
            _pull_and_pay(ctx, config, world, t, pulled, arms, rewards)
            if saving:
                _checkpoint(ctx, config, saving, t + 1, None, [], arms, rewards)


def _checkpoint(ctx, config: PrivateCBConfig, saving: RankCheckpoints, step: int, bandit,
                saved: list, arms: list, rewards: list) -> None:
    """After ``step`` steps: note the progress and, when due, save what each held rank holds:
    a feature party its shares (`PrivateLinearBandit.state`), p' the arms, p'' the rewards."""
    if saving.plan.due(step):
        own = {config.puller: {"arms": arms}, config.rewarder: {"rewards": rewards}}
        saving.save(step, [own[rank] if rank in own else bandit.state(ctx.held.index(rank), saved)
                           for rank in ctx.comm.held_ranks])
    saving.reached(step)


def _pull_and_pay(ctx, config: PrivateCBConfig, world, t: int, pulled, arms: list,
                  rewards: list) -> tuple:
    """Lines 17-19: p' shares the one-hot opened to it (``pulled``, None elsewhere) and pulls
    its arm; p'' receives the reward and shares it.  Returns the shares (o, r).  p' shares
    before it pulls, so the feature parties need not wait for the world."""
    o = ctx.share(pulled, owner=config.puller, shape=(config.arms,), frac_bits=0)  # line 18
    if pulled is not None:
        arms.append(int(np.argmax(pulled)))                                        # line 17
        world.call("pull", t, arms[-1])
    reward = world.call("reward", t) if ctx.holds(config.rewarder) else None
    if reward is not None:
        if not abs(reward) <= config.reward_bound:
            raise ValueError(f"reward at step {t} is {reward}, outside the public "
                             f"reward_bound={config.reward_bound}")
        rewards.append(reward)
    return o, ctx.share(reward, owner=config.rewarder, shape=())                   # line 19


@contextlib.contextmanager
def _naming_the_step(t: int, horizon: int):
    """A peer's failure or silence (ConnectionError, TimeoutError) names the step."""
    try:
        yield
    except (ConnectionError, TimeoutError) as err:
        err.add_note(f"at step {t} of {horizon}")
        raise


def _outputs(ctx, config: PrivateCBConfig, start: float, arms: list, rewards: list,
             saved: list, saving: RankCheckpoints | None):
    """What each held rank returns (see :func:`program`)."""
    stats = ctx.stats()
    seconds = time.perf_counter() - start
    per_rank = []
    for k, rank in enumerate(ctx.comm.held_ranks):
        out = {"stats": stats[k] if isinstance(stats, list) else stats, "program_s": seconds,
               "replays": saving.replays if saving else []}
        if rank in ctx.held:
            at = ctx.held.index(rank)
            out["checkpoints"] = [(step, w[at], b[at], frac) for step, w, b, frac in saved]
        if rank == config.puller:
            out["arms"] = arms
        if rank == config.rewarder:
            out["rewards"] = rewards
        per_rank.append(out)
    return ctx.per_party(per_rank)
