"""deploy/k8s is secure by default (issue 30): the token comes from the shipped Secret, whose placeholder the
server refuses, as it refuses the container's 0.0.0.0 bind with no token; a NetworkPolicy admits only the
router and ingress pods; the root filesystem is read-only with the cache and /tmp on volumes; no
service-account token is mounted; every image is pinned by digest. The audit trail is on, on a volume of its
own, rotated inside the volume's size, its client ids salted with the Secret's `audit-salt` on every replica."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import pytest
import yaml

from hexmcp.app.cli import parse_args
from hexmcp.adapters.audit.salt import MIN_SALT_BYTES, SALT_ENV, deployment_salt
from hexmcp.app.serve_auth import AUDIT_SALT_ENV, TOKEN_PLACEHOLDER, settle_serve_auth
from hexmcp.core.pack import PackProblem

from .test_dockerfile import INSTRUCTIONS

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def _manifests() -> dict[str, dict]:
    return {doc["kind"]: doc for path in sorted(K8S.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())}


MANIFESTS = _manifests()
POD = MANIFESTS["Deployment"]["spec"]["template"]["spec"]
[SERVER] = POD["containers"]


def pinned_by_digest(image: str) -> bool:
    return bool(DIGEST.search(image))


def _env_from_secret(name: str) -> tuple[str, str]:
    [entry] = [e for e in SERVER["env"] if e["name"] == name]
    ref = entry["valueFrom"]["secretKeyRef"]
    return ref["name"], ref["key"]


def _image_cache_dir() -> PurePosixPath:
    env = " ".join(args for kind, args in INSTRUCTIONS if kind == "ENV")
    return PurePosixPath(re.search(r"HEXMCP_CACHE_DIR=(\S+)", env).group(1))


def test_every_image_is_pinned_by_digest_and_a_tag_alone_is_refused() -> None:
    images = [c["image"] for c in [*POD.get("initContainers", []), *POD["containers"]]]
    assert images and all(pinned_by_digest(image) for image in images), images
    assert len(set(images)) == 1, "the seed container must be the server's own image"
    assert not pinned_by_digest("hexmcp:0.1.0") and not pinned_by_digest("hexmcp@sha256:abc")


def test_the_token_comes_from_the_shipped_secret() -> None:
    secret = MANIFESTS["Secret"]
    for variable in ("HEXMCP_AUTH_TOKEN", "HEXMCP_STATE_SECRET"):
        name, key = _env_from_secret(variable)
        assert name == secret["metadata"]["name"] and key in secret["stringData"]
    assert "--auth-token" not in SERVER["args"]  # never on the command line: ps would show it


def _container_settings(monkeypatch: pytest.MonkeyPatch, **env: str):
    for variable in ("HEXMCP_AUTH_TOKEN", "HEXMCP_AUTH_TOKEN_FILE", "HEXMCP_STATE_SECRET", "HEXMCP_AUDIT_SALT"):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in env.items():
        monkeypatch.setenv(variable, value)
    return parse_args(["serve", *SERVER["args"]])


def test_the_server_refuses_the_secrets_placeholders_and_a_missing_token(monkeypatch) -> None:
    values = MANIFESTS["Secret"]["stringData"]
    assert all(value.startswith(TOKEN_PLACEHOLDER) for value in values.values()), values
    real = "0123456789abcdef" * 4
    with pytest.raises(PackProblem, match="placeholder"):  # applied without editing
        settle_serve_auth(_container_settings(monkeypatch, HEXMCP_AUTH_TOKEN=values["auth-token"],
                                              HEXMCP_STATE_SECRET=real))
    with pytest.raises(PackProblem, match="placeholder"):
        settle_serve_auth(_container_settings(monkeypatch, HEXMCP_AUTH_TOKEN=real,
                                              HEXMCP_STATE_SECRET=values["state-secret"]))
    with pytest.raises(PackProblem, match="without authentication"):  # the Secret's key left out
        settle_serve_auth(_container_settings(monkeypatch, HEXMCP_STATE_SECRET=real))
    settings = _container_settings(monkeypatch, HEXMCP_AUTH_TOKEN=real, HEXMCP_STATE_SECRET=real)
    settle_serve_auth(settings)  # a real token: served
    assert settings.auth_token == real


def test_the_network_policy_admits_only_the_router_and_ingress_pods() -> None:
    policy = MANIFESTS["NetworkPolicy"]["spec"]
    labels = MANIFESTS["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert policy["podSelector"]["matchLabels"].items() <= labels.items()
    assert "Ingress" in policy["policyTypes"]
    [port] = SERVER["ports"]
    for rule in policy["ingress"]:
        assert rule.get("from"), "a rule without `from` admits every source"
        for peer in rule["from"]:
            assert "ipBlock" not in peer
            assert peer.get("podSelector", {}).get("matchLabels"), f"{peer} selects every pod"
        assert {p["port"] for p in rule["ports"]} <= {port["name"], port["containerPort"]}


def test_no_service_account_token_is_mounted() -> None:
    assert POD["automountServiceAccountToken"] is False


def _mounts(container: dict) -> dict[PurePosixPath, str]:
    return {PurePosixPath(m["mountPath"]): m["name"] for m in container.get("volumeMounts", [])}


def test_the_root_filesystem_is_read_only_with_the_cache_and_tmp_on_volumes() -> None:
    for container in [*POD["initContainers"], *POD["containers"]]:
        assert container["securityContext"]["readOnlyRootFilesystem"] is True, container["name"]
    volumes = {volume["name"]: volume for volume in POD["volumes"]}
    mounts = _mounts(SERVER)
    cache = _image_cache_dir()
    holding = [path for path in mounts if path == cache or path in cache.parents]
    assert holding, f"{cache} (HEXMCP_CACHE_DIR) is on the read-only root"
    assert PurePosixPath("/tmp") in mounts
    for name in (mounts[holding[0]], mounts[PurePosixPath("/tmp")]):
        assert "emptyDir" in volumes[name]


def test_the_seed_container_fills_the_cache_volume_with_the_images_baked_cache() -> None:
    """The server mounts the volume over the image's cache (or its parent): without the copy it would start
    cold (minutes of model conversion per pod)."""
    [seed] = POD["initContainers"]
    cache = _image_cache_dir()
    [(server_mount, volume)] = [(p, n) for p, n in _mounts(SERVER).items() if p == cache or p in cache.parents]
    [seed_mount] = [p for p, n in _mounts(seed).items() if n == volume]
    target = seed_mount / cache.relative_to(server_mount)  # where the server will find HEXMCP_CACHE_DIR
    script = " ".join(seed["command"])
    assert f"cp -a {cache}/. {target}/" in script and f"mkdir -p {target}" in script


_QUANTITY = re.compile(r"^(\d+)(Ki|Mi|Gi)?$")


def _bytes(quantity: str) -> int:
    number, unit = _QUANTITY.match(quantity).groups()
    return int(number) * {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}[unit]


def test_the_audit_trail_is_on_and_rotated_inside_a_volume_of_its_own(monkeypatch) -> None:
    """The root filesystem is read-only: a trail there would stop start-up (exit 2). An emptyDir that outgrows
    its sizeLimit gets the pod evicted, so the trail and every rotated file must fit in it."""
    settings = _container_settings(monkeypatch)
    assert settings.audit_log, "the Deployment does not turn the audit trail on"
    trail = PurePosixPath(settings.audit_log)
    volumes = {volume["name"]: volume for volume in POD["volumes"]}
    mounts = _mounts(SERVER)
    [(mount, name)] = [(p, n) for p, n in mounts.items() if p in trail.parents]
    assert "emptyDir" in volumes[name]
    assert [n for n in mounts.values() if n == name] == [name], "a volume shared with the cache or /tmp: " \
        "their growth would count against the trail's room, and the pod be evicted for it"
    assert settings.audit_max_bytes, "an unrotated trail grows until the pod is evicted"
    most = settings.audit_max_bytes * (settings.audit_backups + 1)
    assert most <= _bytes(volumes[name]["emptyDir"]["sizeLimit"]), (most, volumes[name])


def test_every_replica_salts_the_audit_ids_with_the_secrets_salt_and_its_placeholder_is_refused(monkeypatch) -> None:
    assert AUDIT_SALT_ENV == SALT_ENV  # the variable start-up checks is the one the audit trail reads
    secret = MANIFESTS["Secret"]
    name, key = _env_from_secret(SALT_ENV)
    assert name == secret["metadata"]["name"] and secret["stringData"][key].startswith(TOKEN_PLACEHOLDER)
    assert "--audit-salt-file" not in SERVER["args"]  # a file beside the trail would differ from pod to pod
    real = "0123456789abcdef" * 4  # what `openssl rand -hex 32` prints: 64 characters
    with pytest.raises(PackProblem, match=f"{SALT_ENV} is the deployment's placeholder"):
        settle_serve_auth(_container_settings(monkeypatch, HEXMCP_AUTH_TOKEN=real, HEXMCP_STATE_SECRET=real,
                                              HEXMCP_AUDIT_SALT=secret["stringData"][key]))
    settle_serve_auth(_container_settings(monkeypatch, HEXMCP_AUTH_TOKEN=real, HEXMCP_STATE_SECRET=real,
                                          HEXMCP_AUDIT_SALT=real))  # a real salt: served
    assert len(real) >= MIN_SALT_BYTES and deployment_salt("/nonexistent/never-read", {SALT_ENV: real}) == real.encode()
