"""The library's payload builder (push_payload_*) and topic helper (push_topic_for)."""

from __future__ import annotations

import ctypes
import json
import weakref
from typing import Any, Union

from ._errors import OutOfMemory, error_for
from ._ffi import PushError, lib
from ._tables import PayloadField, PushType, Status

_FIELDS_BY_KEYWORD = {f.name.lower(): f for f in PayloadField}


def _utf8(value: Union[str, bytes]) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


class Payload:
    """Builds an APNs payload: "aps" with its keys in Apple's order, then your custom keys;
    validated (sizes, Live Activity events, loc keys) and escaped by the library.

        payload = Payload(alert_title="Hello", alert_body="from swiftpush", badge=3, sound="default")
        payload.custom("order", {"id": 42})
        client.send(token, payload)          # or payload.build() -> bytes

    Keyword arguments are fields (`PayloadField` in lower case): strings, ints, floats, raw JSON
    objects (dicts or JSON text) for CONTENT_STATE / ATTRIBUTES, and lists for the *_LOC_ARGS
    fields. Thread-safe; a payload may be built, changed and built again.
    """

    def __init__(self, **fields: Any) -> None:
        handle = lib.push_payload_new()
        if not handle:
            raise OutOfMemory(Status.NO_MEMORY, "push_payload_new: out of memory")
        self._handle = ctypes.c_void_p(handle)
        self._finalizer = weakref.finalize(self, lib.push_payload_free, handle)
        for name, value in fields.items():
            field = _FIELDS_BY_KEYWORD.get(name)
            if field is None:
                raise TypeError(f"Payload() got an unknown field {name!r} (known: {', '.join(sorted(_FIELDS_BY_KEYWORD))})")
            self.set(field, value)

    def set(self, field: Union[PayloadField, str], value: Any) -> "Payload":
        """Sets a field with the setter its kind calls for; None removes it. Returns self."""
        if isinstance(field, str):
            field = _FIELDS_BY_KEYWORD[field.lower()]
        field = PayloadField(field)
        err = PushError()
        if value is None:
            lib.push_payload_clear(self._handle, field, err)
        elif field.kind == "string":
            raw = _utf8(value)
            lib.push_payload_set_string(self._handle, field, raw, len(raw), err)
        elif field.kind == "int":
            lib.push_payload_set_int(self._handle, field, int(value), err)
        elif field.kind == "double":
            lib.push_payload_set_double(self._handle, field, float(value), err)
        elif field.kind == "raw":
            raw = _utf8(value) if isinstance(value, (str, bytes)) else json.dumps(value, separators=(",", ":"),
                                                                                   ensure_ascii=False).encode()
            lib.push_payload_set_raw(self._handle, field, raw, len(raw), err)
        elif field.kind == "loc_arg":
            lib.push_payload_clear(self._handle, field, err)
            for arg in ([value] if isinstance(value, (str, bytes)) else value):
                self.add_loc_arg(field, arg)
        else:
            raise ValueError(f"{field.name}: no setter for kind {field.kind!r}")
        return self

    def add_loc_arg(self, field: PayloadField, value: Union[str, bytes]) -> "Payload":
        """Appends one argument to a *_LOC_ARGS list. Returns self."""
        raw = _utf8(value)
        lib.push_payload_add_loc_arg(self._handle, field, raw, len(raw), PushError())
        return self

    def critical_sound(self, name: str, volume: float = 1.0) -> "Payload":
        """Sets aps.sound to a critical alert sound (needs Apple's entitlement). Returns self."""
        raw = _utf8(name)
        lib.push_payload_set_critical_sound(self._handle, raw, len(raw), float(volume), PushError())
        return self

    def custom(self, key: str, value: Any) -> "Payload":
        """Adds a custom top-level key beside "aps" with any JSON-serializable value. Returns self."""
        k = _utf8(key)
        v = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
        lib.push_payload_set_custom(self._handle, k, len(k), v, len(v), PushError())
        return self

    def clear(self, field: PayloadField) -> "Payload":
        """Removes a field. Returns self."""
        lib.push_payload_clear(self._handle, field, PushError())
        return self

    def build(self) -> bytes:
        """The payload's JSON. Raises InvalidNotification (PAYLOAD_TOO_LARGE, BAD_PAYLOAD)."""
        err = PushError()
        length = ctypes.c_ssize_t(0)
        size = 512
        while True:
            buf = ctypes.create_string_buffer(size)
            rc = lib.push_payload_build(self._handle, buf, size, ctypes.byref(length), err)
            if rc == 0:
                return buf.raw[: length.value]
            if rc == Status.BUFFER_TOO_SMALL:
                size = length.value + 1
                continue
            raise error_for(rc, err.message.decode("utf-8", "replace"))

    def __bytes__(self) -> bytes:
        return self.build()

    def __repr__(self) -> str:
        try:
            return f"Payload({self.build().decode()!r})"
        except Exception as e:  # a payload that does not build yet
            return f"<Payload: {e}>"


def topic_for(bundle_id: str, push_type: Union[PushType, int, str] = PushType.ALERT) -> str:
    """The apns-topic for an app's bundle id and a push type (bundle id + the type's suffix)."""
    if isinstance(push_type, str):
        push_type = PushType.from_header(push_type)
    raw = _utf8(bundle_id)
    buf = ctypes.create_string_buffer(len(raw) + 64)
    length = ctypes.c_ssize_t(0)
    lib.push_topic_for(raw, len(raw), int(push_type), buf, len(buf), ctypes.byref(length), PushError())
    return buf.raw[: length.value].decode("utf-8")
