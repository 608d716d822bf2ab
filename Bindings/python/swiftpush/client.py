"""The Pythonic client over the C ABI: Client, Notification and Result."""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import datetime as _dt
import itertools
import json
import logging
import math
import os
import re
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from . import _aio, _ffi
from ._errors import CallbackError, InvalidArgument, InvalidNotification, OutOfMemory, QueueFull, SwiftPushError, Timeout
from ._ffi import NOTIFICATION_RECORD, RESULT_RECORD, PushError, PushNotification, PushResult, PushStats, lib
from ._ffi import timeout_ms as _ms
from ._tables import NOTIFICATION_HAS_EXPIRATION, ConnectionState, Option, Outcome, PushType, Reason, Status
from .channels import ChannelMethods, _Channels
from .payload import Payload

Token = Union[str, bytes]
PayloadLike = Union[bytes, str, Mapping[str, Any], Payload]
Expiration = Union[None, int, _dt.datetime, _dt.timedelta]
#: A notification's deadline: seconds from its send (int or float), a timedelta, or None (the
#: client's deadline_ms).
Deadline = Union[None, int, float, _dt.timedelta]

#: How many notifications send_many packs into one C call.
BATCH_SIZE = 1024
#: Longest single wait inside the C library: longer waits are cut into slices so that Ctrl-C
#: (KeyboardInterrupt) and other signal handlers still run between them.
_WAIT_SLICE = 0.25

