"""The C ABI of libswiftpush.so as ctypes sees it: the library, its records and its functions.

Everything that crosses the boundary is declared here, once:
- the records (`PushNotification`, `PushResult`, `PushError`) mirror Include/swiftpush.h byte
  for byte; their LP64 sizes and offsets are the ones Sources/CSwiftPushABI/abi_layout.c asserts
  (tests/test_layout.py compares the two);
- `FUNCTIONS` gives every function its restype, argtypes and whether its status is checked;
  adding a C function to the binding is one line there.

The library is opened with ctypes.CDLL, which releases the GIL around every call (PyDLL would
hold it, and deadlock the moment the library waits for another Python thread). Which file
(`_candidates`): `$SWIFTPUSH_LIBRARY` when set; else the libswiftpush.so.0 beside this file, which
a wheel from scripts/build-wheel.sh carries, and then only that one: it was built with this very
code, and its RPATH ($ORIGIN/../swiftpush.libs, set by auditwheel) makes it load the wheel's own
copies of OpenSSL and nghttp2, whatever the system has; else libswiftpush.so.0 on the system's
library path. The name is the SONAME, the ABI this code is written for (docs/abi.md): an install
carries it (`make install`, the .deb) without the development link libswiftpush.so, and a library
of another ABI (libswiftpush.so.1) is never picked up by mistake.
"""

from __future__ import annotations

import ctypes
import functools
import os
import struct
from ctypes import POINTER, Structure, c_char, c_char_p, c_double, c_int32, c_int64, c_size_t, c_ssize_t, c_uint32, c_uint64, c_void_p
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._errors import error_for

#: Environment variable naming the library file to load (a full path to libswiftpush.so).
LIBRARY_ENV = "SWIFTPUSH_LIBRARY"
#: The library's SONAME, libswiftpush.so.<ABI major> (written by scripts/gen_version.py).
LIBRARY_NAME = "libswiftpush.so.0"


# -- Records ------------------------------------------------------------------------------------


class PushError(Structure):
    """push_error: the status code and a NUL-terminated message naming what was wrong."""

    _fields_ = [("code", c_int32), ("message", c_char * 252)]


class PushNotification(Structure):
    """push_notification: one notification to send (the library copies it during the call)."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("push_type", c_int32),
        ("priority", c_int32),
        ("flags", c_uint32),
        ("expiration", c_int64),
        ("tag", c_uint64),
        ("device_token", c_char_p),
        ("device_token_len", c_size_t),
        ("topic", c_char_p),
        ("topic_len", c_size_t),
        ("payload", c_char_p),
        ("payload_len", c_size_t),
        ("collapse_id", c_char_p),
        ("collapse_id_len", c_size_t),
        ("apns_id", c_char_p),
        ("apns_id_len", c_size_t),
        ("channel_id", c_char_p),
        ("channel_id_len", c_size_t),
        ("deadline_ms", c_int64),
    ]


class PushResult(Structure):
    """push_result: the outcome of one notification, filled by push_client_poll."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("outcome", c_int32),
        ("status", c_int32),
        ("reason", c_int32),
        ("tag", c_uint64),
        ("timestamp_ms", c_int64),
        ("latency_us", c_int64),
        ("attempts", c_uint32),
        ("reserved", c_uint32),
        ("apns_id", c_char * 40),
        ("unique_id", c_char * 40),
        ("reason_text", c_char * 128),
    ]


class PushConnectionStats(Structure):
    """push_connection_stats: one connection of the pool."""

    _fields_ = [("state", c_int32), ("stream_limit", c_int32), ("in_flight", c_int32), ("reserved", c_int32)]


