"""The Python binding against the mock APNs server: real TLS + HTTP/2 on loopback."""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import logging
import threading
from typing import Callable, Dict, List

import pytest

import swiftpush
from swiftpush import InvalidNotification, Outcome, PushType, Reason, Status

from conftest import PAYLOAD, TOKEN, TOPIC

MakeClient = Callable[..., swiftpush.Client]


def collect(client: swiftpush.Client, count: int, timeout: float = 20.0) -> List[swiftpush.Result]:
    """Polls until `count` results arrived (or nothing came for `timeout` seconds)."""
    out: List[swiftpush.Result] = []
    while len(out) < count:
        batch = client.poll(count - len(out), timeout)
        if not batch:
            break
        out.extend(batch)
    return out


def test_one_notification_is_accepted_with_its_apns_id_and_tag(make_client: MakeClient) -> None:
    client = make_client()
    client.wait_connected(10)
    tag = client.send(TOKEN, PAYLOAD, apns_id="123E4567-E89B-12D3-A456-426614174000", tag=0xFEEDFACECAFEBEEF,
                      collapse_id="score", expiration=dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1),
                      priority=swiftpush.Priority.IMMEDIATE)
    assert tag == 0xFEEDFACECAFEBEEF
    [result] = collect(client, 1)
    assert result.outcome is Outcome.ACCEPTED and result.accepted
    assert (result.status, result.reason, result.reason_text) == (200, Reason.NONE, "")
    assert result.apns_id == "123e4567-e89b-12d3-a456-426614174000"
    assert result.tag == 0xFEEDFACECAFEBEEF
    assert result.attempts == 1 and result.latency_us > 0 and result.timestamp is None


def test_automatic_tags_count_up_and_results_carry_generated_apns_ids(make_client: MakeClient) -> None:
    client = make_client()
    first = client.send(TOKEN, {"aps": {"alert": "dict payload"}})
    second = client.send(bytes.fromhex(TOKEN), b'{"aps":{}}', push_type="background")
    assert second == first + 1
    results = {r.tag: r for r in collect(client, 2)}
    assert set(results) == {first, second}
    assert all(r.accepted and len(r.apns_id) == 36 for r in results.values())


def test_100000_notifications_through_send_many_each_get_exactly_one_accepted_result(make_client: MakeClient) -> None:
    count = 100_000
    client = make_client(queue_capacity=16_384)  # smaller than count: the poller must keep up
    seen: Dict[int, swiftpush.Result] = {}
    duplicates: List[int] = []

    def poller() -> None:
        while len(seen) + len(duplicates) < count:
            batch = client.poll(4096, 20.0)
            if not batch:
                return
            for r in batch:
                (duplicates.append(r.tag) if r.tag in seen else seen.__setitem__(r.tag, r))

    thread = threading.Thread(target=poller)
    thread.start()
    items = (swiftpush.Notification(TOKEN, PAYLOAD, tag=i) if i % 3 == 0 else (TOKEN, PAYLOAD, i) if i % 3 == 1
             else {"token": TOKEN, "payload": PAYLOAD, "tag": i} for i in range(count))
    tags = client.send_many(items)
    thread.join(60)
    assert tags == list(range(count))
    assert duplicates == []
    assert sorted(seen) == list(range(count))
    not_accepted = [r for r in seen.values() if r.outcome is not Outcome.ACCEPTED]
    assert not_accepted == []


BAD_INPUT = [
    pytest.param(dict(token="00fc13a"), Status.BAD_DEVICE_TOKEN, "odd", id="odd token"),
    pytest.param(dict(token="00fc13adzz"), Status.BAD_DEVICE_TOKEN, "non-hex", id="non-hex token"),
    pytest.param(dict(payload="{" + " " * 5000 + "}"), Status.PAYLOAD_TOO_LARGE, "4096", id="oversized payload"),
    pytest.param(dict(payload='{"aps":'), Status.BAD_PAYLOAD, "JSON", id="invalid JSON"),
    pytest.param(dict(push_type=PushType.BACKGROUND, priority=10), Status.BAD_PRIORITY, "priority 5",
                 id="background at priority 10"),
    pytest.param(dict(collapse_id="x" * 65), Status.BAD_COLLAPSE_ID, "", id="long collapse id"),
    pytest.param(dict(apns_id="not-a-uuid"), Status.BAD_APNS_ID, "", id="bad apns-id"),
]


