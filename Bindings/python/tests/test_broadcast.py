"""Broadcast push (iOS 18 Live Activities) through the Python binding: channel management
against the mock's management listener, broadcasts against its APNs listener."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest

import swiftpush
from swiftpush import ChannelRejected, InvalidNotification, Notification, Outcome, Reason, StoragePolicy

from conftest import ROOT, TOPIC, Mock, child_env

UPDATE = {"aps": {"timestamp": 1700000000, "event": "update", "content-state": {"score": "1-0"}}}


@pytest.fixture
def broadcast_mock(cli: str, pki: Path, tmp_path: Path) -> Iterator[Tuple[Mock, int]]:
    """A mock of its own with a channel management listener (3 channels per app;
    com.example.disabled has no broadcast push), and the management port."""
    channel_file = tmp_path / "channel.port"
    server = Mock(cli, pki, tmp_path, "broadcast", extra=["--channel-port-file", str(channel_file), "--channel-limit", "3",
                                                           "--broadcast-disabled", "com.example.disabled"])
    yield server, int(channel_file.read_text())
    server.stop()


@pytest.fixture
def client(broadcast_mock: Tuple[Mock, int], pki: Path) -> Iterator[swiftpush.Client]:
    server, channel_port = broadcast_mock
    c = swiftpush.Client(host="localhost", port=server.port, ca_file=pki / "ca.pem", key_file=pki / "AuthKey_TESTKEY001.p8",
                         key_id="TESTKEY001", team_id="TEAM123456", topic=TOPIC, channel_host="localhost",
                         channel_port=channel_port)
    yield c
    c.close(drain=0)


def results(client: swiftpush.Client, n: int) -> List[swiftpush.Result]:
    out: List[swiftpush.Result] = []
    for r in client.results(timeout=20):
        out.append(r)
        if len(out) == n:
            break
    assert len(out) == n
    return out


def test_create_broadcast_read_delete_then_channel_not_registered(client: swiftpush.Client) -> None:
    channel = client.create_channel(TOPIC, StoragePolicy.MOST_RECENT_MESSAGE_STORED)
    assert channel and len(channel) % 4 == 0
    assert client.channel(TOPIC, channel).storage is StoragePolicy.MOST_RECENT_MESSAGE_STORED
    tag = client.broadcast(channel, UPDATE, expiration=int(time.time()) + 3600,
                           apns_id="0A9E1C52-2F86-4A36-9A31-42C5D8A3E4F1")
    [r] = results(client, 1)
    assert r.tag == tag and r.accepted and r.apns_id == "0a9e1c52-2f86-4a36-9a31-42c5d8a3e4f1" and len(r.unique_id) == 36
    assert client.channels(TOPIC) == [channel]
    client.delete_channel(TOPIC, channel)
    client.broadcast(channel, UPDATE, expiration=int(time.time()) + 3600)
    [r] = results(client, 1)
    assert r.outcome is Outcome.REJECTED and r.reason is Reason.CHANNEL_NOT_REGISTERED and r.status == 400
    with pytest.raises(ChannelRejected) as e:
        client.channel(TOPIC, channel)
    assert e.value.reason is Reason.CHANNEL_NOT_REGISTERED and e.value.status == 400 and len(e.value.request_id) == 36
    assert client.channels(TOPIC) == []


def test_channel_refusals_are_typed(client: swiftpush.Client) -> None:
    with pytest.raises(ChannelRejected) as e:
        client.create_channel("com.example.disabled")
    assert e.value.reason is Reason.FEATURE_NOT_ENABLED
    for _ in range(3):
        client.create_channel("com.example.limited", StoragePolicy.NO_MESSAGE_STORED)
    with pytest.raises(ChannelRejected) as e:
        client.create_channel("com.example.limited")
    assert e.value.reason is Reason.CANNOT_CREATE_CHANNEL_CONFIG
    with pytest.raises(InvalidNotification) as bad:
        client.channel(TOPIC, "not base64")
    assert bad.value.code == swiftpush.Status.BAD_CHANNEL_ID
    with pytest.raises(swiftpush.InvalidArgument):
        client.create_channel(TOPIC, 7)  # type: ignore[arg-type]


def test_broadcasts_in_send_many_and_local_checks(client: swiftpush.Client) -> None:
    channel = client.create_channel(TOPIC, StoragePolicy.NO_MESSAGE_STORED)
    tags = client.send_many([
        Notification(None, UPDATE, channel_id=channel, push_type="liveactivity", expiration=0, tag=1),
        {"payload": UPDATE, "channel_id": channel, "push_type": "liveactivity", "expiration": 1900000000, "tag": 2},
        ("00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0", {"aps": {"alert": "device"}}, 3),
    ])
    assert tags == [1, 2, 3]
    by_tag = {r.tag: r for r in results(client, 3)}
    assert by_tag[1].accepted and by_tag[3].accepted
    assert by_tag[2].reason is Reason.BAD_EXPIRATION_DATE, "a no-storage channel takes expiration 0 only"
    with pytest.raises(InvalidNotification) as e:
        client.send(None, UPDATE, push_type="liveactivity", expiration=0)  # type: ignore[arg-type]
    assert e.value.code == swiftpush.Status.BAD_DEVICE_TOKEN, "neither a token nor a channel"
    assert "channel_id" in e.value.message, e.value.message
    with pytest.raises(InvalidNotification) as e:
        client.broadcast(None, UPDATE)  # type: ignore[arg-type]
    assert e.value.code == swiftpush.Status.BAD_CHANNEL_ID
    assert "channel_id is None" in e.value.message
    with pytest.raises(InvalidNotification) as e:
        client.broadcast(channel, UPDATE, expiration=None)
    assert e.value.code == swiftpush.Status.BAD_EXPIRATION
    with pytest.raises(InvalidNotification) as e:
        client.broadcast("abc", UPDATE)
    assert e.value.code == swiftpush.Status.BAD_CHANNEL_ID


def test_channels_need_a_known_management_host(make_client: Callable[..., swiftpush.Client]) -> None:
    c = make_client()  # a mock's host: no management host can be derived
    with pytest.raises(swiftpush.ConfigError):
        c.channels(TOPIC)
    c.close(drain=0)
    with pytest.raises(swiftpush.Closed):
        c.channels(TOPIC)


def test_the_payload_builder_starts_a_live_activity_with_the_ios18_keys() -> None:
    p = swiftpush.Payload(event="start", attributes_type="MatchAttributes", attributes={"home": "A"},
                          input_push_token=1, input_push_channel="dHN0LXNyY2gtY2hubA==",
                          push_type=swiftpush.PushType.LIVEACTIVITY)
    with pytest.raises(InvalidNotification, match="alert"):
        p.build()
    p.set("alert_title", "Kick-off")
    assert b'"input-push-token":1,"input-push-channel":"dHN0LXNyY2gtY2hubA=="' in p.build()
    p.set("event", "update")
    with pytest.raises(InvalidNotification, match="start"):
        p.build()


def test_the_readme_broadcast_example_runs(broadcast_mock: Tuple[Mock, int], pki: Path, tmp_path: Path) -> None:
    server, channel_port = broadcast_mock
    example = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme-block.py"), str(ROOT / "README.md"),
                              "Broadcast push", "python"], check=True, capture_output=True, text=True).stdout
    shutil.copy(pki / "AuthKey_TESTKEY001.p8", tmp_path / "AuthKey_TESTKEY001.p8")
    env = child_env(APNS_HOST="localhost", APNS_PORT=str(server.port), APNS_CA_FILE=str(pki / "ca.pem"),
                    APNS_CHANNEL_HOST="localhost", APNS_CHANNEL_PORT=str(channel_port))
    run = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["1", "ACCEPTED", "200"], run.stdout
