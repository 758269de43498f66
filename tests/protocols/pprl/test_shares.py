"""PPRL's shares backend: the table as Z/2^64 shares ends equal to the fixed-point reference's
entry for entry, with the same actions, for every learner and selection; the exact floor
division; the ring's bound on L refused by name; a constant count of openings per step; by time
with each agent a Ray actor, the local run."""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.privacy.views import ViewRecorder
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ
from ppml.protocols.pprl.shared_division import floor_divide
from ppml.protocols.pprl.shares import SharedTable
from ppml.protocols.pprl.shares_observation import (SharedJointTables, run_shares_observation,
                                                      run_shares_trials)
from ppml.protocols.pprl.shares_time import (SharedTurn, run_shares_protocol,
                                             run_shares_time_trials)
from ppml.runtime import spmd

CLIFF = dict(task="CliffWalking-v1", reward_bound=100, methods=["pprl"], trials=1,
             scale_bits=20, backend="shares")


@pytest.mark.parametrize("learner", ["sarsa", "qlearning"])
@pytest.mark.parametrize("selection", ["random", "greedy", "epsilon_greedy"])
def test_every_learner_and_selection_equals_the_reference(learner, selection):
    options = PPRLOptions(steps_per_agent=60, learner=learner, selection=selection,
                          epsilon=0.3, **CLIFF)
    row = run_shares_protocol(options, 2, 0, 1, key_seed=4).rows[0]
    assert row["q_equal_reference"] and row["action_agreement"] == 1.0
    assert row["rounds"] > 0


def test_fresh_randomness_agrees_with_the_reference_too():
    options = PPRLOptions(steps_per_agent=60, selection="epsilon_greedy", **CLIFF)
    assert run_shares_protocol(options, 2, 0, 2).rows[0]["q_equal_reference"]


@pytest.mark.parametrize("parties", [2, 3, 5])
@pytest.mark.parametrize("bits", [1, 7, 16, 40, 62])
def test_the_floor_division_is_exact_for_every_sign_and_boundary(bits, parties):
    rng = np.random.default_rng(bits)
    values = [0, 1, -1, 2**bits, -2**bits, 2**bits - 1, -(2**bits) - 1, 2**62 - 1, -(2**62),
              *[int(v) for v in rng.integers(-2**62, 2**62, 60)]]
    values = [v for v in values if -2**62 <= v < 2**62]          # the division's domain
    ctx = mpc.local_context(parties, seed=bits)
    x = ctx.share(np.array(values, dtype=np.int64), owner=parties - 1, frac_bits=0, wide=True)
    out = floor_divide(ctx, x.data, bits)
    opened = mpc.tensor.ArithmeticShared(ctx, out, 0).reveal()
    assert [int(v) for v in opened] == [v >> bits for v in values]


def test_a_fixed_point_the_ring_cannot_carry_is_refused_by_name():
    options = PPRLOptions(steps_per_agent=10, **{**CLIFF, "scale_bits": 128})
    with pytest.raises(ValueError, match="pprl.backend=shares .* lower pprl.scale_bits"):
        run_shares_protocol(options, 2, 0, 0, key_seed=1)


def test_a_turn_that_ends_with_an_episode_pads_its_last_selection_for_the_next_holder():
    """On FrozenLake trial 2's first shared turn ends on an episode's end: the holder's
    selection of the next episode's first action comes after its last update, and the turn's
    end pads it (blind elsewhere) so the next holder's first step counts the usual two."""
    options = PPRLOptions(task="FrozenLake-v1", reward_bound=1, steps_per_agent=6,
                          methods=["pprl"], trials=1, selection="greedy", scale_bits=20,
                          backend="shares")
    for trial in range(4):
        assert run_shares_protocol(options, 3, 0, trial, key_seed=3).rows[0]["q_equal_reference"]


@pytest.mark.parametrize("learner", ["sarsa", "qlearning"])
def test_three_agents_by_time_take_turns_on_the_shares_as_the_reference(learner):
    """Agent 0 in the clear, then agents 1 and 2 on a table shared among all three."""
    options = PPRLOptions(steps_per_agent=40, learner=learner, selection="epsilon_greedy",
                          epsilon=0.3, **CLIFF)
    row = run_shares_protocol(options, 3, 0, 1, key_seed=4).rows[0]
    assert row["q_equal_reference"] and row["action_agreement"] == 1.0