@pytest.mark.parametrize("change,code,words", BAD_INPUT)
def test_bad_input_raises_InvalidNotification_with_a_clear_message(make_client: MakeClient, change: dict,
                                                                    code: Status, words: str) -> None:
    client = make_client()
    fields = dict(token=TOKEN, payload=PAYLOAD)
    fields.update(change)
    with pytest.raises(InvalidNotification) as raised:
        client.send(fields.pop("token"), fields.pop("payload"), **fields)
    assert raised.value.code == code
    assert words in str(raised.value) and raised.value.message


@pytest.mark.parametrize("tag, words", [
    (2**64, "tag must be in 0..18446744073709551615, got 18446744073709551616"),
    (-1, "tag must be in 0..18446744073709551615, got -1"),
    ("7", "tag must be an integer, not str"),
])
def test_a_tag_out_of_range_names_the_field_and_its_range(make_client: MakeClient, tag: object, words: str) -> None:
    client = make_client()
    with pytest.raises(swiftpush.InvalidArgument) as raised:
        client.send(TOKEN, PAYLOAD, tag=tag)  # type: ignore[arg-type]
    assert str(raised.value).endswith(words), str(raised.value)
    with pytest.raises(swiftpush.InvalidArgument, match="notification 1: tag must be in"):
        client.send_many([(TOKEN, PAYLOAD, 1), (TOKEN, PAYLOAD, 2**64)])
    assert client.send(TOKEN, PAYLOAD, tag=2**64 - 1) == 2**64 - 1
    assert [r.tag for r in collect(client, 1)] == [2**64 - 1]


def test_a_missing_topic_raises_InvalidNotification(make_client: MakeClient) -> None:
    client = make_client(topic=None)
    with pytest.raises(InvalidNotification, match="topic") as raised:
        client.send(TOKEN, PAYLOAD)
    assert raised.value.code == Status.BAD_TOPIC
    assert client.send(TOKEN, PAYLOAD, topic=TOPIC, tag=5) == 5
    assert [r.tag for r in collect(client, 1) if r.accepted] == [5]


def test_send_many_stops_at_the_first_invalid_notification_and_names_it(make_client: MakeClient) -> None:
    client = make_client()
    items = [(TOKEN, PAYLOAD, i) for i in range(1500)]
    items[1300] = ("00fc13a", PAYLOAD, 1300)
    with pytest.raises(InvalidNotification) as raised:
        client.send_many(items)
    assert raised.value.accepted == 1300 and raised.value.tags == list(range(1300))
    assert str(raised.value).startswith("notification 1300: device token has an odd number")
    assert sorted(r.tag for r in collect(client, 1300)) == list(range(1300))


def test_a_wrong_key_is_rejected_with_InvalidProviderToken(make_client: MakeClient, pki) -> None:
    client = make_client(key_file=pki / "AuthKey_WRONGKEY01.p8")
    tags = client.send_many([(TOKEN, PAYLOAD)] * 3)
    results = collect(client, 3)
    assert sorted(r.tag for r in results) == tags
    for r in results:
        assert (r.outcome, r.status, r.reason, r.reason_text) == (Outcome.REJECTED, 403, Reason.INVALID_PROVIDER_TOKEN,
                                                                  "InvalidProviderToken")
        assert r.reason.retry_class == "refused"


def test_an_untrusted_server_certificate_fails_wait_connected_with_TLSError(untrusted_mock, pki) -> None:
    with swiftpush.Client(host="localhost", port=untrusted_mock.port, ca_file=pki / "ca.pem",
                          key_file=pki / "AuthKey_TESTKEY001.p8", key_id="TESTKEY001", team_id="TEAM123456",
                          topic=TOPIC) as client:
        with pytest.raises(swiftpush.TLSError, match="certificate verify failed") as raised:
            client.wait_connected(10)
        assert raised.value.code == Status.TLS


def test_configuration_errors_raise_with_the_librarys_message(mock, pki) -> None:
    with pytest.raises(swiftpush.CredentialsError, match="/nonexistent/AuthKey.p8"):
        swiftpush.Client(key_file="/nonexistent/AuthKey.p8", key_id="TESTKEY001", team_id="TEAM123456")
    with pytest.raises(swiftpush.ConfigError):
        swiftpush.Client(port=70000, key_file=pki / "AuthKey_TESTKEY001.p8", key_id="TESTKEY001", team_id="TEAM123456")
    with pytest.raises(swiftpush.CredentialsError):
        swiftpush.Client(host="localhost", port=mock.port)  # no credentials
    with pytest.raises(TypeError, match="no_such_option"):
        swiftpush.Client(no_such_option=1)


