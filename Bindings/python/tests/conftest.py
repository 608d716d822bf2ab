"""Fixtures: the test PKI and mock APNs servers, shared by the whole session.

Nothing is built here. The environment names what to use:
  SWIFTPUSH_LIBRARY  libswiftpush.so (read by the package itself)
  SWIFTPUSH_CLI      the swiftpush-cli executable, which runs the mock APNs server
  SWIFTPUSH_PKI      a directory made by scripts/make-test-pki.sh (made in a temporary
                     directory when unset)
Tests that need a mock are skipped when SWIFTPUSH_CLI is unset.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Sequence

import pytest

import swiftpush

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
TOPIC = "com.example.app"
PAYLOAD = '{"aps":{"alert":{"title":"Hi","body":"café ☃"}}}'


def child_env(**variables: str) -> Dict[str, str]:
    """The environment for a Python child process that must import the swiftpush under test, the
    source tree's or an installed wheel's: PYTHONPATH leads with the directory it was imported from."""
    origin = str(Path(swiftpush.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in [origin, os.environ.get("PYTHONPATH")] if p)
    return dict(os.environ, PYTHONPATH=path, **variables)


class Mock:
    """A mock APNs server process listening on loopback."""

    def __init__(self, cli: str, pki: Path, workdir: Path, name: str, cert: str = "server", extra: Sequence[str] = ()) -> None:
        port_file = workdir / f"{name}.port"
        self.log = workdir / f"{name}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [cli, "mock", "--cert", str(pki / f"{cert}.pem"), "--key", str(pki / f"{cert}.key"), "--port", "0",
                 "--key-id", "TESTKEY001", "--team-id", "TEAM123456",
                 "--auth-key", str(pki / "AuthKey_TESTKEY001.pub.pem"), "--port-file", str(port_file), *extra],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mock {name} did not start: {self.log.read_text()}")
            time.sleep(0.02)
        self.port = int(port_file.read_text())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("SWIFTPUSH_PKI")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("pki")
    subprocess.run(["bash", str(ROOT / "scripts" / "make-test-pki.sh"), str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("SWIFTPUSH_CLI")
    if not path:
        pytest.skip("SWIFTPUSH_CLI is not set (the swiftpush-cli executable that runs the mock APNs server)")
    return path


@pytest.fixture(scope="session")
def mock(cli: str, pki: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mock]:
    server = Mock(cli, pki, tmp_path_factory.mktemp("mock"), "trusted")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def untrusted_mock(cli: str, pki: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mock]:
    """A mock whose certificate comes from a CA the clients don't trust."""
    server = Mock(cli, pki, tmp_path_factory.mktemp("mock"), "untrusted", cert="untrusted-server")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def certificate_mock(cli: str, pki: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mock]:
    """A mock that also accepts client certificates issued by the test CA (certificate auth)."""
    server = Mock(cli, pki, tmp_path_factory.mktemp("mock"), "certificate", extra=["--client-ca", str(pki / "ca.pem")])
    yield server
    server.stop()


@pytest.fixture
def make_client(mock: Mock, pki: Path) -> Iterator[Callable[..., swiftpush.Client]]:
    """Opens clients for the trusted mock (token auth, default topic); closes them afterwards."""
    clients: List[swiftpush.Client] = []

    def make(**options: object) -> swiftpush.Client:
        settings: dict = dict(host="localhost", port=mock.port, ca_file=pki / "ca.pem",
                              key_file=pki / "AuthKey_TESTKEY001.p8", key_id="TESTKEY001", team_id="TEAM123456",
                              topic=TOPIC)
        settings.update(options)
        client = swiftpush.Client(**settings)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close(drain=0)