@pytest.mark.parametrize("learner", ["sarsa", "qlearning"])
def test_the_other_agent_sees_the_same_openings_in_the_same_order_every_step(learner,
                                                                             monkeypatch):
    """Exploring steps and episode ends (FrozenLake) change nothing agent 0 sees in a step: the
    same messages (their sizes, in order), real or blind selections alike."""
    sizes, steps = [], []
    exchange = mpc.comm.LocalComm.exchange

    def spy(self, datas, to=None, tag="open"):
        sizes.append((tag, tuple(tuple(d.shape) for d in datas)))
        return exchange(self, datas, to=to, tag=tag)

    monkeypatch.setattr(mpc.comm.LocalComm, "exchange", spy)
    options = PPRLOptions(task="FrozenLake-v1", reward_bound=1, steps_per_agent=150,
                          methods=["pprl"], trials=1, selection="epsilon_greedy", epsilon=0.5,
                          learner=learner, scale_bits=20, backend="shares")
    update = SharedTurn.update

    def mark(self, *args):
        update(self, *args)
        steps.append(len(sizes))                  # a step's messages end with its update

    monkeypatch.setattr(SharedTurn, "update", mark)
    result = run_shares_protocol(options, 2, 0, 5, key_seed=3)
    assert result.rows[0]["q_equal_reference"]
    per_step = [tuple(sizes[a:b]) for a, b in zip(steps[:-1], steps[1:])]
    assert len(per_step) == 149 and len(set(per_step)) == 1


@pytest.mark.parametrize("learner", ["sarsa", "qlearning"])
@pytest.mark.parametrize("selection", ["random", "epsilon_greedy"])
def test_by_observation_the_shared_joint_table_equals_the_reference(learner, selection):
    """Each agent's perceptions enter as its own inputs; greedy choices open to each agent its
    own action only; the same joint actions and table as the reference."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=30, methods=["pprl"], trials=1, selection=selection,
                          epsilon=0.3, learner=learner, scale_bits=20, backend="shares")
    result = run_shares_observation(options, 2, 0, 1, key_seed=4, record_views=True)
    last = result.rows[-1]
    assert last["q_equal_reference"] and last["action_agreement"] == 1.0
    assert (last["comparisons"] > 0) == (selection == "epsilon_greedy")
    assert len(result.views["agent-1"]) > 0


@pytest.mark.parametrize("learner", ["sarsa", "qlearning"])
def test_three_factories_by_observation_on_shares_equal_the_reference(learner):
    """Three agents: the joint one-hots an outer product of three, each agent permuting its
    own axis of the row, each opened its own marginal; two trials together."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=15, methods=["pprl"], trials=2, learner=learner,
                          selection="epsilon_greedy", epsilon=0.3, scale_bits=20,
                          backend="shares", trials_together=2)
    for result in run_shares_trials(options, 3, 0, [0, 1], key_seed=4):
        last = result.rows[-1]
        assert last["q_equal_reference"] and last["action_agreement"] == 1.0
        assert last["comparisons"] > 0