#: How many failing on_result calls a CallbackError keeps (exception and results); the rest
#: are only counted.
KEPT_CALLBACK_FAILURES = 10

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
    channel_id: makes it a broadcast (iOS 18 Live Activities, see Client.broadcast): token None,
    topic the app's bundle id (None: the client's default), push_type LIVEACTIVITY, expiration
    required (0 on a channel that stores no message). deadline: how long it may take from its
    send to its Result, in seconds (None: the client's deadline_ms), as send()'s.
    """

    token: Optional[Token]
    payload: PayloadLike
    topic: Optional[str] = None
    push_type: Union[PushType, int, str] = PushType.ALERT
    priority: Optional[int] = None
    expiration: Expiration = None
    collapse_id: Optional[str] = None
    apns_id: Optional[str] = None
    tag: Optional[int] = None
    channel_id: Optional[str] = None
    deadline: Deadline = None


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


_log = logging.getLogger("swiftpush")

# The _Delivery whose on_result this thread is running now (none: absent or None).
_running = threading.local()


def _forward_log(user_data: Any, level: int, event: bytes, message: bytes) -> None:
    """The library's log events (push_config_set_log_callback), on its I/O thread, to the
    "swiftpush" logger: the level as is (the library uses logging's values), the event's stable
    name in `record.event`."""
    try:
        name = event.decode("utf-8", "replace")
        _log.log(level, "%s: %s", name, message.decode("utf-8", "replace"), extra={"event": name})
    except Exception:  # never let an exception unwind into the library's thread
        pass


#: One C function for every client, alive as long as the module (no per-client lifetime to track).
_LOG_FUNCTION = _ffi.LOG_CALLBACK(_forward_log)


def _log_level_wanted() -> Optional[int]:
    """The lowest library level the "swiftpush" logger would handle now (None: none)."""
    level = _log.getEffectiveLevel()
    if level > logging.ERROR:
        return None
    return max(logging.DEBUG, min(logging.ERROR, (level + 9) // 10 * 10))


def _release(handle: int, delivery: "Optional[_Delivery]") -> None:
    """The finalizer: close without draining, then free (the Client is unreachable by now).

    `delivery` (the on_result trampoline, if any) is only held here, so that it outlives
    push_client_free. The garbage collector may run this on any thread, also on the client's own
    I/O thread (inside its on_result, or anywhere in the trampoline: any allocation may start a
    collection). The library refuses a close there (that thread cannot wait for itself), so it
    is done from a new thread instead."""
    try:
        lib.push_client_close(handle, 0)
    except InvalidArgument:
        threading.Thread(target=_release, args=(handle, delivery), name="swiftpush-release").start()
        return
    lib.push_client_free(handle)


class _Delivery:
    """The on_result path of one Client: the ctypes trampoline the library calls with each
    batch of results, the user's callable, and what the callable raised.

    The trampoline (`function`) is built once; the Client's finalizer holds this object until
    push_client_free has returned, so the library never calls freed code. It holds the Client
    only weakly (a strong reference from the finalizer would keep the Client alive forever). It
    holds on_result strongly until close() has returned, so that the results a dropped Client's
    finalizer cancels still reach it; then it lets go (an on_result that refers to the Client
    would otherwise keep it alive) and finds on_result through the Client, for the results of
    sends that raced close() (those arrive inside the send call, so the Client is alive)."""

    __slots__ = ("on_result", "owner", "function", "lock", "failures", "count", "result_count", "raised")

    def __init__(self, on_result: Callable[[List["Result"]], Any], owner: "weakref.ref[Client]") -> None:
        self.on_result: Optional[Callable[[List[Result]], Any]] = on_result
        self.owner = owner
        self.function = _ffi.RESULT_CALLBACK(self._call)
        self.lock = threading.Lock()
        self.failures: List[Tuple[BaseException, List[Result]]] = []
        self.count = 0  # calls that raised
        self.result_count = 0  # results handed to those calls
        self.raised = 0  # self.count when close() last raised CallbackError

    def _call(self, _user_data: Any, address: int, count: int) -> None:
        """The trampoline: decodes the batch as poll() does and hands it over. Never raises
        (an exception leaving a ctypes callback is printed and dropped)."""
        previous = getattr(_running, "delivery", None)
        _running.delivery = self
        batch: List[Result] = []
        try:
            batch = _decode(ctypes.string_at(address, count * _RESULT_SIZE), count)
            on_result = self.on_result
            if on_result is None:  # after close(): a send that raced it
                client = self.owner()
                if client is None:
                    raise RuntimeError("results arrived for a Client that no longer exists")
                on_result = client._on_result
            on_result(batch)
        except BaseException as e:  # noqa: B902 - kept for close(); nothing may escape into C
            self._failed(e, batch)
        finally:
            _running.delivery = previous

    def _failed(self, error: BaseException, batch: List["Result"]) -> None:
        with self.lock:
            self.count += 1
            self.result_count += len(batch)
            first = self.count == 1
            if len(self.failures) < KEPT_CALLBACK_FAILURES:
                self.failures.append((error, batch))
        if first:  # only the first: a callable that always fails would flood the log
            _log.error("swiftpush: on_result raised (results keep coming to it; close() raises "
                       "CallbackError, later failures are only counted)", exc_info=error)

    def running_here(self) -> bool:
        """True when this thread is inside this client's on_result."""
        return getattr(_running, "delivery", None) is self

    def error(self, for_raising: bool = False) -> Optional[CallbackError]:
        """The failures so far as a CallbackError (None: none; for_raising: none since the last
        one raised)."""
        with self.lock:
            if self.count == 0 or (for_raising and self.count == self.raised):
                return None
            if for_raising:
                self.raised = self.count
            return CallbackError(self.count, self.result_count, list(self.failures))


# Clients still open when the interpreter exits are closed (without draining) but not freed:
# a daemon thread may still be inside poll() on them, and the process is ending anyway.
_LIVE: "weakref.WeakSet[Client]" = weakref.WeakSet()


@atexit.register
def _close_at_exit() -> None:
    for client in list(_LIVE):
        lib.push_client_close(client._handle, 0)


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


def _token_bytes(token: Optional[Token]) -> Optional[bytes]:
    if token is None:
        return None  # absent: a broadcast has none
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


def _is_int(value: Any) -> bool:
    """An integer, but not a bool (True would pass for 1 silently)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _push_type(value: Union[PushType, int, str]) -> int:
    # Checked here so that a wrong type names the field (int(None) would only say "int()
    # argument must be ..."); a wrong value is the library's to refuse (BAD_PUSH_TYPE).
    if type(value) is str:
        return PushType.from_header(value)
    if _is_int(value):
        return int(value)
    raise TypeError(f"push_type must be a PushType, an int or an apns-push-type name such as 'alert', "
                    f"not {type(value).__name__}")


def _priority(value: Optional[int]) -> int:
    if value is None:
        return 0  # the push type's default
    if _is_int(value):
        return int(value)
    raise TypeError(f"priority must be an int (10, 5 or 1) or None for the push type's default, "
                    f"not {type(value).__name__}")


def _expiration(value: Expiration) -> Tuple[int, int]:
    """(flags, expiration) for push_notification."""
    if value is None:
        return 0, 0
    if isinstance(value, _dt.datetime):
        return NOTIFICATION_HAS_EXPIRATION, int(value.timestamp())
    if isinstance(value, _dt.timedelta):
        return NOTIFICATION_HAS_EXPIRATION, int(time.time() + value.total_seconds())
    if _is_int(value) or isinstance(value, float):
        return NOTIFICATION_HAS_EXPIRATION, int(value)
    raise TypeError(f"expiration must be None, UNIX seconds (int; 0: try once), a datetime or a timedelta, "
                    f"not {type(value).__name__}")


def _deadline_ms(value: Deadline) -> int:
    """push_notification.deadline_ms for a deadline in seconds (0: the client's deadline)."""
    if value is None:
        return 0
    if isinstance(value, _dt.timedelta):
        seconds = value.total_seconds()
    elif _is_int(value) or isinstance(value, float):
        seconds = float(value)
    else:
        raise TypeError(f"deadline must be seconds (an int or a float), a timedelta, or None for the client's "
                        f"deadline_ms, not {type(value).__name__}")
    if not seconds > 0:  # (also NaN)
        raise InvalidArgument(Status.INVALID_ARGUMENT, f"deadline must be positive seconds, got {value!r}")
    # Whole milliseconds, rounded up (a deadline is never shortened); at most ~31 years.
    return min(math.ceil(seconds * 1000), 10**12)


# One notification ready to pack: token, topic, payload, collapse id, apns-id (None: absent),
# the scalar fields (push type, priority, flags, expiration, tag), the channel id, then the
# deadline in milliseconds (0: the client's).
_Row = Tuple[Optional[bytes], Optional[bytes], bytes, Optional[bytes], Optional[bytes], int, int, int, int, int,
             Optional[bytes], int]


#: The numeric fields of a row as push_notification holds them: (name, row index, range).
_NUMERIC_FIELDS = (
    ("push_type", 5, range(-(2**31), 2**31)),
    ("priority", 6, range(-(2**31), 2**31)),
    ("expiration", 8, range(-(2**63), 2**63)),
    ("tag", 9, range(0, 2**64)),
)


def _explain_unpackable(rows: List[_Row], error: Exception) -> str:
    """Names the field that could not be packed and its range (the fast path packs without
    checking; this runs only after it failed)."""
    for i, row in enumerate(rows):
        for name, index, valid in _NUMERIC_FIELDS:
            value = row[index]
            where = f"notification {i}: " if len(rows) > 1 else ""
            if not isinstance(value, int) or isinstance(value, bool):
                return f"{where}{name} must be an integer, not {type(value).__name__}"
            if value not in valid:
                return f"{where}{name} must be in {valid.start}..{valid.stop - 1}, got {value}"
    return f"cannot pack notification: {error}"


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
            if token is None:
                t = -1
            elif token:
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
            channel = rows[len(offsets)][10]
            if channel is None:
                ch = -1
            elif channel:
                ch = len(blob)
                blob += channel
            else:
                ch = 0
            append((t, tp, p, c, a, ch))
        view = (ctypes.c_char * len(blob)).from_buffer(blob)
        base = ctypes.addressof(view)
        records = bytearray(n * _NOTIFICATION_SIZE)
        pack = NOTIFICATION_RECORD.pack_into
        size = _NOTIFICATION_SIZE
        at = 0
        for (token, topic, payload, collapse_id, apns_id, ptype, prio, flags, exp, tag, channel, deadline_ms), \
                (t, tp, p, c, a, ch) in zip(rows, offsets):
            pack(records, at, size, ptype, prio, flags, exp, tag,
                 base + t if t >= 0 else 0, len(token) if t >= 0 else 0,
                 base + tp if tp >= 0 else 0, len(topic) if tp >= 0 else 0,
                 base + p, len(payload),
                 base + c if c >= 0 else 0, len(collapse_id) if c >= 0 else 0,
                 base + a if a >= 0 else 0, len(apns_id) if a >= 0 else 0,
                 base + ch if ch >= 0 else 0, len(channel) if ch >= 0 else 0, deadline_ms)
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


class Client(ChannelMethods):
    """An APNs client: a pool of TLS + HTTP/2 connections, run by the library's own I/O thread.

    Keyword arguments are configuration options (see `Option`; each is accepted by its name in
    lower case, plus key_file, key_pem and topic for TOKEN_KEY_FILE, TOKEN_KEY_PEM and
    DEFAULT_TOPIC); None leaves the library's default. Token authentication needs key_file (or
    key_pem), key_id and team_id. ca_file None trusts the system's trust store (from a wheel on a
    system whose store is not where the wheel's OpenSSL looks, the file `_ffi.system_ca_file` finds).

    Every method is thread-safe. Every notification queued by send/send_many gets exactly one
    Result through poll()/results(), also after close(). Results not yet polled count against
    queue_capacity: poll from another thread (or between batches) while sending.

    on_result: a callable that receives the results instead of poll(): a list of Result per
    batch (up to 256, the same objects poll() returns), called on the library's I/O thread with
    the GIL held, so keep it quick (hand the work to a queue if it is not). Results delivered
    while close() is finishing may arrive on a thread that is sending. With it, poll(),
    results(), apoll() and aresults() raise InvalidArgument, and queue_capacity counts only
    queued and in-flight notifications. Exceptions it raises are caught (delivery goes on), the
    first one is logged to the "swiftpush" logger, and close() raises CallbackError once it has
    closed the client (see callback_error). Inside it, send()/send_many() never wait for room
    (QueueFull at once) and close() raises InvalidArgument. An on_result that refers to the
    Client keeps it from being garbage-collected until close(): close such a client.
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
        on_result: Optional[Callable[[List["Result"]], Any]] = None,
        channel_host: Optional[str] = None,
        channel_port: Optional[int] = None,
        **options: Any,
    ) -> None:
        if on_result is not None and not callable(on_result):
            raise TypeError(f"on_result must be callable (it receives a list of Result per batch), "
                            f"not {type(on_result).__name__}")
        if on_result is not None and not hasattr(lib, "push_config_set_result_callback"):
            raise NotImplementedError("on_result needs push_config_set_result_callback, which this "
                                      "libswiftpush.so lacks (too old)")
        if ca_file is None:
            ca_file = _ffi.system_ca_file()
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

        self._handle = ctypes.c_void_p()
        self._tags = itertools.count(1)
        self._local = threading.local()
        self._closed = False
        self._drained = False
        self._result_fd: Optional[int] = None
        self._aio: Optional[_aio._Dispatcher] = None  # asyncio's reader, made by the first apoll/asend
        self._on_result = on_result
        self._delivery = _Delivery(on_result, weakref.ref(self)) if on_result is not None else None
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
            if self._delivery is not None:
                lib.push_config_set_result_callback(config, self._delivery.function, None, err)
            wanted = _log_level_wanted()
            if wanted is not None and hasattr(lib, "push_config_set_log_callback"):
                lib.push_config_set_log_callback(config, _LOG_FUNCTION, None, wanted, err)
            lib.push_client_open(config, ctypes.byref(self._handle), err)
            # Channel management (create_channel, ...): Apple's management host for this APNs
            # host, or channel_host:channel_port (a test server's).
            self._channels = _Channels(config, channel_host, channel_port)
        finally:
            lib.push_config_free(config)
        self._finalizer = weakref.finalize(self, _release, self._handle.value, self._delivery)
        self._finalizer.atexit = False  # see _close_at_exit
        _LIVE.add(self)

    # -- sending ---------------------------------------------------------------------------------

    def _row(self, token: Optional[Token], payload: PayloadLike, topic: Optional[str], push_type: Union[PushType, int, str],
             priority: Optional[int], expiration: Expiration, collapse_id: Optional[str], apns_id: Optional[str],
             tag: Optional[int], channel_id: Optional[str] = None, deadline: Deadline = None) -> _Row:
        flags, exp = _expiration(expiration)
        return (_token_bytes(token), _text_bytes(topic), _payload_bytes(payload), _text_bytes(collapse_id),
                _text_bytes(apns_id), _push_type(push_type), _priority(priority), flags, exp,
                next(self._tags) if tag is None else tag, _text_bytes(channel_id), _deadline_ms(deadline))

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
        deadline: Deadline = None,
    ) -> int:
        """Validates and queues one notification; returns its tag (yours, or the next automatic
        one). Its Result comes later through poll()/results() (or on_result).

        timeout: how long to wait for room when the queue is full (None: no limit; 0: raise
        QueueFull at once; inside on_result it never waits). deadline: how long the
        notification may take from its send to its Result, in seconds (a float, or a
        timedelta; None: the client's deadline_ms); past it the Result is FAILED, reason
        QUEUE_TIMEOUT if it was never sent, TIMEOUT if APNs did not answer. Raises
        InvalidNotification (the message says what is wrong; the notification gets no result),
        QueueFull, Closed.
        """
        row = self._row(token, payload, topic, push_type, priority, expiration, collapse_id, apns_id, tag,
                        None, deadline)
        return self._send_row(row, timeout)

    def broadcast(
        self,
        channel_id: str,
        payload: PayloadLike,
        *,
        topic: Optional[str] = None,
        priority: Optional[int] = None,
        expiration: Expiration = 0,
        apns_id: Optional[str] = None,
        tag: Optional[int] = None,
        timeout: Optional[float] = None,
        deadline: Deadline = None,
    ) -> int:
        """Queues a broadcast to a channel (iOS 18 Live Activities: POST /4/broadcasts): the
        Live Activity update `payload` reaches every device subscribed to `channel_id` (from
        create_channel). topic: the app's bundle id (None: the client's default topic).
        expiration: 0 (the default; what a channel that stores no message requires), UNIX
        seconds, a datetime or a timedelta. deadline: as send()'s. Returns the tag; the Result's
        apns_id is the apns-request-id and unique_id the apns-unique-id. Raises as send(); a channel_id of None
        raises InvalidNotification (BAD_CHANNEL_ID)."""
        if channel_id is None:
            raise InvalidNotification(Status.BAD_CHANNEL_ID,
                                      "channel_id is None: a broadcast names its channel (create_channel returns one)")
        row = self._row(None, payload, topic, PushType.LIVEACTIVITY, priority, expiration, None, apns_id, tag,
                        channel_id, deadline)
        return self._send_row(row, timeout)

    def _send_row(self, row: _Row, timeout: Optional[float]) -> int:
        packer = self._pack([row])
        err = PushError()
        deadline = _Deadline(0 if self._delivery is not None and self._delivery.running_here() else timeout)
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
        try:
            for rows in self._chunks(notifications):
                self._send_rows(rows, tags, timeout)
        except SwiftPushError as e:
            e.accepted = len(tags)
            e.tags = tags
            raise
        return tags

    def _chunks(self, notifications: Iterable[Any]) -> Iterator[List[_Row]]:
        """The items of send_many/asend_many as rows, in lists of up to BATCH_SIZE."""
        row = self._row
        tag_counter = self._tags
        rows: List[_Row] = []
        add = rows.append
        last_payload: Any = None
        last_bytes = b""
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
                add((tb, None, pb, None, None, 0, 0, 0, 0, tag, None, 0))
            elif isinstance(item, Notification):
                add(row(item.token, item.payload, item.topic, item.push_type, item.priority,
                        item.expiration, item.collapse_id, item.apns_id, item.tag, item.channel_id, item.deadline))
            elif isinstance(item, Mapping):
                add(row(**{"token": None, "topic": None, "push_type": PushType.ALERT, "priority": None,
                           "expiration": None, "collapse_id": None, "apns_id": None, "tag": None,
                           "channel_id": None, "deadline": None, **item}))
            else:
                raise TypeError(f"send_many: expected a Notification, dict or (token, payload) tuple, not {type(item).__name__}")
            if len(rows) == BATCH_SIZE:
                yield rows
                rows = []
                add = rows.append
        if rows:
            yield rows

    def _pack(self, rows: List[_Row]) -> _Packer:
        try:
            return _Packer(rows)
        except Exception as e:  # struct.error (tag or field out of range), TypeError
            raise InvalidArgument(Status.INVALID_ARGUMENT, _explain_unpackable(rows, e)) from None

    def _send_rows(self, rows: List[_Row], tags: List[int], timeout: Optional[float]) -> None:
        packer = self._pack(rows)
        err = PushError()
        accepted = ctypes.c_ssize_t(0)
        done = 0
        deadline = _Deadline(0 if self._delivery is not None and self._delivery.running_here() else timeout)
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
        """Results for poll()/apoll(): those the asyncio reader kept first (see _aio), else one
        push_client_poll whose results an asend awaits go to it. (results, finished)."""
        aio = self._aio
        if aio is not None:
            kept = aio.take_unclaimed(max)
            if kept:
                return kept, False
        results, done = self._poll_c(max, timeout_ms)
        if aio is not None and (results or done):
            results = aio.route(results, done, on_loop=False)
        return results, done

    def _poll_c(self, max: int, timeout_ms: int) -> Tuple[List[Result], bool]:
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

    def _polling(self, method: str) -> None:
        """Raises InvalidArgument when results go to on_result (polling would wait for nothing)."""
        if self._delivery is not None:
            raise InvalidArgument(Status.INVALID_ARGUMENT,
                                  f"{method}(): this client hands its results to on_result; poll(), results(), "
                                  f"apoll() and aresults() are not available with it")

    def poll(self, max: int = 1024, timeout: Optional[float] = 0.0) -> List[Result]:
        """Returns up to `max` results, waiting up to `timeout` seconds for the first (0: don't
        wait; None: no limit). An empty list means none arrived in time, or that the client is
        closed and every result has been returned (see `drained`). Raises InvalidArgument when
        the client was opened with on_result."""
        self._polling("poll")
        if max <= 0:
            return []
        deadline = _Deadline(timeout)
        while True:
            results, done = self._poll_once(max, deadline.slice_ms())
            if results or done or deadline.expired():
                return results

    def results(self, timeout: Optional[float] = None) -> Iterator[Result]:
        """Yields results as they arrive. Ends when none arrived for `timeout` seconds, or when
        the client is closed and every result has been returned (None: only then). Raises
        InvalidArgument at once when the client was opened with on_result."""
        self._polling("results")
        return self._results(timeout)

    def _results(self, timeout: Optional[float]) -> Iterator[Result]:
        while True:
            batch = self.poll(1024, timeout)
            yield from batch
            if not batch:
                return

    def fileno(self) -> int:
        """A file descriptor that is readable while results are waiting (push_client_result_fd),
        for selectors and event loops: when it is readable, poll(timeout=0) until it returns
        nothing. The client owns it (don't close it). Not available with on_result. apoll(),
        asend() and asend_many() read it through loop.add_reader themselves: in a loop where
        they are used, don't add another reader of it (asyncio keeps one per descriptor)."""
        self._polling("fileno")
        if self._result_fd is None:
            fd = ctypes.c_int(-1)
            lib.push_client_result_fd(self._handle, ctypes.byref(fd), PushError())
            self._result_fd = fd.value
        return self._result_fd

    async def apoll(self, max: int = 1024, timeout: Optional[float] = 0.0) -> List[Result]:
        """poll() for asyncio: waits in the event loop itself (loop.add_reader on fileno()), with
        no executor thread. Shares that reader with asend()/asend_many() (see _aio)."""
        self._polling("apoll")
        if max <= 0:
            return []
        results, done = self._poll_once(max, 0)
        if results or done or timeout == 0:
            return results
        return await self._dispatcher().results(max, timeout)

    def _dispatcher(self) -> _aio._Dispatcher:
        """The asyncio reader of this client, bound to the running loop (made on first use)."""
        loop = asyncio.get_running_loop()
        aio = self._aio
        if aio is None:
            aio = self._aio = _aio._Dispatcher(self)
        aio.bind(loop)
        return aio

    async def asend(
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
        deadline: Deadline = None,
    ) -> Result:
        """send() for asyncio, awaiting the notification's Result: `result = await
        client.asend(token, payload)`. Takes send()'s arguments.

        A full queue is waited for in the event loop (other coroutines keep running); timeout:
        how long to wait for room (None: no limit; 0: QueueFull at once). The Result itself
        arrives by the notification's deadline at the latest: `deadline` seconds from its send
        (None: the client's deadline_ms), then FAILED with reason QUEUE_TIMEOUT (never sent) or
        TIMEOUT (sent, not answered). Cancelled before the notification was queued, it is not sent; cancelled after, it still
        gets its outcome (counted in stats() and metrics), which nobody receives. Raises as
        send() (InvalidNotification, QueueFull, Closed); InvalidArgument when the tag is awaited
        by another asend already, or the client was opened with on_result."""
        self._polling("asend")
        row = self._row(token, payload, topic, push_type, priority, expiration, collapse_id, apns_id, tag,
                        None, deadline)
        return (await self._dispatcher().send([row], timeout, batch=False))[0]

    async def asend_many(self, notifications: Iterable[Any], *, timeout: Optional[float] = None) -> List[Result]:
        """send_many() for asyncio: queues every item (the same kinds as send_many's), waiting
        for room in the event loop, then returns their Results in the same order.

        timeout: how long to wait for room in all (None: no limit). An invalid item (or no room
        in time) raises as send_many does, with `accepted` and `tags` saying what was queued
        before it; the Results of those come through poll()/apoll()/aresults(). Cancelled, what
        was queued still gets its outcomes (counted in stats()), which nobody receives."""
        self._polling("asend_many")
        rows = [row for chunk in self._chunks(notifications) for row in chunk]
        return await self._dispatcher().send(rows, timeout, batch=True)

    def aresults(self, timeout: Optional[float] = None) -> AsyncIterator[Result]:
        """results() for asyncio: `async for result in client.aresults(): ...`."""
        self._polling("aresults")
        return self._aresults(timeout)

    async def _aresults(self, timeout: Optional[float]) -> AsyncIterator[Result]:
        while True:
            batch = await self.apoll(1024, timeout)
            for result in batch:
                yield result
            if not batch:
                return

    def metrics_text(self) -> str:
        """The client's counters in Prometheus text format (push_client_metrics_text): outcomes by
        reason, writes, retries, GOAWAYs, connections, queue gauges, the latency histogram."""
        length = ctypes.c_ssize_t(0)
        lib.push_client_metrics_text(self._handle, None, 0, ctypes.byref(length), PushError())
        while True:
            buf = ctypes.create_string_buffer(length.value + 256)  # room for what arrives meanwhile
            try:
                lib.push_client_metrics_text(self._handle, buf, len(buf), ctypes.byref(length), PushError())
                return buf.value.decode("utf-8")
            except SwiftPushError as e:
                if e.code != Status.BUFFER_TOO_SMALL:
                    raise

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
        """True once the client is closed and poll() has returned every result (with on_result:
        once close() has returned, every result having been handed to it)."""
        aio = self._aio
        return self._drained and not (aio is not None and aio.unclaimed)

    @property
    def callback_error(self) -> Optional[CallbackError]:
        """What on_result raised so far, as a CallbackError (count, result_count, failures); None
        when it never raised or there is no on_result. Reading it does not stop close() from
        raising it."""
        return self._delivery.error() if self._delivery is not None else None

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
        closed without draining).

        With on_result: every result has been handed to it when close() returns (except those
        of sends racing close() on other threads, handed over before those sends return). Then,
        if on_result raised since the last close(), raises CallbackError (the client is closed
        all the same). Calling close() from on_result raises InvalidArgument."""
        self._close(drain, raise_callback_error=True)

    def _close(self, drain: float, raise_callback_error: bool) -> None:
        delivery = self._delivery
        if delivery is not None and delivery.running_here():
            raise InvalidArgument(Status.INVALID_ARGUMENT,
                                  "close() called from on_result: it would wait for the thread running it")
        self._closed = True
        lib.push_client_close(self._handle, _ms(drain))
        self._channels.close()
        if delivery is not None:
            delivery.on_result = None  # see _Delivery: reached through the Client from now on
            self._drained = True
            if raise_callback_error:
                error = delivery.error(for_raising=True)
                if error is not None:
                    raise error

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._closed

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        # When the block raised, that exception goes on: a CallbackError stays for close() or
        # callback_error (and its first failure was logged).
        self._close(5.0, raise_callback_error=exc_type is None)

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