class PushStats(Structure):
    """push_stats: a snapshot of a client's counters, filled by push_client_stats."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("connection_count", c_uint32),
        ("queued", c_uint64),
        ("in_flight", c_uint64),
        ("unpolled", c_uint64),
        ("sent", c_uint64),
        ("accepted", c_uint64),
        ("rejected", c_uint64),
        ("failed", c_uint64),
        ("retries", c_uint64),
        ("goaways", c_uint64),
        ("connections_started", c_uint64),
        ("connections_open", c_uint32),
        ("connections_opening", c_uint32),
        ("latency_p50_us", c_int64),
        ("latency_p99_us", c_int64),
        ("last_goaway_reason", c_char * 64),
        ("last_connection_error", c_char * 128),
        ("connections", PushConnectionStats * 64),
    ]


#: push_notification packed in one go by struct (native sizes and alignment, like the C compiler):
#: struct_size, push_type, priority, flags, expiration, tag, six (pointer, length) pairs, then
#: deadline_ms.
NOTIFICATION_RECORD = struct.Struct("@IiiIqQ" + "PN" * 6 + "q")
#: push_result unpacked in one go: the fields of PushResult in order.
RESULT_RECORD = struct.Struct("@IiiiQqqII40s40s128s")

assert NOTIFICATION_RECORD.size == ctypes.sizeof(PushNotification), "push_notification layout"


class PushChannelResult(Structure):
    """push_channel_result: what APNs answered to a channel management call."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("status", c_int32),
        ("reason", c_int32),
        ("storage_policy", c_int32),
        ("request_id", c_char * 40),
        ("reason_text", c_char * 128),
    ]


class PushChannelIds(Structure):
    """push_channel_ids: an app's channel ids, allocated by push_channel_list."""

    _fields_ = [("count", c_size_t), ("ids", POINTER(c_char_p))]
assert RESULT_RECORD.size == ctypes.sizeof(PushResult), "push_result layout"

push_client_t = c_void_p
push_config_t = c_void_p
push_payload_t = c_void_p
push_channels_t = c_void_p

#: push_result_callback: (user_data, results, count). `results` comes as a plain address (an
#: int: no pointer object to build per call), read with ctypes.string_at during the call.
RESULT_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_ssize_t)
#: push_log_callback: (user_data, level, event, message).
LOG_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_int32, ctypes.c_char_p, ctypes.c_char_p)


# -- Functions ----------------------------------------------------------------------------------


def _check_status(result: int, func: Any, args: Tuple[Any, ...]) -> int:
    """errcheck for functions returning a status and taking a `push_error *` last: raise on < 0."""
    if result < 0:
        err = args[-1]
        message = err.message.decode("utf-8", "replace") if isinstance(err, PushError) else ""
        raise error_for(result, message or strerror(result))
    return result


def _check_status_no_detail(result: int, func: Any, args: Tuple[Any, ...]) -> int:
    """errcheck for functions returning a status without a `push_error *`."""
    if result < 0:
        raise error_for(result, strerror(result))
    return result


