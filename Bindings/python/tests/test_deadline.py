"""A deadline per notification (send/asend/send_many's `deadline`, push_notification.deadline_ms):
against a mock that never answers one token, and a listener that never completes a handshake.
The client's own deadline stays at its default of 60 s, so only the notification's own deadline
can end these waits within BOUND."""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
import time
from pathlib import Path
from typing import Iterator

import pytest

import swiftpush
from swiftpush import Notification, Outcome, Reason

from conftest import PAYLOAD, TOKEN, TOPIC, Mock

#: Requests for this token are never answered by the stalling mock.
STALLED = "5a11ed00" * 8
#: How long a 0.2 s deadline may take to end, at most: the deadline, the library's 50 ms scan and
#: a loaded machine's scheduling; a twelfth of the client's 60 s default.
BOUND = 5.0


@pytest.fixture(scope="module")
def stalling_mock(cli: str, pki: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mock]:
    server = Mock(cli, pki, tmp_path_factory.mktemp("stall"), "stall", extra=["--stall-token", STALLED])
    yield server
    server.stop()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """Accepts TCP connections and never says anything: nothing is ever sent."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield listener.getsockname()[1]
    listener.close()


def client_for(port: int, pki: Path) -> swiftpush.Client:
    return swiftpush.Client(host="localhost", port=port, ca_file=pki / "ca.pem", key_file=pki / "AuthKey_TESTKEY001.p8",
                            key_id="TESTKEY001", team_id="TEAM123456", topic=TOPIC)


@pytest.fixture
def stalling(stalling_mock: Mock, pki: Path) -> Iterator[swiftpush.Client]:
    """A client of the stalling mock whose first notification was accepted (the mock allows one
    stream until a first success)."""
    client = client_for(stalling_mock.port, pki)
    try:
        client.send(TOKEN, PAYLOAD, tag=1)
        assert [r.outcome for r in client.poll(1, 10)] == [Outcome.ACCEPTED]
        yield client
    finally:
        client.close(drain=0)


def test_send_with_a_deadline_ends_timeout_when_apns_does_not_answer(stalling: swiftpush.Client) -> None:
    start = time.monotonic()
    stalling.send(STALLED, PAYLOAD, tag=2, deadline=0.2)
    results = stalling.poll(1, BOUND)
    took = time.monotonic() - start
    assert [(r.tag, r.outcome, r.reason) for r in results] == [(2, Outcome.FAILED, Reason.TIMEOUT)], results
    assert 0.2 <= took < BOUND, took


def test_asend_with_a_deadline_returns_timeout_when_apns_does_not_answer(stalling: swiftpush.Client) -> None:
    async def main() -> swiftpush.Result:
        return await stalling.asend(STALLED, PAYLOAD, tag=3, deadline=dt.timedelta(milliseconds=200))

    start = time.monotonic()
    result = asyncio.run(main())
    took = time.monotonic() - start
    assert (result.tag, result.outcome, result.reason) == (3, Outcome.FAILED, Reason.TIMEOUT), result
    assert 0.2 <= took < BOUND, took


def test_each_notification_of_a_batch_has_its_own_deadline(stalling: swiftpush.Client) -> None:
    async def main() -> list:
        return await stalling.asend_many([Notification(STALLED, PAYLOAD, tag=10, deadline=0.2),
                                          Notification(TOKEN, PAYLOAD, tag=11),
                                          {"token": STALLED, "payload": PAYLOAD, "tag": 12, "deadline": 0.3}])

    start = time.monotonic()
    results = asyncio.run(main())
    took = time.monotonic() - start
    assert [(r.tag, r.outcome, r.reason) for r in results] == [
        (10, Outcome.FAILED, Reason.TIMEOUT), (11, Outcome.ACCEPTED, Reason.NONE), (12, Outcome.FAILED, Reason.TIMEOUT)]
    assert 0.3 <= took < BOUND, took


def test_asend_never_sent_ends_queue_timeout_at_its_deadline(silent_port: int, pki: Path) -> None:
    client = client_for(silent_port, pki)
    try:
        async def main() -> swiftpush.Result:
            return await client.asend(TOKEN, PAYLOAD, tag=4, deadline=0.2)

        start = time.monotonic()
        result = asyncio.run(main())
        took = time.monotonic() - start
        assert (result.outcome, result.reason) == (Outcome.FAILED, Reason.QUEUE_TIMEOUT), result
        assert 0.2 <= took < BOUND, took
    finally:
        client.close(drain=0)


@pytest.mark.parametrize("deadline", [0, -1, -0.5, float("nan"), dt.timedelta(0)])
def test_a_deadline_that_is_not_positive_is_refused(stalling: swiftpush.Client, deadline: object) -> None:
    with pytest.raises(swiftpush.InvalidArgument, match="deadline must be positive seconds"):
        stalling.send(TOKEN, PAYLOAD, deadline=deadline)  # type: ignore[arg-type]


def test_a_deadline_of_another_type_names_the_field(stalling: swiftpush.Client) -> None:
    with pytest.raises(TypeError, match="^deadline must be seconds"):
        stalling.send(TOKEN, PAYLOAD, deadline="1")  # type: ignore[arg-type]
