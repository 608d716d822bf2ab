"""asend()/asend_many(): awaiting each notification's Result in asyncio, against the mock APNs
server (and a listener that never answers), with the real library."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

import swiftpush
from swiftpush import Outcome, Reason

from conftest import PAYLOAD, TOKEN, TOPIC, Mock

MakeClient = Callable[..., swiftpush.Client]

#: How late the slow mock answers: far longer than the few loop iterations the tests look at
#: before the answers can have come.
SLOW_ANSWER_MS = 1000


@pytest.fixture(scope="module")
def slow_mock(cli: str, pki: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mock]:
    """A mock that answers every request SLOW_ANSWER_MS late."""
    server = Mock(cli, pki, tmp_path_factory.mktemp("slow"), "slow", extra=["--delay-ms", str(SLOW_ANSWER_MS)])
    yield server
    server.stop()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel completes them from the backlog) and
    never says anything: no TLS handshake ever finishes, so nothing is ever sent."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield listener.getsockname()[1]
    listener.close()


def client_for(port: int, pki: Path, **options: object) -> swiftpush.Client:
    return swiftpush.Client(host="localhost", port=port, ca_file=pki / "ca.pem", key_file=pki / "AuthKey_TESTKEY001.p8",
                            key_id="TESTKEY001", team_id="TEAM123456", topic=TOPIC, **options)


def test_asend_returns_the_notifications_result(make_client: MakeClient) -> None:
    client = make_client()

    async def main() -> swiftpush.Result:
        return await client.asend(TOKEN, PAYLOAD, tag=7, apns_id="123e4567-e89b-12d3-a456-426614174000")

    result = asyncio.run(main())
    assert result.accepted and result.status == 200 and result.tag == 7, result
    assert result.apns_id == "123e4567-e89b-12d3-a456-426614174000"
    assert client.poll(10, 0) == [], "the Result went to asend, not to poll()"


def test_asend_many_returns_every_result_in_order_through_a_queue_smaller_than_the_batch(make_client: MakeClient) -> None:
    client = make_client(queue_capacity=64)  # 3000 notifications must wait for room 40+ times
    count = 3000

    async def main() -> List[swiftpush.Result]:
        return await client.asend_many((TOKEN, PAYLOAD, 10_000 + i) for i in range(count))

    results = asyncio.run(main())
    assert [r.tag for r in results] == [10_000 + i for i in range(count)]
    assert all(r.accepted for r in results), [r for r in results if not r.accepted][:3]
    assert client.stats().accepted == count


def test_asend_under_a_full_queue_does_not_block_other_coroutines(slow_mock: Mock, pki: Path) -> None:
    client = client_for(slow_mock.port, pki, queue_capacity=16)
    try:
        client.wait_connected(10)
        # 16 notifications take all the room; their answers come SLOW_ANSWER_MS later.
        filled = client.send_many((TOKEN, PAYLOAD, tag) for tag in range(16))
        with pytest.raises(swiftpush.QueueFull):
            client.send(TOKEN, PAYLOAD, timeout=0)

        async def main() -> tuple:
            waiting = asyncio.ensure_future(client.asend(TOKEN, PAYLOAD, tag=100))
            # asyncio.sleep(0) here and below is not a timed wait: it gives the event loop one turn
            # (asyncio's only way to yield), and these tests count turns to show the loop stays
            # free while asend waits. Conditions are checked at each turn.
            await asyncio.sleep(0)  # asend's first step runs: it finds the queue full
            # An asend that waited inside the library would have held the loop until the
            # answers came: by now they would have.
            answered_at_first_turn = client.stats().accepted
            turns_while_full = 0
            while client.stats().accepted < 16:  # this coroutine goes on while asend waits
                assert not waiting.done()
                turns_while_full += 1
                await asyncio.sleep(0)  # one turn of the loop (see above)
            return answered_at_first_turn, turns_while_full, await waiting

        answered, turns, result = asyncio.run(main())
        assert answered == 0
        assert turns > 10, turns
        assert result.accepted and result.tag == 100, result
        # The 16 results asend's wait took out of the library are poll()'s, once each.
        assert sorted(r.tag for r in client.poll(100, 10)) == filled
        assert client.poll(100, 0) == []
    finally:
        client.close(drain=0)


def test_a_cancelled_asend_waiting_for_room_sends_nothing(silent_port: int, pki: Path) -> None:
    client = client_for(silent_port, pki, queue_capacity=16)
    try:
        client.send_many((TOKEN, PAYLOAD, tag) for tag in range(16))  # queued: no connection opens

        async def main() -> int:
            waiting = asyncio.ensure_future(client.asend(TOKEN, PAYLOAD, tag=100))
            turns = 0
            while turns < 100:  # the loop is free while asend waits for room
                assert not waiting.done()
                turns += 1
                await asyncio.sleep(0)  # one turn of the loop, not a timed wait: counted above
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            with pytest.raises(swiftpush.QueueFull):
                await client.asend(TOKEN, PAYLOAD, tag=101, timeout=0)
            return turns

        assert asyncio.run(main()) == 100
        client.close(drain=0)
        results = client.poll(100, 10) + client.poll(100, 0)
        assert sorted(r.tag for r in results) == list(range(16)), "neither asend queued its notification"
        assert {(r.outcome, r.reason) for r in results} == {(Outcome.FAILED, Reason.CANCELLED)}
        assert client.stats().failed == 16
    finally:
        client.close(drain=0)


def test_asend_and_aresults_share_the_descriptor_without_stealing_results(make_client: MakeClient) -> None:
    client = make_client()

    async def main() -> tuple:
        client.send_many((TOKEN, PAYLOAD, tag) for tag in range(100))

        async def consume() -> List[int]:
            tags = []
            async for result in client.aresults(timeout=20):
                tags.append(result.tag)
                if len(tags) == 100:
                    break
            return tags

        consumed, mine = await asyncio.gather(consume(), client.asend(TOKEN, PAYLOAD, tag=1000))
        return consumed, mine

    consumed, mine = asyncio.run(main())
    assert sorted(consumed) == list(range(100))
    assert mine.tag == 1000 and mine.accepted


def test_asend_with_a_tag_already_awaited_is_refused(silent_port: int, pki: Path) -> None:
    client = client_for(silent_port, pki)
    try:
        async def main() -> None:
            first = asyncio.ensure_future(client.asend(TOKEN, PAYLOAD, tag=5))
            await asyncio.sleep(0)  # one loop turn (not a timed wait): first's asend registers tag 5
            with pytest.raises(swiftpush.InvalidArgument, match="tag 5 is already awaited"):
                await client.asend(TOKEN, PAYLOAD, tag=5)
            first.cancel()

        asyncio.run(main())
        client.close(drain=0)  # (stats are final once closed)
        assert client.stats().failed == 1, "the refused asend queued nothing"
        assert client.poll(10, 0) == [], "the cancelled asend's Result is dropped, not left to poll()"
    finally:
        client.close(drain=0)


def test_asend_many_stopping_at_an_invalid_notification_leaves_the_queued_results_to_poll(make_client: MakeClient) -> None:
    client = make_client()

    async def main() -> None:
        with pytest.raises(swiftpush.InvalidNotification, match="notification 2: ") as raised:
            await client.asend_many([(TOKEN, PAYLOAD, 1), (TOKEN, PAYLOAD, 2), ("abc", PAYLOAD, 3)])
        assert raised.value.accepted == 2 and raised.value.tags == [1, 2]
        tags = []
        async for result in client.aresults(timeout=20):
            tags.append(result.tag)
            if len(tags) == 2:
                break
        assert sorted(tags) == [1, 2]

    asyncio.run(main())


@pytest.mark.parametrize("field, value", [
    ("push_type", None), ("push_type", 1.5), ("priority", "high"), ("priority", True), ("expiration", "tomorrow"),
])
def test_a_value_of_the_wrong_type_names_its_field(make_client: MakeClient, field: str, value: object) -> None:
    client = make_client()
    with pytest.raises(TypeError, match=f"^{field} must be "):
        client.send(TOKEN, PAYLOAD, **{field: value})
    with pytest.raises(TypeError, match=f"^{field} must be "):
        client.send_many([swiftpush.Notification(TOKEN, PAYLOAD, **{field: value})])
    with pytest.raises(TypeError, match=f"^{field} must be "):
        asyncio.run(client.asend(TOKEN, PAYLOAD, **{field: value}))
    assert client.stats().queued == 0 and client.stats().in_flight == 0