_P = POINTER
#: Every C function the binding calls: name -> (restype, argtypes, errcheck or None).
#: Functions missing from an older library are left out of the handle (calling them raises
#: AttributeError), so a newer binding still loads an older library.
FUNCTIONS: Dict[str, Tuple[Any, List[Any], Optional[Callable[..., Any]]]] = {
    "push_version": (c_char_p, [], None),
    "push_strerror": (c_char_p, [c_int32], None),
    "push_reason_name": (c_char_p, [c_int32], None),
    "push_config_new": (push_config_t, [], None),
    "push_config_free": (None, [push_config_t], None),
    "push_config_set_int": (c_int32, [push_config_t, c_int32, c_int64, _P(PushError)], _check_status),
    "push_config_set_string": (c_int32, [push_config_t, c_int32, c_char_p, c_ssize_t, _P(PushError)], _check_status),
    "push_config_set_result_callback": (
        c_int32, [push_config_t, RESULT_CALLBACK, c_void_p, _P(PushError)], _check_status),
    "push_client_open": (c_int32, [push_config_t, _P(push_client_t), _P(PushError)], _check_status),
    "push_client_wait_connected": (c_int32, [push_client_t, c_int32, _P(PushError)], _check_status),
    "push_client_send": (c_int32, [push_client_t, _P(PushNotification), c_int32, _P(PushError)], _check_status),
    "push_client_send_batch": (
        c_int32,
        [push_client_t, _P(PushNotification), c_ssize_t, c_int32, _P(c_ssize_t), _P(PushError)],
        _check_status,
    ),
    # Not checked: PUSH_E_CLOSED is how poll says "closed and every result returned".
    "push_client_poll": (c_int32, [push_client_t, _P(PushResult), c_ssize_t, c_ssize_t, c_int32, _P(c_ssize_t)], None),
    "push_config_set_log_callback": (
        c_int32, [push_config_t, LOG_CALLBACK, c_void_p, c_int32, _P(PushError)], _check_status),
    "push_client_metrics_text": (
        c_int32, [push_client_t, ctypes.c_char_p, c_ssize_t, _P(c_ssize_t), _P(PushError)], _check_status),
    "push_client_result_fd": (c_int32, [push_client_t, _P(ctypes.c_int), _P(PushError)], _check_status),
    "push_client_close": (c_int32, [push_client_t, c_int32], _check_status_no_detail),
    "push_client_free": (None, [push_client_t], None),
    "push_client_stats": (c_int32, [push_client_t, _P(PushStats), c_ssize_t], _check_status_no_detail),
    "push_topic_for": (
        c_int32,
        [c_char_p, c_ssize_t, c_int32, c_void_p, c_ssize_t, _P(c_ssize_t), _P(PushError)],
        _check_status,
    ),
    "push_payload_new": (push_payload_t, [], None),
    "push_payload_free": (None, [push_payload_t], None),
    "push_payload_set_string": (c_int32, [push_payload_t, c_int32, c_char_p, c_ssize_t, _P(PushError)], _check_status),
    "push_payload_add_loc_arg": (c_int32, [push_payload_t, c_int32, c_char_p, c_ssize_t, _P(PushError)], _check_status),
    "push_payload_set_int": (c_int32, [push_payload_t, c_int32, c_int64, _P(PushError)], _check_status),
    "push_payload_set_double": (c_int32, [push_payload_t, c_int32, c_double, _P(PushError)], _check_status),
    "push_payload_set_raw": (c_int32, [push_payload_t, c_int32, c_char_p, c_ssize_t, _P(PushError)], _check_status),
    "push_payload_set_critical_sound": (
        c_int32, [push_payload_t, c_char_p, c_ssize_t, c_double, _P(PushError)], _check_status),
    "push_payload_set_custom": (
        c_int32, [push_payload_t, c_char_p, c_ssize_t, c_char_p, c_ssize_t, _P(PushError)], _check_status),
    "push_payload_clear": (c_int32, [push_payload_t, c_int32, _P(PushError)], _check_status),
    # Channel management: not checked here (swiftpush.channels turns PUSH_E_REJECTED into
    # ChannelRejected with the answer's status and reason).
    "push_channels_open": (
        c_int32, [push_config_t, c_char_p, c_ssize_t, c_int32, _P(push_channels_t), _P(PushError)], None),
    "push_channels_free": (None, [push_channels_t], None),
    "push_channel_create": (
        c_int32,
        [push_channels_t, c_char_p, c_ssize_t, c_int32, c_void_p, c_ssize_t, _P(c_ssize_t), _P(PushChannelResult),
         c_int32, _P(PushError)],
        None,
    ),
    "push_channel_read": (
        c_int32,
        [push_channels_t, c_char_p, c_ssize_t, c_char_p, c_ssize_t, _P(c_int32), _P(PushChannelResult), c_int32,
         _P(PushError)],
        None,
    ),
    "push_channel_delete": (
        c_int32,
        [push_channels_t, c_char_p, c_ssize_t, c_char_p, c_ssize_t, _P(PushChannelResult), c_int32, _P(PushError)],
        None,
    ),
    "push_channel_list": (
        c_int32,
        [push_channels_t, c_char_p, c_ssize_t, _P(_P(PushChannelIds)), _P(PushChannelResult), c_int32, _P(PushError)],
        None,
    ),
    "push_channel_ids_free": (None, [_P(PushChannelIds)], None),
    # Not checked: PUSH_E_BUFFER_TOO_SMALL is how build reports the size it needs.
    "push_payload_build": (c_int32, [push_payload_t, c_void_p, c_ssize_t, _P(c_ssize_t), _P(PushError)], None),
}


