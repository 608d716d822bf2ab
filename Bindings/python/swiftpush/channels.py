"""Broadcast channels (iOS 18 Live Activities): the channel management calls of Client.

A Client opens, next to its APNs connections, a channel management client for Apple's
management host (api-manage-broadcast[.sandbox].push.apple.com, derived from the APNs host) or
the one named by channel_host/channel_port. Its calls are rare administrative requests: each
is one request and answer, made on the calling thread (calls take turns).
"""

from __future__ import annotations

import ctypes
import enum
import threading
import weakref
from dataclasses import dataclass
from typing import Any, List, Optional

from ._errors import ChannelRejected, Closed, SwiftPushError, error_for
from ._ffi import PushChannelIds, PushChannelResult, PushError, lib, timeout_ms
from ._tables import Reason, Status

#: How long a channel call waits for its answer by default (seconds).
DEFAULT_CHANNEL_TIMEOUT = 30.0
#: The room a created channel id needs (PUSH_CHANNEL_ID_CAPACITY).
_CHANNEL_ID_CAPACITY = 257


class StoragePolicy(enum.IntEnum):
    """A channel's message storage policy, fixed when it is created."""

    #: A higher publishing budget; broadcasts must have expiration 0.
    NO_MESSAGE_STORED = 0
    #: APNs keeps the last broadcast (up to 8 hours).
    MOST_RECENT_MESSAGE_STORED = 1


@dataclass(frozen=True)
class ChannelInfo:
    """What reading a channel tells: its id and storage policy."""

    channel_id: str
    storage: StoragePolicy


def _bytes(value: str, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    return value.encode("utf-8")


class _Channels:
    """The push_channels_t of a Client (or why there is none) and the calls on it."""

    def __init__(self, config: Any, host: Optional[str], port: Optional[int]) -> None:
        self._lock = threading.Lock()
        self._handle = ctypes.c_void_p()
        self._unavailable: Optional[SwiftPushError] = None
        err = PushError()
        raw = host.encode("utf-8") if host else None
        rc = lib.push_channels_open(config, raw, len(raw) if raw else 0, port or 0, ctypes.byref(self._handle), err)
        if rc != 0:
            # Not fatal for the Client (device notifications need no management host): the
            # first channel call raises it.
            self._unavailable = error_for(rc, err.message.decode("utf-8", "replace"))
        # Frees the handle once, at close() or when this object goes away unclosed.
        self._free = weakref.finalize(self, lib.push_channels_free, self._handle.value)

    def close(self) -> None:
        with self._lock:
            self._free()
            self._unavailable = Closed(Status.CLOSED, "the client is closed")

    def call(self, name: str, *args: Any, timeout: Optional[float]) -> PushChannelResult:
        """Calls push_channel_<name>(handle, *args, result, timeout, err); raises on failure."""
        result = PushChannelResult()
        result.struct_size = ctypes.sizeof(PushChannelResult)
        err = PushError()
        with self._lock:
            if self._unavailable is not None:
                raise self._unavailable
            rc = getattr(lib, "push_channel_" + name)(self._handle, *args, ctypes.byref(result), timeout_ms(timeout), err)
        if rc != 0:
            e = error_for(rc, err.message.decode("utf-8", "replace"))
            if isinstance(e, ChannelRejected):
                e.status = result.status
                e.reason = Reason(result.reason) if result.reason in Reason._value2member_map_ else result.reason
                e.reason_text = result.reason_text.decode("utf-8", "replace")
                e.request_id = result.request_id.decode("ascii", "replace")
            raise e
        return result


class ChannelMethods:
    """Client's channel management methods. Errors: ChannelRejected (APNs said no: `reason`
    says why, e.g. Reason.CHANNEL_NOT_REGISTERED), InvalidNotification (a bad bundle or channel
    id, refused before sending), ConnectError/TLSError/Timeout (no answer: for a create, the
    channel may or may not exist), ConfigError (no management host known: pass channel_host)."""

    _channels: _Channels

    def create_channel(self, bundle_id: str,
                       storage: StoragePolicy = StoragePolicy.MOST_RECENT_MESSAGE_STORED, *,
                       timeout: Optional[float] = DEFAULT_CHANNEL_TIMEOUT) -> str:
        """Creates a broadcast channel for the app and returns its id (base64)."""
        buf = ctypes.create_string_buffer(_CHANNEL_ID_CAPACITY)
        length = ctypes.c_ssize_t(0)
        raw = _bytes(bundle_id, "bundle_id")
        self._channels.call("create", raw, len(raw), int(storage), buf, len(buf), ctypes.byref(length), timeout=timeout)
        return buf.raw[:length.value].decode("ascii")

    def channel(self, bundle_id: str, channel_id: str, *,
                timeout: Optional[float] = DEFAULT_CHANNEL_TIMEOUT) -> ChannelInfo:
        """Reads a channel's configuration."""
        raw, cid = _bytes(bundle_id, "bundle_id"), _bytes(channel_id, "channel_id")
        policy = ctypes.c_int32(-1)
        self._channels.call("read", raw, len(raw), cid, len(cid), ctypes.byref(policy), timeout=timeout)
        return ChannelInfo(channel_id, StoragePolicy(policy.value))

    def delete_channel(self, bundle_id: str, channel_id: str, *,
                       timeout: Optional[float] = DEFAULT_CHANNEL_TIMEOUT) -> None:
        """Deletes a channel (its id is never reused)."""
        raw, cid = _bytes(bundle_id, "bundle_id"), _bytes(channel_id, "channel_id")
        self._channels.call("delete", raw, len(raw), cid, len(cid), timeout=timeout)

    def channels(self, bundle_id: str, *, timeout: Optional[float] = DEFAULT_CHANNEL_TIMEOUT) -> List[str]:
        """The app's channel ids, oldest first."""
        raw = _bytes(bundle_id, "bundle_id")
        ids = ctypes.POINTER(PushChannelIds)()
        self._channels.call("list", raw, len(raw), ctypes.byref(ids), timeout=timeout)
        try:
            return [ids.contents.ids[i].decode("ascii") for i in range(ids.contents.count)]
        finally:
            lib.push_channel_ids_free(ids)
