"""The Pythonic client over the C ABI: Client, Notification and Result."""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import datetime as _dt
import itertools
import json
import os
import re
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, AsyncIterator, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from . import _ffi
from ._errors import InvalidArgument, InvalidNotification, OutOfMemory, QueueFull, SwiftPushError, Timeout
from ._ffi import NOTIFICATION_RECORD, RESULT_RECORD, PushError, PushNotification, PushResult, PushStats, lib
from ._tables import NOTIFICATION_HAS_EXPIRATION, ConnectionState, Option, Outcome, PushType, Reason, Status
from .payload import Payload

Token = Union[str, bytes]
PayloadLike = Union[bytes, str, Mapping[str, Any], Payload]
Expiration = Union[None, int, _dt.datetime, _dt.timedelta]

#: How many notifications send_many packs into one C call.
BATCH_SIZE = 1024
#: Longest single wait inside the C library: longer waits are cut into slices so that Ctrl-C
#: (KeyboardInterrupt) and other signal handlers still run between them.
_WAIT_SLICE = 0.25

_NOTIFICATION_SIZE = NOTIFICATION_RECORD.size
_RESULT_SIZE = RESULT_RECORD.size
_BATCH_PREFIX = re.compile(r"^notification \d+: ")


@dataclass
class Notification:
    """One notification for send_many (send() takes the same fields as arguments).

    token: the device token as hex, or its raw bytes. payload: JSON as bytes or str (sent as it
    is), or a dict (serialized compactly). topic: None for the client's default. expiration:
    None (no apns-expiration), UNIX seconds (0: try once), a datetime, or a timedelta from now.
    tag: your 64-bit value echoed in the Result; None for the client's next automatic tag.
    """

    token: Token
    payload: PayloadLike
    topic: Optional[str] = None
    push_type: Union[PushType, int, str] = PushType.ALERT
    priority: Optional[int] = None
    expiration: Expiration = None
    collapse_id: Optional[str] = None
    apns_id: Optional[str] = None
    tag: Optional[int] = None


@dataclass(frozen=True)
class Result:
    """The outcome of one notification; every notification queued gets exactly one.

    outcome: ACCEPTED (200), REJECTED (APNs said no: status, reason), or FAILED (no answer:
    transport error, timeout, cancelled at close). reason_text: APNs's text or the library's
    detail. timestamp_ms: for 410, when APNs learned that the token is invalid (0 otherwise).
    """

    tag: int
    outcome: Outcome
    status: int
    reason: Reason
    reason_text: str
    apns_id: str
    unique_id: str
    timestamp_ms: int
    latency_us: int
    attempts: int

    @property
    def accepted(self) -> bool:
        """True when APNs accepted the notification."""
        return self.outcome is Outcome.ACCEPTED

    @property
    def timestamp(self) -> Optional[_dt.datetime]:
        """timestamp_ms as an aware UTC datetime (410 answers only), else None."""
        if not self.timestamp_ms:
            return None
        return _dt.datetime.fromtimestamp(self.timestamp_ms / 1000, tz=_dt.timezone.utc)


@dataclass(frozen=True)
class ConnectionStats:
    """One connection of the pool."""

    state: ConnectionState
    stream_limit: int  #: streams it may carry now
    in_flight: int  #: streams open now


@dataclass(frozen=True)
class Stats:
    """A snapshot of a client's counters (push_client_stats)."""

    queued: int  #: accepted by send, not yet written to a connection
    in_flight: int  #: written, waiting for the answer
    unpolled: int  #: results waiting for poll()
    sent: int  #: requests written (every attempt counts)
    accepted: int
    rejected: int
    failed: int
    retries: int
    goaways: int
    connections_started: int
    connections_open: int
    connections_opening: int
    latency_p50_us: int
    latency_p99_us: int
    last_goaway_reason: str
    last_connection_error: str
    connections: Tuple[ConnectionStats, ...]


_OUTCOMES = {int(o): o for o in Outcome}
_REASONS = {int(r): r for r in Reason}