@pytest.mark.parametrize("password_first", [True, False])
def test_a_p12_and_its_password_may_be_given_in_either_order(certificate_mock, pki, password_first: bool) -> None:
    # The library opens the .p12 when the client opens, so the binding passes the options in
    # the caller's order (keyword order is kept): both orders must work, and a wrong password
    # must fail the open in both.
    def options(password: str) -> dict:
        pair = [("p12_password", password), ("p12_file", pki / "client.p12")]
        return dict(pair if password_first else pair[::-1])

    with pytest.raises(swiftpush.CredentialsError, match="wrong password"):
        swiftpush.Client(host="localhost", port=certificate_mock.port, ca_file=pki / "ca.pem", topic=TOPIC,
                         **options("wrong"))
    client = swiftpush.Client(host="localhost", port=certificate_mock.port, ca_file=pki / "ca.pem", topic=TOPIC,
                              **options("secret"))
    try:
        tag = client.send(TOKEN, PAYLOAD)
        assert [(r.tag, r.outcome, r.status) for r in collect(client, 1)] == [(tag, Outcome.ACCEPTED, 200)]
    finally:
        client.close()


def test_close_twice_then_poll_returns_what_is_left(make_client: MakeClient) -> None:
    client = make_client()
    tags = client.send_many([(TOKEN, PAYLOAD)] * 50)
    client.close(drain=5)
    client.close()
    assert client.closed
    results = list(client.results())
    assert sorted(r.tag for r in results) == tags  # each one exactly once, answered or cancelled
    assert client.poll() == [] and client.drained


def test_send_after_close_raises_Closed(make_client: MakeClient) -> None:
    client = make_client()
    client.close()
    with pytest.raises(swiftpush.Closed):
        client.send(TOKEN, PAYLOAD)
    with pytest.raises(swiftpush.Closed) as raised:
        client.send_many([(TOKEN, PAYLOAD)] * 10)
    assert raised.value.accepted == 0
    with pytest.raises(swiftpush.Closed):
        client.wait_connected(1)