@pytest.mark.parametrize("learner", ["sarsa", "qlearning"])
def test_trials_run_together_each_end_as_they_would_alone(learner):
    """Three trials on one engine: each its own reference's table and actions, and the same
    table as the trial run alone; the rounds of a step serve all three."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=25, methods=["pprl"], trials=3, learner=learner,
                          selection="epsilon_greedy", epsilon=0.4, scale_bits=20,
                          backend="shares", trials_together=3)
    together = run_shares_trials(options, 2, 0, [0, 1, 2], key_seed=4)
    alone = [run_shares_observation(options, 2, 0, trial, key_seed=4) for trial in range(3)]
    for trial, (result, single) in enumerate(zip(together, alone)):
        last = result.rows[-1]
        assert last["q_equal_reference"] and last["action_agreement"] == 1.0
        assert last["trial"] == trial and last["trials_together"] == 3
        assert np.array_equal(result.table.q, single.table.q) and result.taken == single.taken
        assert last["comparisons"] == single.rows[-1]["comparisons"]
    assert together[0].rows[-1]["rounds"] < sum(single.rows[-1]["rounds"] for single in alone)


def test_trials_together_is_for_the_shares_backend_by_observation_only():
    with pytest.raises(ValueError, match="pprl.trials_together=2 runs trials together"):
        PPRLOptions(trials_together=2, methods=["pprl"])


@pytest.mark.ray
def test_the_floor_division_runs_with_each_party_in_its_own_process(ray_cluster):
    values = [0, -1, 5, -(2**40), 2**61 + 3, -(2**62)]

    def program(ctx, x=None):
        shared = ctx.share(None if x is None else np.array(x, dtype=np.int64), owner=0,
                           shape=(len(values),), frac_bits=0, wide=True)
        out = floor_divide(ctx, shared.data, 16)
        return mpc.tensor.ArithmeticShared(ctx, out, 0).reveal()

    for out in spmd.run(program, 2, runtime="ray", seed=3, inputs={0: {"x": values}}):
        assert [int(v) for v in out] == [v >> 16 for v in values]


@pytest.mark.ray
def test_an_update_on_shares_runs_with_each_agent_in_its_own_process(ray_cluster):
    """Eqs. 3-4 with agent 0's table and agent 1's one-hots and reward term, each party in
    its own Ray process: the fixed-point reference's update."""
    reference = FixedPointQ(2, 2, alpha=0.5, gamma=0.9, learner="sarsa", scale_bits=8,
                            division_bits=8)
    reference.q[:] = [[300, -41], [7, 1000]]
    start = [int(v) for v in reference.q.ravel()]
    term = reference.alpha_k * reference.scaled_reward(-1.0)
    reference.update(0, 1, -1.0, 1, 1)

    def program(ctx, table=None, picks=None, reward=None):
        def one_hots(owner, values, shape):
            return ctx.share(None if values is None else np.array(values, dtype=np.int64),
                             owner=owner, shape=shape, frac_bits=0)
        shared = SharedTable(ctx, one_hots(0, table, (4,)), 2, 2, reference,
                             [ViewRecorder(False)] * 2)
        rows = one_hots(1, picks, (2, 4))
        read = rows @ shared.table.reshape(4, 1)
        shared.learn(rows[0], read[0, 0], read[1, 0], [(1, reward)])
        return shared.table.reveal()

    outs = spmd.run(program, 2, runtime="ray", seed=5,
                    inputs={0: {"table": start},
                            1: {"picks": [[0, 1, 0, 0], [0, 0, 0, 1]], "reward": term}})
    for out in outs:
        assert [int(v) for v in out] == [int(v) for v in reference.q.ravel()]


@pytest.mark.ray
@pytest.mark.parametrize("learner", ["sarsa", "qlearning"])
def test_the_joint_tables_run_with_each_agent_in_its_own_process(ray_cluster, learner):
    """Each agent passes only its own perceptions, rewards and orders (None for the others'):
    as Ray actors the agents reach the tables and the greedy actions of one process that holds
    them all."""
    options = PPRLOptions(task="load_balancing", partition="observation", methods=["pprl"],
                          learner=learner, scale_bits=20, backend="shares")
    rules = FixedPointQ(1, 1, options.alpha, options.gamma, learner, 20, options.division_bits)
    sizes, moves, trials, steps = [3, 2], [2, 2], 2, 5
    rng = np.random.default_rng(5)

    def own(agent):
        size, move = sizes[agent], moves[agent]
        draw = {"s": rng.integers(size, size=(steps, trials)), "a": rng.integers(move, size=(
                    steps, trials)), "r": rng.integers(-3, 4, size=(steps, trials)).astype(float),
                "s2": rng.integers(size, size=(steps, trials)),
                "a2": rng.integers(move, size=(steps, trials))}
        draw["order"] = np.array([[rng.permutation(move) for _ in range(trials)]
                                  for _ in range(steps)])
        return draw

    data = {agent: own(agent) for agent in range(2)}

    def program(ctx, **agents):
        mine = {int(name.split("_")[1]): value for name, value in agents.items()}
        table = SharedJointTables(ctx, trials, sizes, moves, rules,
                                  [ViewRecorder(False), ViewRecorder(False)])

        def column(key, t):
            return [[mine[a][key][t][k] if a in mine else None for a in range(2)]
                    for k in range(trials)]

        greedy = []
        for t in range(steps):
            greedy.append(table.first_maximum_joint(list(range(trials)), column("s", t),
                                                    column("order", t)))
            table.update(column("s", t), column("a", t), column("r", t), column("s2", t),
                         column("a2", t))
        return greedy, table.final_values()         # to agent 0 alone (EVALUATION ONLY)

    inputs = {agent: {f"agent_{agent}": data[agent]} for agent in range(2)}
    local = spmd.run(program, 2, runtime="local", seed=3, inputs=inputs)[0]
    apart = spmd.run(program, 2, runtime="ray", seed=3, inputs=inputs)
    for agent, (greedy, tables) in enumerate(apart):
        assert tables == (local[1] if agent == 0 else None)
        assert [[trial[agent] for trial in step] for step in greedy] == \
            [[trial[agent] for trial in step] for step in local[0]]
        assert all(trial[1 - agent] is None for step in greedy for trial in step)