# Keyword arguments of Client() that are not simply the option's name in lower case.
_OPTION_ALIASES = {
    "key_file": Option.TOKEN_KEY_FILE,
    "key_pem": Option.TOKEN_KEY_PEM,
    "topic": Option.DEFAULT_TOPIC,
}
_OPTIONS_BY_KEYWORD = {o.name.lower(): o for o in Option}
_OPTIONS_BY_KEYWORD.update(_OPTION_ALIASES)


def _connection_state(value: int) -> Any:
    try:
        return ConnectionState(value)
    except ValueError:
        return value


def _release(handle: int) -> None:
    """The finalizer: close without draining, then free (the Client is unreachable by now)."""
    lib.push_client_close(handle, 0)
    lib.push_client_free(handle)


# Clients still open when the interpreter exits are closed (without draining) but not freed:
# a daemon thread may still be inside poll() on them, and the process is ending anyway.
_LIVE: "weakref.WeakSet[Client]" = weakref.WeakSet()


@atexit.register
def _close_at_exit() -> None:
    for client in list(_LIVE):
        lib.push_client_close(client._handle, 0)


def _ms(seconds: Optional[float]) -> int:
    """A timeout in seconds as the C ABI's milliseconds (None: -1, no limit)."""
    if seconds is None:
        return -1
    return max(0, min(int(seconds * 1000), 2**31 - 1))


class _Deadline:
    """A timeout (None: no limit) cut into slices of at most _WAIT_SLICE."""

    __slots__ = ("end",)

    def __init__(self, timeout: Optional[float]) -> None:
        self.end = None if timeout is None else time.monotonic() + max(0.0, timeout)

    def slice_ms(self) -> int:
        if self.end is None:
            return int(_WAIT_SLICE * 1000)
        return int(max(0.0, min(_WAIT_SLICE, self.end - time.monotonic())) * 1000)

    def expired(self) -> bool:
        return self.end is not None and time.monotonic() >= self.end


def _token_bytes(token: Token) -> bytes:
    if type(token) is str:
        return token.encode("utf-8")
    if isinstance(token, (bytes, bytearray, memoryview)):
        return bytes(token).hex().encode("ascii")
    raise TypeError(f"device token must be a hex str or the raw token bytes, not {type(token).__name__}")


def _payload_bytes(payload: PayloadLike) -> bytes:
    if type(payload) is bytes:
        return payload
    if type(payload) is str:
        try:
            return payload.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidNotification(Status.BAD_PAYLOAD, f"payload is not valid UTF-8: {e}") from None
    if isinstance(payload, (bytearray, memoryview)):
        return bytes(payload)
    if isinstance(payload, Payload):
        return payload.build()
    if isinstance(payload, (Mapping, list)):
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raise TypeError(f"payload must be bytes, str, a dict or a Payload, not {type(payload).__name__}")


def _text_bytes(value: Optional[str]) -> Optional[bytes]:
    if value is None:
        return None
    if type(value) is str:
        return value.encode("utf-8")
    return bytes(value)


def _push_type(value: Union[PushType, int, str]) -> int:
    if type(value) is str:
        return PushType.from_header(value)
    return int(value)


def _expiration(value: Expiration) -> Tuple[int, int]:
    """(flags, expiration) for push_notification."""
    if value is None:
        return 0, 0
    if isinstance(value, _dt.datetime):
        return NOTIFICATION_HAS_EXPIRATION, int(value.timestamp())
    if isinstance(value, _dt.timedelta):
        return NOTIFICATION_HAS_EXPIRATION, int(time.time() + value.total_seconds())
    return NOTIFICATION_HAS_EXPIRATION, int(value)


# One notification ready to pack: the five strings (None: absent) and the scalar fields.
_Row = Tuple[bytes, Optional[bytes], bytes, Optional[bytes], Optional[bytes], int, int, int, int, int]


