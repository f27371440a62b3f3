"""deploy/k8s: schema-valid (kubernetes-validate, offline, strict), and consistent with the server itself:
the container's arguments are flags `hexmcp serve` accepts, probes hit the real /health on the served
port with a Host the server allows, and the grace period outlasts preStop plus the drain."""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from hexmcp.app.cli import parse_args
from hexmcp.adapters.http.app import HEALTH_PATH
from hexmcp.adapters.http.guard import LOOPBACK_HOSTS
from hexmcp.adapters.http.liveness import LIVENESS_PATH

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
KUBERNETES_VERSION = "1.30.0"  # the oldest release whose schemas we hold to; newer ones accept these too
MARGIN_S = 5  # the grace period must leave time after the drain for the interpreter to exit


def _manifests() -> dict[str, dict]:
    found = {}
    for path in sorted(K8S.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            found[document["kind"]] = document
    return found


MANIFESTS = _manifests()


def test_the_expected_objects_are_shipped() -> None:
    assert set(MANIFESTS) == {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Secret",
                              "NetworkPolicy"}


@pytest.mark.parametrize("kind", sorted(MANIFESTS))
def test_each_manifest_is_valid_against_the_kubernetes_schema(kind: str) -> None:
    kubernetes_validate.validate(MANIFESTS[kind], KUBERNETES_VERSION, strict=True)


def _container() -> dict:
    [container] = MANIFESTS["Deployment"]["spec"]["template"]["spec"]["containers"]
    return container


def _serve_args():
    return parse_args(["serve", *_container()["args"]])  # exits 2 on a flag hexmcp does not have


def test_the_container_arguments_are_hexmcp_serve_flags_for_a_fleet() -> None:
    args = _serve_args()
    assert args.stateless, "behind a Service without affinity the instances must be stateless"
    assert args.host == "0.0.0.0"
    [port] = _container()["ports"]
    assert port["containerPort"] == args.port


@pytest.mark.parametrize("probe,path", [("startupProbe", HEALTH_PATH), ("readinessProbe", HEALTH_PATH),
                                        ("livenessProbe", LIVENESS_PATH)])
def test_probes_ask_their_endpoint_on_the_served_port_with_an_allowed_host(probe: str, path: str) -> None:
    """Readiness on /health (loading, draining: out of the Service); liveness on /livez, which fails only when
    the process does not answer at all, so a pod is never restarted for loading or draining."""
    get = _container()[probe]["httpGet"]
    assert get["path"] == path
    [port] = _container()["ports"]
    assert get["port"] in (port["name"], port["containerPort"])
    hosts = {header["value"] for header in get.get("httpHeaders", []) if header["name"].lower() == "host"}
    assert hosts and hosts <= LOOPBACK_HOSTS | set(_serve_args().allowed_hosts)


def test_the_grace_period_covers_pre_stop_and_the_drain() -> None:
    pod = MANIFESTS["Deployment"]["spec"]["template"]["spec"]
    command = _container()["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    assert pod["terminationGracePeriodSeconds"] >= int(command[1]) + _serve_args().drain_timeout + MARGIN_S


def test_service_hpa_and_pdb_point_at_the_deployment() -> None:
    deployment = MANIFESTS["Deployment"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert MANIFESTS["Service"]["spec"]["selector"].items() <= labels.items()
    assert MANIFESTS["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert MANIFESTS["Service"]["spec"]["ports"][0]["targetPort"] == _container()["ports"][0]["name"]
    target = MANIFESTS["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert MANIFESTS["PodDisruptionBudget"]["spec"]["minAvailable"] < deployment["spec"]["replicas"]
    assert MANIFESTS["HorizontalPodAutoscaler"]["spec"]["minReplicas"] >= 2  # the PDB can always be met


def test_the_pod_runs_as_the_images_non_root_user() -> None:
    context = MANIFESTS["Deployment"]["spec"]["template"]["spec"]["securityContext"]
    assert context["runAsNonRoot"] and context["runAsUser"] != 0