def _candidates() -> List[str]:
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit:
        return [explicit]  # an explicit choice is never second-guessed
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)
    if os.path.exists(here):
        # A wheel's own library: if it cannot load, its error is the one to see, not a fallback
        # to some other copy (of another version) on the system.
        return [here]
    # The dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache) for this ABI's SONAME; not
    # ctypes.util.find_library, which answers with whichever libswiftpush.so.N it finds first.
    return [LIBRARY_NAME]


def _load() -> ctypes.CDLL:
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    else:
        raise ImportError(
            f"swiftpush: cannot load {LIBRARY_NAME} (set {LIBRARY_ENV} to its full path, install it next to "
            f"the swiftpush package, or on the library path): " + "; ".join(errors)
        )
    declare(lib, FUNCTIONS)
    return lib


def declare(lib: ctypes.CDLL, table: Dict[str, Tuple[Any, Sequence[Any], Optional[Callable[..., Any]]]]) -> None:
    """Gives each function of `table` found in `lib` its restype, argtypes and errcheck."""
    for name, (restype, argtypes, errcheck) in table.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            continue
        fn.restype = restype
        fn.argtypes = list(argtypes)
        if errcheck is not None:
            fn.errcheck = errcheck


lib = _load()

#: Where distributions keep the system's trust store as one PEM file (the list Go's crypto/x509
#: reads), first found first used.
SYSTEM_CA_BUNDLES = (
    "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu, Arch, Gentoo
    "/etc/pki/tls/certs/ca-bundle.crt",  # Fedora, RHEL
    "/etc/ssl/ca-bundle.pem",  # openSUSE
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  # CentOS, RHEL 7
    "/etc/ssl/cert.pem",  # Alpine
)


@functools.lru_cache(maxsize=None)
def _vendored_openssl_paths() -> Tuple[str, ...]:
    """The trust store paths compiled into the wheel's own libcrypto (its default CA file and
    directory), or () when the library loaded has no swiftpush.libs/ beside its package."""
    libs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(lib._name))), "swiftpush.libs")
    try:
        crypto = next(f for f in sorted(os.listdir(libs)) if f.startswith("libcrypto-"))
    except (OSError, StopIteration):
        return ()
    libcrypto = ctypes.CDLL(os.path.join(libs, crypto))  # already loaded: the same handle
    paths = []
    for name in ("X509_get_default_cert_file", "X509_get_default_cert_dir"):
        function = getattr(libcrypto, name)
        function.restype, function.argtypes = c_char_p, []
        paths.append(os.fsdecode(function()))
    return tuple(paths)


def system_ca_file() -> Optional[str]:
    """The CA file a Client given none uses, or None to leave the trust store to OpenSSL.

    Only a wheel needs one: its OpenSSL (Debian's build, vendored) looks for the system's trust
    store where Debian keeps it (OPENSSLDIR /usr/lib/ssl), which other distributions have not, so
    there the first of SYSTEM_CA_BUNDLES that exists is named instead. OpenSSL's own overrides,
    SSL_CERT_FILE and SSL_CERT_DIR, and a system that has those paths are left to OpenSSL.
    """
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return None
    defaults = _vendored_openssl_paths()
    if not defaults or any(os.path.exists(path) for path in defaults):
        return None
    return next((path for path in SYSTEM_CA_BUNDLES if os.path.isfile(path)), None)


def timeout_ms(seconds: Optional[float]) -> int:
    """A timeout in seconds as the C ABI's milliseconds (None: -1, no limit)."""
    if seconds is None:
        return -1
    return max(0, min(int(seconds * 1000), 2**31 - 1))


def strerror(code: int) -> str:
    """The library's static message for a status code."""
    return lib.push_strerror(code).decode("utf-8", "replace")


def version() -> str:
    """The library's version ("MAJOR.MINOR.PATCH")."""
    return lib.push_version().decode("ascii")