class _Packer:
    """Lays a chunk of notifications out for one C call: a records buffer of push_notification
    and one bytes blob holding every string they point into. Both stay referenced by the packer
    (and so alive) until it is dropped after the call."""

    __slots__ = ("records", "array", "blob", "count")

    def __init__(self, rows: List[_Row]) -> None:
        n = len(rows)
        # Offset 0 of the blob is a NUL: where every empty string points (the C ABI reads a
        # (pointer, 0) pair as a NUL-terminated string). Offset -1 stands for NULL (absent).
        blob = bytearray(b"\0")
        offsets = []
        append = offsets.append
        last_topic: Optional[bytes] = None
        last_topic_at = -1
        last_payload: Optional[bytes] = None
        last_payload_at = 0
        for token, topic, payload, collapse_id, apns_id, *_ in rows:
            if token:
                t = len(blob)
                blob += token
            else:
                t = 0
            if topic is None:
                tp = -1
            elif topic is last_topic:
                tp = last_topic_at
            elif topic:
                tp = last_topic_at = len(blob)
                last_topic = topic
                blob += topic
            else:
                tp = 0
            if payload is last_payload:
                p = last_payload_at
            elif payload:
                p = last_payload_at = len(blob)
                last_payload = payload
                blob += payload
            else:
                p = 0
            if collapse_id is None:
                c = -1
            elif collapse_id:
                c = len(blob)
                blob += collapse_id
            else:
                c = 0
            if apns_id is None:
                a = -1
            elif apns_id:
                a = len(blob)
                blob += apns_id
            else:
                a = 0
            append((t, tp, p, c, a))
        view = (ctypes.c_char * len(blob)).from_buffer(blob)
        base = ctypes.addressof(view)
        records = bytearray(n * _NOTIFICATION_SIZE)
        pack = NOTIFICATION_RECORD.pack_into
        size = _NOTIFICATION_SIZE
        at = 0
        for (token, topic, payload, collapse_id, apns_id, ptype, prio, flags, exp, tag), (t, tp, p, c, a) in zip(rows, offsets):
            pack(records, at, size, ptype, prio, flags, exp, tag,
                 base + t, len(token),
                 base + tp if tp >= 0 else 0, len(topic) if tp >= 0 else 0,
                 base + p, len(payload),
                 base + c if c >= 0 else 0, len(collapse_id) if c >= 0 else 0,
                 base + a if a >= 0 else 0, len(apns_id) if a >= 0 else 0)
            at += size
        self.blob = (blob, view)
        self.records = records
        self.count = n
        self.array = (PushNotification * n).from_buffer(records) if n else None

    def view(self, start: int) -> Any:
        """The records from `start` on, as a ctypes array (shares the buffer)."""
        if start == 0:
            return self.array
        return (PushNotification * (self.count - start)).from_buffer(self.records, start * _NOTIFICATION_SIZE)


