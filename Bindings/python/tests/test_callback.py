"""Client(on_result=...): results pushed to a callable by the library's I/O thread, against the mock."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from typing import Callable, List

import pytest

import swiftpush
from swiftpush import CallbackError, InvalidArgument, Outcome, Reason

from conftest import PAYLOAD, TOKEN

MakeClient = Callable[..., swiftpush.Client]
CANCELLED = {Reason.CANCELLED, Reason.CANCELLED_IN_FLIGHT}


class Collector:
    """An on_result that keeps every result and can wait for a count of them."""

    def __init__(self) -> None:
        self.results: List[swiftpush.Result] = []
        self.calls = 0
        self.threads = set()
        self.cond = threading.Condition()

    def __call__(self, batch: List[swiftpush.Result]) -> None:
        with self.cond:
            self.calls += 1
            self.threads.add(threading.get_ident())
            self.results.extend(batch)
            self.cond.notify_all()

    def wait_for(self, count: int, timeout: float = 60.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.results) >= count, timeout)


def test_100000_notifications_each_reach_on_result_exactly_once_accepted(make_client: MakeClient) -> None:
    count = 100_000
    got = Collector()
    # Smaller than count: with on_result the capacity counts queued and in-flight only, so
    # send_many goes through without anyone polling.
    client = make_client(on_result=got, queue_capacity=16_384)
    tags = client.send_many((TOKEN, PAYLOAD, i) for i in range(count))
    assert tags == list(range(count))
    assert got.wait_for(count), f"{len(got.results)} of {count} results arrived"
    client.close()
    assert len(got.results) == count  # none twice, none after the count was reached
    assert {r.tag for r in got.results} == set(range(count))
    assert [r for r in got.results if r.outcome is not Outcome.ACCEPTED] == []
    assert all(isinstance(r, swiftpush.Result) and len(r.apns_id) == 36 for r in got.results[:100])
    assert threading.get_ident() not in got.threads  # the library's I/O thread
    assert got.calls < count  # batches, not one call per result
    assert client.stats().unpolled == 0 and client.drained and client.callback_error is None


def test_exceptions_in_on_result_are_caught_logged_once_and_raised_by_close(
        make_client: MakeClient, caplog: pytest.LogCaptureFixture) -> None:
    count = 5000
    seen: List[int] = []
    calls = [0]

    def on_result(batch: List[swiftpush.Result]) -> None:
        calls[0] += 1
        if calls[0] in (2, 4):
            raise ValueError(f"boom {calls[0]}")  # before looking at the batch
        seen.extend(r.tag for r in batch)
        if calls[0] == 6:
            raise KeyError("after the batch was handled")

    client = make_client(on_result=on_result, max_streams=8)  # small batches: several calls
    with caplog.at_level(logging.ERROR, logger="swiftpush"):
        client.send_many((TOKEN, PAYLOAD, i) for i in range(count))
        with pytest.raises(CallbackError) as raised:
            client.close(drain=30)
    assert client.closed
    assert calls[0] >= 7, "delivery stopped after a failure"
    error = raised.value
    assert error.count == 3
    assert [type(e) for e, _ in error.failures] == [ValueError, ValueError, KeyError]
    assert isinstance(error.__cause__, ValueError) and str(error.__cause__) == "boom 2"
    assert "on_result raised 3 times" in str(error) and "boom 2" in str(error)
    # Every result is accounted for: handled by on_result, or handed to a call that raised
    # before looking at it (and kept in the error).
    unhandled = [r.tag for e, batch in error.failures if isinstance(e, ValueError) for r in batch]
    assert error.result_count == sum(len(batch) for _, batch in error.failures)
    assert sorted(seen + unhandled) == list(range(count))
    # Logged once, with the first traceback.
    records = [r for r in caplog.records if r.name == "swiftpush"]
    assert len(records) == 1 and records[0].exc_info[1] is error.__cause__
    # Raised once: a second close() is quiet, the property still tells.
    client.close()
    assert client.callback_error is not None and client.callback_error.count == 3


def test_an_on_result_that_always_raises_keeps_the_first_failures_and_counts_them_all(
        make_client: MakeClient, caplog: pytest.LogCaptureFixture) -> None:
    calls = [0]

    def on_result(batch: List[swiftpush.Result]) -> None:
        calls[0] += 1
        raise RuntimeError("always")

    client = make_client(on_result=on_result, max_streams=4)
    with caplog.at_level(logging.CRITICAL, logger="swiftpush"):
        client.send_many((TOKEN, PAYLOAD, i) for i in range(3000))
        with pytest.raises(CallbackError) as raised:
            client.close(drain=30)
    assert raised.value.count == calls[0] > swiftpush.client.KEPT_CALLBACK_FAILURES
    assert raised.value.result_count == 3000
    assert len(raised.value.failures) == swiftpush.client.KEPT_CALLBACK_FAILURES


def test_a_with_block_that_raises_keeps_its_own_exception(make_client: MakeClient,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    def on_result(batch: List[swiftpush.Result]) -> None:
        raise ValueError("callback")

    with caplog.at_level(logging.CRITICAL, logger="swiftpush"):
        with pytest.raises(LookupError):
            with make_client(on_result=on_result) as client:
                client.send(TOKEN, PAYLOAD)
                client.wait_connected(10)
                raise LookupError("the block's own")
    # Closed by __exit__, the callback's failure kept for the next close().
    assert client.closed and client.callback_error is not None
    with pytest.raises(CallbackError):
        client.close()


def test_polling_a_client_with_on_result_raises_at_once(make_client: MakeClient) -> None:
    client = make_client(on_result=lambda batch: None)
    client.send(TOKEN, PAYLOAD)
    for call in (lambda: client.poll(), lambda: client.poll(10, None), lambda: client.results(),
                 lambda: client.results(timeout=None), lambda: client.aresults(),
                 lambda: asyncio.run(client.apoll(10, None))):
        with pytest.raises(InvalidArgument, match="on_result"):
            call()
    client.close()
    with pytest.raises(InvalidArgument):
        client.poll()
    assert client.drained


def test_close_with_work_in_flight_hands_cancelled_results_to_on_result(make_client: MakeClient) -> None:
    count = 5000
    got = Collector()
    client = make_client(on_result=got, connections=1, max_streams=1)  # one at a time: most stay queued
    tags = client.send_many((TOKEN, PAYLOAD, i) for i in range(count))
    client.close(drain=0)
    # Every result is in when close() returns.
    assert len(got.results) == count
    assert sorted(r.tag for r in got.results) == tags
    cancelled = [r for r in got.results if not r.accepted]
    assert cancelled, "nothing was left to cancel"
    for r in cancelled:
        assert r.outcome is Outcome.FAILED and r.reason in CANCELLED, r
    assert client.drained and client.callback_error is None


@pytest.mark.parametrize("value", [42, "print", object()])
def test_a_non_callable_on_result_raises_TypeError(mock, pki, value: object) -> None:
    with pytest.raises(TypeError, match="on_result must be callable"):
        swiftpush.Client(host="localhost", port=mock.port, ca_file=pki / "ca.pem",
                         key_file=pki / "AuthKey_TESTKEY001.p8", key_id="TESTKEY001", team_id="TEAM123456",
                         on_result=value)


def test_send_inside_on_result_never_waits_and_close_inside_it_is_refused(
        make_client: MakeClient, caplog: pytest.LogCaptureFixture) -> None:
    got = Collector()
    inside: List[BaseException] = []
    client_box: List[swiftpush.Client] = []

    def on_result(batch: List[swiftpush.Result]) -> None:
        got(batch)
        if len(inside) == 0:
            client = client_box[0]
            try:
                client.close()
            except InvalidArgument as e:
                inside.append(e)
            try:
                for i in range(100_000):  # far beyond the capacity: must end with QueueFull
                    client.send(TOKEN, PAYLOAD, tag=1_000_000 + i)
            except swiftpush.QueueFull as e:
                inside.append(e)
            done.set()

    done = threading.Event()
    client = make_client(on_result=on_result, queue_capacity=64)
    client_box.append(client)
    client.send(TOKEN, PAYLOAD, tag=1)
    assert done.wait(30)
    with caplog.at_level(logging.CRITICAL, logger="swiftpush"):
        client.close(drain=30)  # no CallbackError: the callable caught both
    assert [type(e) for e in inside] == [InvalidArgument, swiftpush.QueueFull]
    assert "from on_result" in str(inside[0])
    sent_inside = len(got.results) - 1
    assert 0 < sent_inside <= 64
    assert sorted(r.tag for r in got.results) == [1] + list(range(1_000_000, 1_000_000 + sent_inside))


def _open(mock, pki, on_result) -> swiftpush.Client:
    return swiftpush.Client(host="localhost", port=mock.port, ca_file=pki / "ca.pem",
                            key_file=pki / "AuthKey_TESTKEY001.p8", key_id="TESTKEY001", team_id="TEAM123456",
                            topic="com.example.app", on_result=on_result)


def test_a_dropped_client_with_on_result_is_finalized_and_its_results_still_delivered(mock, pki) -> None:
    got = Collector()
    client = _open(mock, pki, got)
    tags = client.send_many((TOKEN, PAYLOAD, i) for i in range(2000))
    finalizer = client._finalizer
    del client
    gc.collect()
    assert not finalizer.alive  # closed (without draining) and freed
    assert sorted(r.tag for r in got.results) == tags
    assert all(r.accepted or r.reason in CANCELLED for r in got.results)


def test_an_on_result_referring_to_its_client_keeps_it_until_close_then_lets_it_go(mock, pki) -> None:
    class Handler:
        client: swiftpush.Client

        def __init__(self) -> None:
            self.count = 0

        def __call__(self, batch: List[swiftpush.Result]) -> None:
            self.count += len(batch)
            self.client.stats()  # refers to the client

    handler = Handler()
    handler.client = _open(mock, pki, handler)
    handler.client.send_many((TOKEN, PAYLOAD, i) for i in range(100))
    finalizer = handler.client._finalizer
    handler.client.close(drain=10)
    assert handler.count == 100
    del handler
    gc.collect()
    assert not finalizer.alive


def test_a_client_dropped_inside_its_own_on_result_is_released_from_another_thread(mock, pki) -> None:
    holder: List[swiftpush.Client] = []
    finalizers: List[object] = []
    got = Collector()

    def on_result(batch: List[swiftpush.Result]) -> None:
        got(batch)
        if holder:
            finalizers.append(holder[0]._finalizer)
            holder.clear()  # the last reference: the finalizer runs here, on the client's I/O thread

    holder.append(_open(mock, pki, on_result))
    tags = holder[0].send_many((TOKEN, PAYLOAD, i) for i in range(500))
    assert got.wait_for(len(tags), 30)
    for thread in threading.enumerate():
        if thread.name == "swiftpush-release":
            thread.join(30)
    assert len(finalizers) == 1 and not finalizers[0].alive  # type: ignore[attr-defined]
    assert not [t for t in threading.enumerate() if t.name == "swiftpush-release"]
    assert sorted(r.tag for r in got.results) == tags
