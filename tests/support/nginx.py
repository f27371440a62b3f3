"""Real nginx in front of hexmcp instances, configured by deploy/nginx/hexmcp.conf.template.

nginx is the Debian package. When it is missing and the tests run as root (CI does), it is installed
with apt-get (`nginx-light`: the proxy and upstream modules are all we use), so CI runs these tests
rather than skipping them; elsewhere without it they are skipped, saying how to install it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import string
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from .net import free_port

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "deploy" / "nginx" / "hexmcp.conf.template"
APT_PACKAGE = "nginx-light"
SBIN = Path("/usr/sbin/nginx")


def nginx_binary() -> str:
    found = shutil.which("nginx") or (str(SBIN) if os.access(SBIN, os.X_OK) else None)
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        quiet = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=quiet, stdout=subprocess.DEVNULL)
        for package in (APT_PACKAGE, "nginx"):  # nginx-light is Debian's; Ubuntu has only nginx
            installed = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", package],
                                       env=quiet, stdout=subprocess.DEVNULL)
            if installed.returncode == 0 and os.access(SBIN, os.X_OK):
                return str(SBIN)
        pytest.fail(f"apt-get could not install {APT_PACKAGE} or nginx")
    if os.environ.get("CI"):
        pytest.fail("nginx is not installed and cannot be (not root): CI must run the nginx tests")
    pytest.skip(f"nginx is not installed: apt-get install {APT_PACKAGE}")


def render(listen: str, upstream_a: str, upstream_b: str) -> str:
    """The shipped template with its placeholders filled; nginx's own $variables are left alone."""
    text = string.Template(TEMPLATE.read_text()).safe_substitute(
        HEXMCP_LISTEN=listen, HEXMCP_UPSTREAM_A=upstream_a, HEXMCP_UPSTREAM_B=upstream_b)
    assert "${HEXMCP_" not in text, "a placeholder of the template was not filled"
    return text


def main_config(prefix: Path, site: Path) -> str:
    """The smallest nginx.conf around the site file: everything under `prefix`, in the foreground."""
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers must write the temp folders under prefix
    temp = "".join(f"    {kind}_temp_path {prefix / kind};\n"
                   for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"{user}worker_processes 1;\ndaemon off;\npid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'} warn;\n"
            "events { worker_connections 1024; }\n"
            "http {\n"
            f"    access_log {prefix / 'access.log'};\n{temp}"
            f"    include {site};\n"
            "}\n")


class Nginx:
    def __init__(self, process: subprocess.Popen[bytes], port: int, prefix: Path) -> None:
        self.process = process
        self.port = port
        self.prefix = prefix
        self.base = f"http://127.0.0.1:{port}"

    def error_log(self) -> str:
        path = self.prefix / "error.log"
        return path.read_text() if path.exists() else ""


@contextlib.contextmanager
def nginx_in_front(prefix: Path, upstream_ports: tuple[int, int]) -> Iterator[Nginx]:
    binary = nginx_binary()
    port = free_port()
    site = prefix / "hexmcp.conf"
    site.write_text(render(f"127.0.0.1:{port}", *(f"127.0.0.1:{p}" for p in upstream_ports)))
    conf = prefix / "nginx.conf"
    conf.write_text(main_config(prefix, site))
    checked = subprocess.run([binary, "-t", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen([binary, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")])
    try:
        deadline = time.monotonic() + 15
        while True:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            assert process.poll() is None and time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.05)
        yield Nginx(process, port, prefix)
    finally:
        process.terminate()
        process.wait(timeout=10)
