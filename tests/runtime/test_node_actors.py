"""Actors called together: every one's answer, in order.  (`one_per_node` places them on the
``party_<i>`` nodes of `cluster.two_local_nodes`, which jobs.bench_per_arm nodes=2 makes.)"""

import ray

from ppml.runtime import node_actors


class Echo:
    def twice(self, x):
        return 2 * x


def test_every_actor_answers_in_order(ray_cluster):
    actors = [ray.remote(num_cpus=0)(Echo).remote() for _ in range(2)]
    assert node_actors.call_all(actors, "twice", 21) == [42, 42]