class Client:
    """An APNs client: a pool of TLS + HTTP/2 connections, run by the library's own I/O thread.

    Keyword arguments are configuration options (see `Option`; each is accepted by its name in
    lower case, plus key_file, key_pem and topic for TOKEN_KEY_FILE, TOKEN_KEY_PEM and
    DEFAULT_TOPIC); None leaves the library's default. Token authentication needs key_file (or
    key_pem), key_id and team_id.

    Every method is thread-safe. Every notification queued by send/send_many gets exactly one
    Result through poll()/results(), also after close(). Results not yet polled count against
    queue_capacity: poll from another thread (or between batches) while sending.
    """

    def __init__(
        self,
        *,
        host: Optional[str] = None,
        port: Optional[int] = None,
        ca_file: Optional[Union[str, os.PathLike]] = None,
        key_file: Optional[Union[str, os.PathLike]] = None,
        key_id: Optional[str] = None,
        team_id: Optional[str] = None,
        topic: Optional[str] = None,
        connections: Optional[int] = None,
        queue_capacity: Optional[int] = None,
        deadline_ms: Optional[int] = None,
        **options: Any,
    ) -> None:
        named = dict(host=host, port=port, ca_file=ca_file, key_file=key_file, key_id=key_id, team_id=team_id,
                     topic=topic, connections=connections, queue_capacity=queue_capacity, deadline_ms=deadline_ms)
        named.update(options)
        settings = []
        for keyword, value in named.items():
            option = _OPTIONS_BY_KEYWORD.get(keyword)
            if option is None:
                raise TypeError(f"Client() got an unknown option {keyword!r} (known: {', '.join(sorted(_OPTIONS_BY_KEYWORD))})")
            if value is not None:
                settings.append((option, value))
        # A password must be set before the file it opens (PUSH_OPT_P12_PASSWORD).
        settings.sort(key=lambda s: not s[0].name.endswith("PASSWORD"))

        self._handle = ctypes.c_void_p()
        self._tags = itertools.count(1)
        self._local = threading.local()
        self._closed = False
        self._drained = False
        config = lib.push_config_new()
        if not config:
            raise OutOfMemory(Status.NO_MEMORY, "push_config_new: out of memory")
        try:
            err = PushError()
            for option, value in settings:
                if option.kind == "int":
                    lib.push_config_set_int(config, option, int(value), err)
                else:
                    raw = value if isinstance(value, bytes) else os.fsencode(value)
                    lib.push_config_set_string(config, option, raw, len(raw), err)
            lib.push_client_open(config, ctypes.byref(self._handle), err)
        finally:
            lib.push_config_free(config)
        self._finalizer = weakref.finalize(self, _release, self._handle.value)
        self._finalizer.atexit = False  # see _close_at_exit
        _LIVE.add(self)

    # -- sending ---------------------------------------------------------------------------------

    def _row(self, token: Token, payload: PayloadLike, topic: Optional[str], push_type: Union[PushType, int, str],
             priority: Optional[int], expiration: Expiration, collapse_id: Optional[str], apns_id: Optional[str],
             tag: Optional[int]) -> _Row:
        flags, exp = _expiration(expiration)
        return (_token_bytes(token), _text_bytes(topic), _payload_bytes(payload), _text_bytes(collapse_id),
                _text_bytes(apns_id), _push_type(push_type), priority or 0, flags, exp,
                next(self._tags) if tag is None else tag)

    def send(
        self,
        token: Token,
        payload: PayloadLike,
        *,
        topic: Optional[str] = None,
        push_type: Union[PushType, int, str] = PushType.ALERT,
        priority: Optional[int] = None,
        expiration: Expiration = None,
        collapse_id: Optional[str] = None,
        apns_id: Optional[str] = None,
        tag: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> int:
        """Validates and queues one notification; returns its tag (yours, or the next automatic
        one). Its Result comes later through poll()/results().

        timeout: how long to wait for room when the queue is full (None: no limit; 0: raise
        QueueFull at once). Raises InvalidNotification (the message says what is wrong; the
        notification gets no result), QueueFull, Closed.
        """
        row = self._row(token, payload, topic, push_type, priority, expiration, collapse_id, apns_id, tag)
        packer = self._pack([row])
        err = PushError()
        deadline = _Deadline(timeout)
        while True:
            try:
                lib.push_client_send(self._handle, packer.array, deadline.slice_ms(), err)
                return row[9]
            except QueueFull:
                if deadline.expired():
                    raise

    def send_many(self, notifications: Iterable[Any], *, timeout: Optional[float] = None) -> List[int]:
        """Queues many notifications, crossing into the library once per BATCH_SIZE of them.

        Each item is a Notification, a dict with Notification's field names, or a tuple
        (token, payload) or (token, payload, tag). Returns the tags of the notifications
        queued, in order. Stops at the first invalid one (InvalidNotification, whose `accepted`
        and `tags` tell how many were queued before it and their tags) or when no room
        appeared within `timeout` seconds (QueueFull, same attributes; None: wait without limit).
        """
        tags: List[int] = []
        row = self._row
        tag_counter = self._tags
        rows: List[_Row] = []
        add = rows.append
        last_payload: Any = None
        last_bytes = b""
        try:
            for item in notifications:
                if type(item) is tuple:
                    payload = item[1]
                    if payload is last_payload:  # only immutable payloads are remembered
                        pb = last_bytes
                    else:
                        pb = _payload_bytes(payload)
                        if type(payload) is bytes or type(payload) is str:
                            last_payload, last_bytes = payload, pb
                    token = item[0]
                    tb = token.encode("utf-8") if type(token) is str else _token_bytes(token)
                    tag = item[2] if len(item) > 2 else next(tag_counter)
                    add((tb, None, pb, None, None, 0, 0, 0, 0, tag))
                elif isinstance(item, Notification):
                    add(row(item.token, item.payload, item.topic, item.push_type, item.priority,
                            item.expiration, item.collapse_id, item.apns_id, item.tag))
                elif isinstance(item, Mapping):
                    add(row(**{"topic": None, "push_type": PushType.ALERT, "priority": None,
                               "expiration": None, "collapse_id": None, "apns_id": None, "tag": None, **item}))
                else:
                    raise TypeError(f"send_many: expected a Notification, dict or (token, payload) tuple, not {type(item).__name__}")
                if len(rows) == BATCH_SIZE:
                    self._send_rows(rows, tags, timeout)
                    rows = []
                    add = rows.append
            if rows:
                self._send_rows(rows, tags, timeout)
        except SwiftPushError as e:
            e.accepted = len(tags)
            e.tags = tags
            raise
        return tags

    def _pack(self, rows: List[_Row]) -> _Packer:
        try:
            return _Packer(rows)
        except Exception as e:  # struct.error (tag or field out of range), TypeError
            raise InvalidArgument(Status.INVALID_ARGUMENT, f"cannot pack notification: {e}") from None

    def _send_rows(self, rows: List[_Row], tags: List[int], timeout: Optional[float]) -> None:
        packer = self._pack(rows)
        err = PushError()
        accepted = ctypes.c_ssize_t(0)
        done = 0
        deadline = _Deadline(timeout)
        while done < packer.count:
            try:
                lib.push_client_send_batch(self._handle, packer.view(done), packer.count - done,
                                           deadline.slice_ms(), ctypes.byref(accepted), err)
                done = packer.count
            except QueueFull:
                done += accepted.value
                if deadline.expired():
                    tags.extend([r[9] for r in rows[:done]])
                    raise
            except SwiftPushError as e:
                done += accepted.value
                tags.extend([r[9] for r in rows[:done]])
                e.message = _BATCH_PREFIX.sub("", e.message)
                e.message = f"notification {len(tags)}: {e.message}"
                raise
        tags.extend([r[9] for r in rows])

    # -- results ---------------------------------------------------------------------------------

    def _buffer(self, count: int) -> Tuple[bytearray, Any]:
        local = self._local
        buf = getattr(local, "buf", None)
        if buf is None or len(buf) < count * _RESULT_SIZE:
            buf = bytearray(count * _RESULT_SIZE)
            local.buf = buf
            local.array = (PushResult * count).from_buffer(buf)
        return buf, local.array

    def _poll_once(self, max: int, timeout_ms: int) -> Tuple[List[Result], bool]:
        """One push_client_poll: (results, closed and every result returned)."""
        buf, array = self._buffer(max)
        count = ctypes.c_ssize_t(0)
        rc = lib.push_client_poll(self._handle, array, max, _RESULT_SIZE, timeout_ms, ctypes.byref(count))
        n = count.value
        results = _decode(buf, n) if n else []
        if rc == Status.CLOSED:
            self._drained = True
            return results, True
        if rc < 0:
            raise SwiftPushError(rc, _ffi.strerror(rc))
        return results, False

    def poll(self, max: int = 1024, timeout: Optional[float] = 0.0) -> List[Result]:
        """Returns up to `max` results, waiting up to `timeout` seconds for the first (0: don't
        wait; None: no limit). An empty list means none arrived in time, or that the client is
        closed and every result has been returned (see `drained`)."""
        if max <= 0:
            return []
        deadline = _Deadline(timeout)
        while True:
            results, done = self._poll_once(max, deadline.slice_ms())
            if results or done or deadline.expired():
                return results

    def results(self, timeout: Optional[float] = None) -> Iterator[Result]:
        """Yields results as they arrive. Ends when none arrived for `timeout` seconds, or when
        the client is closed and every result has been returned (None: only then)."""
        while True:
            batch = self.poll(1024, timeout)
            yield from batch
            if not batch:
                return

    async def apoll(self, max: int = 1024, timeout: Optional[float] = 0.0) -> List[Result]:
        """poll() for asyncio: the wait happens in the loop's default executor, in slices."""
        loop = asyncio.get_running_loop()
        deadline = _Deadline(timeout)
        while True:
            results, done = await loop.run_in_executor(None, self._poll_once, max, deadline.slice_ms())
            if results or done or deadline.expired():
                return results

    async def aresults(self, timeout: Optional[float] = None) -> AsyncIterator[Result]:
        """results() for asyncio: `async for result in client.aresults(): ...`."""
        while True:
            batch = await self.apoll(1024, timeout)
            for result in batch:
                yield result
            if not batch:
                return

    def stats(self) -> Stats:
        """A snapshot of the client's counters (also after close)."""
        s = PushStats()
        lib.push_client_stats(self._handle, ctypes.byref(s), ctypes.sizeof(s))
        text = lambda b: b.decode("utf-8", "replace")  # noqa: E731
        return Stats(
            queued=s.queued, in_flight=s.in_flight, unpolled=s.unpolled, sent=s.sent, accepted=s.accepted,
            rejected=s.rejected, failed=s.failed, retries=s.retries, goaways=s.goaways,
            connections_started=s.connections_started, connections_open=s.connections_open,
            connections_opening=s.connections_opening, latency_p50_us=s.latency_p50_us,
            latency_p99_us=s.latency_p99_us, last_goaway_reason=text(s.last_goaway_reason),
            last_connection_error=text(s.last_connection_error),
            connections=tuple(ConnectionStats(_connection_state(c.state), c.stream_limit, c.in_flight)
                              for c in s.connections[: min(s.connection_count, len(s.connections))]),
        )

    @property
    def drained(self) -> bool:
        """True once the client is closed and poll() has returned every result."""
        return self._drained

    # -- connection and lifetime -----------------------------------------------------------------

    def wait_connected(self, timeout: Optional[float] = 10.0) -> None:
        """Waits until a connection to APNs is open (None: no limit). Raises TLSError (the
        message says what failed: certificate, host name, ALPN), Timeout (with the last
        connection error), Closed."""
        err = PushError()
        if timeout is not None:  # one wait, so that the Timeout message gives the whole time
            lib.push_client_wait_connected(self._handle, _ms(timeout), err)
            return
        while True:  # no limit: waits in slices, so that Ctrl-C works
            try:
                lib.push_client_wait_connected(self._handle, int(_WAIT_SLICE * 1000), err)
                return
            except Timeout:
                pass

    def close(self, drain: float = 5.0) -> None:
        """Stops accepting notifications, lets those in flight finish for up to `drain` seconds,
        then ends the rest with FAILED results (CANCELLED / CANCELLED_IN_FLIGHT). Idempotent and
        thread-safe; poll()/results() still return the remaining results afterwards. The memory
        is released when the Client is garbage-collected (at interpreter exit, open clients are
        closed without draining)."""
        self._closed = True
        lib.push_client_close(self._handle, _ms(drain))

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._closed

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<swiftpush.Client {'closed' if self._closed else 'open'} at {self._handle.value:#x}>"


def _decode(buf: bytearray, n: int) -> List[Result]:
    """Results from the first n push_result records of buf.

    This runs once per notification, so it builds each frozen Result by filling its __dict__
    directly (what the generated __init__ would do, at a third of the cost)."""
    out = []
    append = out.append
    new = object.__new__
    outcomes, reasons = _OUTCOMES, _REASONS
    unknown = Reason.UNKNOWN
    for (_size, outcome, status, reason, tag, ts, latency, attempts, _r, apns_id, unique_id,
         reason_text) in RESULT_RECORD.iter_unpack(memoryview(buf)[: n * _RESULT_SIZE]):
        r = new(Result)
        r.__dict__.update(
            tag=tag, outcome=outcomes.get(outcome, outcome), status=status, reason=reasons.get(reason, unknown),
            reason_text=reason_text.partition(b"\0")[0].decode("utf-8", "replace") if reason_text[0] else "",
            apns_id=apns_id.partition(b"\0")[0].decode("ascii", "replace"),
            unique_id=unique_id.partition(b"\0")[0].decode("ascii", "replace") if unique_id[0] else "",
            timestamp_ms=ts, latency_us=latency, attempts=attempts,
        )
        append(r)
    return out