@pytest.mark.ray
@pytest.mark.parametrize("agents,learner,selection", [(2, "sarsa", "epsilon_greedy"),
                                                      (3, "qlearning", "greedy")])
def test_by_time_each_agent_a_ray_actor_gives_the_local_run(ray_cluster, agents, learner,
                                                              selection):
    """The holder of a turn plays it, the others follow it with no inputs of theirs: the
    local run's table, actions, rounds and bytes, and each agent's view of the same openings
    (their values differ only where the holder's blind orders come from the OS)."""
    options = PPRLOptions(steps_per_agent=15, learner=learner, selection=selection,
                          epsilon=0.3, **CLIFF)
    local, ray = (run_shares_time_trials(options, agents, 0, [0, 1], key_seed=3,
                                         record_views=True, runtime=runtime)
                  for runtime in ("local", "ray"))
    for here, there in zip(local, ray):
        assert np.array_equal(here.table.q, there.table.q)
        assert [_untimed(r) for r in here.rows] == [_untimed(r) for r in there.rows]
        assert there.rows[0]["q_equal_reference"] and there.rows[0]["action_agreement"] == 1.0
    assert set(ray[0].views) == {f"agent-{i}" for i in range(agents)} and not ray[1].views
    for agent, view in ray[0].views.items():
        columns = ("t", "l", "position")
        assert view.select(columns).equals(local[0].views[agent].select(columns))


def _untimed(row: dict) -> dict:
    return {k: v for k, v in row.items() if not k.endswith("_s")}


@pytest.mark.ray
def test_by_time_unseeded_ray_agents_draw_their_own_choices_and_match_the_reference(
        ray_cluster):
    options = PPRLOptions(steps_per_agent=15, selection="epsilon_greedy", epsilon=0.3, **CLIFF)
    row = run_shares_time_trials(options, 2, 0, [4], runtime="ray")[0].rows[0]
    assert row["q_equal_reference"] and row["action_agreement"] == 1.0


@pytest.mark.ray
@pytest.mark.parametrize("agents,learner,selection,together", [
    (2, "sarsa", "epsilon_greedy", 2), (3, "qlearning", "greedy", 1)])
def test_by_observation_each_agent_a_ray_actor_gives_the_local_run(ray_cluster, agents,
                                                                     learner, selection,
                                                                     together):
    """Each agent chooses from its own generator and perceives through the world, a role of
    its own: the local run's rows, tables, actions and views, value for value."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=3, methods=["pprl"], trials=2,
                          trials_together=together, selection=selection, epsilon=0.3,
                          learner=learner, backend="shares", scale_bits=20)
    local, ray = (run_shares_trials(options, agents, 0, [0, 1], key_seed=3, record_views=True,
                                    runtime=runtime) for runtime in ("local", "ray"))
    for here, there in zip(local, ray):
        assert [_untimed(r) for r in here.rows] == [_untimed(r) for r in there.rows]
        assert np.array_equal(here.table.q, there.table.q) and here.taken == there.taken
        assert there.rows[-1]["q_equal_reference"]
    assert set(ray[0].views) == {f"agent-{i}" for i in range(agents)}
    for agent, view in ray[0].views.items():
        assert view.equals(local[0].views[agent])
    fresh = run_shares_trials(options, agents, 0, [3], runtime="ray")[0].rows[-1]
    assert fresh["q_equal_reference"] and fresh["action_agreement"] == 1.0


def test_by_observation_fresh_trials_together_each_match_their_reference():
    """Each trial of a group draws its own coin and its agents their own choices."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=8, methods=["pprl"], trials=2, trials_together=2,
                          selection="epsilon_greedy", epsilon=0.5, backend="shares",
                          scale_bits=20)
    results = run_shares_trials(options, 2, 0, [0, 1])
    assert all(r.rows[-1]["q_equal_reference"] and r.rows[-1]["action_agreement"] == 1.0
               for r in results)
    assert results[0].taken != results[1].taken
