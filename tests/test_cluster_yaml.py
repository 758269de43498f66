"""cluster.yaml is a valid Ray cluster-launcher config with one pinned node type per party."""

import json
from pathlib import Path

import jsonschema
import pytest
import ray.autoscaler
import yaml

CLUSTER_YAML = Path(__file__).resolve().parent.parent / "cluster.yaml"
PARTY_NODE_TYPES = [f"party_{i}" for i in range(5)]


@pytest.fixture(scope="module")
def cluster() -> dict:
    return yaml.safe_load(CLUSTER_YAML.read_text())


def test_matches_rays_cluster_schema(cluster):
    schema = json.loads((Path(ray.autoscaler.__file__).parent / "ray-schema.json").read_text())
    jsonschema.validate(cluster, schema)


def test_head_node_type_is_declared(cluster):
    assert cluster["head_node_type"] in cluster["available_node_types"]


@pytest.mark.parametrize("index", range(len(PARTY_NODE_TYPES)))
def test_each_party_has_its_own_resource_and_label(cluster, index):
    node_type = cluster["available_node_types"][f"party_{index}"]
    assert node_type["resources"] == {f"party_{index}": 1}
    assert node_type["labels"] == {"ppml/party": str(index)}
    assert node_type["max_workers"] == 1  # one machine per party


def test_worker_type_for_tasks_carries_no_party_resource(cluster):
    resources = cluster["available_node_types"]["worker"]["resources"]
    assert not any(name.startswith("party_") for name in resources)


def test_max_workers_covers_every_node_type(cluster):
    types = cluster["available_node_types"]
    head = cluster["head_node_type"]
    per_type = sum(t.get("max_workers", 0) for name, t in types.items() if name != head)
    assert cluster["max_workers"] >= per_type