def test_four_threads_send_and_two_poll_at_once(make_client: MakeClient) -> None:
    client = make_client(queue_capacity=4096)
    per_thread, senders = 5000, 4
    errors: List[BaseException] = []
    seen: List[int] = []
    lock = threading.Lock()

    def send(first: int) -> None:
        try:
            for start in range(first, first + per_thread, 500):
                client.send_many([(TOKEN, PAYLOAD, tag) for tag in range(start, start + 500)])
            client.send(TOKEN, PAYLOAD, tag=first + per_thread)  # and a single send
        except BaseException as e:  # noqa: B902 - reported below
            errors.append(e)

    def poll() -> None:
        for result in client.results(timeout=10):
            with lock:
                seen.append(result.tag)
            if not result.accepted:
                errors.append(AssertionError(result))

    threads = [threading.Thread(target=send, args=(i * (per_thread + 1),)) for i in range(senders)]
    threads += [threading.Thread(target=poll) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads[:senders]:
        t.join(60)
    client.close(drain=10)
    for t in threads[senders:]:
        t.join(60)
    assert errors == []
    assert sorted(seen) == list(range(senders * (per_thread + 1)))


def test_aresults_yields_results_in_asyncio(make_client: MakeClient) -> None:
    client = make_client()

    async def main() -> List[int]:
        client.send_many([(TOKEN, PAYLOAD, tag) for tag in range(10)])
        tags = []
        async for result in client.aresults(timeout=10):
            tags.append(result.tag)
            if len(tags) == 10:
                break
        return sorted(tags)

    assert asyncio.run(main()) == list(range(10))


@pytest.mark.parametrize("io_threads", [1, 2])
def test_asyncio_receives_100000_results_through_the_descriptor_with_no_executor_thread(make_client: MakeClient,
                                                                                       io_threads: int) -> None:
    client = make_client(io_threads=io_threads, queue_capacity=200_000)
    count = 100_000

    async def main() -> List[int]:
        loop = asyncio.get_running_loop()

        def no_executor(*args: object) -> None:
            raise AssertionError("apoll used an executor thread")

        loop.run_in_executor = no_executor  # type: ignore[assignment]
        threads_before = threading.active_count()
        client.send_many([(TOKEN, PAYLOAD, tag) for tag in range(count)])
        tags: List[int] = []
        async for result in client.aresults(timeout=20):
            assert result.accepted, result
            tags.append(result.tag)
            if len(tags) == count:
                break
        assert threading.active_count() == threads_before, "no thread was started to wait"
        return tags

    tags = asyncio.run(main())
    assert len(tags) == count and len(set(tags)) == count


def test_fileno_is_readable_only_while_results_wait(make_client: MakeClient) -> None:
    import select
    client = make_client()
    fd = client.fileno()
    assert fd == client.fileno() and fd >= 0
    assert select.select([fd], [], [], 0)[0] == []
    client.send(TOKEN, PAYLOAD, tag=1)
    assert select.select([fd], [], [], 10)[0] == [fd]
    assert [r.tag for r in client.poll(10, 0)] == [1]
    assert select.select([fd], [], [], 0)[0] == [], "quiet again once polled"
    client.close()
    assert select.select([fd], [], [], 10)[0] == [fd], "readable once finished"


def test_library_log_events_reach_the_swiftpush_logger(make_client: MakeClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="swiftpush"):
        client = make_client()
        client.wait_connected(10)
        client.send(TOKEN, PAYLOAD, tag=1)
        assert [r.tag for r in collect(client, 1)] == [1]
        client.close()
    events = {(r.levelno, getattr(r, "event", None)) for r in caplog.records if r.name == "swiftpush"}
    assert (logging.DEBUG, "connection.connecting") in events, caplog.text
    assert (logging.INFO, "connection.ready") in events, caplog.text
    assert TOKEN not in caplog.text and "bearer" not in caplog.text


def test_metrics_text_is_prometheus_text_with_the_outcomes(make_client: MakeClient) -> None:
    client = make_client()
    client.send_many([(TOKEN, PAYLOAD)] * 12)
    assert len(collect(client, 12)) == 12
    text = client.metrics_text()
    assert '# TYPE swiftpush_notifications_total counter' in text
    assert 'swiftpush_notifications_total{outcome="accepted",reason="None"} 12\n' in text
    assert 'swiftpush_answer_latency_seconds_count 12\n' in text


def test_the_prometheus_collector_exposes_the_clients_metrics(make_client: MakeClient) -> None:
    prometheus_client = pytest.importorskip("prometheus_client")
    from swiftpush.prometheus import ClientCollector
    client = make_client()
    client.send_many([(TOKEN, PAYLOAD)] * 5)
    assert len(collect(client, 5)) == 5
    registry = prometheus_client.CollectorRegistry()
    registry.register(ClientCollector(client))
    text = prometheus_client.generate_latest(registry).decode()
    assert 'swiftpush_notifications_total{outcome="accepted",reason="None"} 5.0' in text, text
    assert registry.get_sample_value("swiftpush_answer_latency_seconds_count") == 5
    client.close()
    assert prometheus_client.generate_latest(registry).decode().count("swiftpush_notifications_total{") == 1


def test_a_dropped_client_is_closed_and_freed_by_its_finalizer(mock, pki) -> None:
    client = swiftpush.Client(host="localhost", port=mock.port, ca_file=pki / "ca.pem",
                              key_file=pki / "AuthKey_TESTKEY001.p8", key_id="TESTKEY001", team_id="TEAM123456",
                              topic=TOPIC)
    client.send(TOKEN, PAYLOAD)  # in flight or queued when it goes
    finalizer = client._finalizer
    del client
    gc.collect()
    assert not finalizer.alive


def test_nothing_listening_makes_wait_connected_raise_Timeout_with_the_last_error(pki) -> None:
    import socket

    with socket.socket() as s:  # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with swiftpush.Client(host="127.0.0.1", port=port, ca_file=pki / "ca.pem", key_file=pki / "AuthKey_TESTKEY001.p8",
                          key_id="TESTKEY001", team_id="TEAM123456", topic=TOPIC) as client:
        with pytest.raises(swiftpush.Timeout, match="refused") as raised:
            client.wait_connected(0.5)
        assert isinstance(raised.value, TimeoutError) and raised.value.code == Status.TIMEOUT



def test_io_threads_share_the_work_and_every_result_comes_once(make_client: MakeClient) -> None:
    client = make_client(io_threads=3, connections=3, queue_capacity=30000)
    client.wait_connected(10)
    client.send_many([(TOKEN, PAYLOAD, i) for i in range(20000)], timeout=30)
    results = collect(client, 20000)
    assert sorted(r.tag for r in results) == list(range(20000))
    assert all(r.outcome == Outcome.ACCEPTED for r in results)
    stats = client.stats()
    assert stats.accepted == 20000 and len(stats.connections) == 3
