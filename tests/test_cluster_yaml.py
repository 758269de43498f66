"""cluster.yaml is a valid Ray cluster-launcher config with one pinned node type per party."""

import json
from pathlib import Path

import jsonschema
import pytest
import ray.autoscaler
import yaml

from tests.jobs.readme import readme_commands, run_command

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


def pyproject() -> dict:
    import tomllib
    return tomllib.loads((CLUSTER_YAML.parent / "pyproject.toml").read_text())


def test_the_image_s_python_and_ray_satisfy_pyproject(cluster):
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    image = cluster["docker"]["image"]
    ray_version, python_tag = image.split(":")[1].split("-")[:2]
    python = f"{python_tag[2]}.{python_tag[3:]}"
    assert python in SpecifierSet(pyproject()["project"]["requires-python"])
    ray_spec = next(Requirement(d) for d in pyproject()["project"]["dependencies"]
                    if d.startswith("ray"))
    assert ray_version in ray_spec.specifier
    # the setup commands install with the image's Python, not another one on the host
    assert all(c.startswith("python -m pip install") for c in cluster["setup_commands"])


def test_token_auth_ray_tls_and_a_local_dashboard(cluster):
    options = " ".join(cluster["docker"]["run_options"])
    for setting in ("RAY_AUTH_MODE=token", "RAY_USE_TLS=1", "RAY_TLS_SERVER_CERT=",
                    "RAY_TLS_SERVER_KEY=", "RAY_TLS_CA_CERT="):
        assert f"--env {setting}" in options
    head = cluster["head_start_ray_commands"]
    start = next(c for c in head if "ray start --head" in c)
    assert "--dashboard-host=127.0.0.1" in start and "0.0.0.0" not in " ".join(head)
    for commands in (head, cluster["worker_start_ray_commands"]):     # a node's certificate
        at = [k for k, c in enumerate(commands) if "jobs.ray_tls node" in c]  # before Ray
        assert at and at[0] < next(k for k, c in enumerate(commands) if "ray start" in c)
    assert "/home/ray/.ray/auth_token" in cluster["file_mounts"]


def test_the_ray_tls_certificates_verify(tmp_path, monkeypatch):
    """jobs.ray_tls makes a party's Ray CA (the README's command, as written, in a home of its
    own) and a node certificate for this machine."""
    import ssl
    (authority,) = readme_commands("python -m jobs.ray_tls")
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / ".ppml" / "ray-tls"
    run_command(authority)
    run_command(["python", "-m", "jobs.ray_tls", "node", f"dir={folder}"])
    assert oct((folder / "node.key").stat().st_mode & 0o777) == "0o600"
    context = ssl.create_default_context(cafile=str(folder / "authority.crt"))
    context.load_cert_chain(folder / "node.crt", folder / "node.key")   # key matches
    from cryptography import x509
    node = x509.load_pem_x509_certificate((folder / "node.crt").read_bytes())
    node.verify_directly_issued_by(x509.load_pem_x509_certificate(
        (folder / "authority.crt").read_bytes()))


def test_the_dealer_has_its_own_node_type(cluster):
    """placement=true pins the dealer actor to the `dealer` resource (ppml/runtime/placement)."""
    node_type = cluster["available_node_types"]["dealer"]
    assert node_type["resources"] == {"dealer": 1} and node_type["max_workers"] == 1
