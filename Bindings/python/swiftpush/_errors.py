"""Exceptions: one base class carrying the C status code and message, one subclass per kind."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple, Type

from ._tables import VALIDATION_STATUSES, Status


class SwiftPushError(Exception):
    """A push_* function failed. `code` is the C status (a `Status` when known), `message` the
    library's detail (push_error.message), naming what was wrong."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        try:
            self.code: int = Status(code)
        except ValueError:
            self.code = code
        self.message = message
        #: For send_many: how many notifications of the call were queued before this error.
        self.accepted: int = 0
        #: For send_many: the tags of those queued notifications, in order.
        self.tags: List[int] = []

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({int(self.code)}, {self.message!r})"


class InvalidArgument(SwiftPushError, ValueError):
    """PUSH_E_INVALID_ARGUMENT: a NULL or malformed argument (a bug in the caller)."""


class QueueFull(SwiftPushError):
    """PUSH_E_QUEUE_FULL: the client holds queue_capacity notifications (queued, in flight and
    results not yet polled) and no room appeared within the timeout. Poll, then retry."""


class Closed(SwiftPushError):
    """PUSH_E_CLOSED: the client is closed."""


class Timeout(SwiftPushError, TimeoutError):
    """PUSH_E_TIMEOUT: waited too long (e.g. wait_connected; the message has the last connection error)."""


class OutOfMemory(SwiftPushError, MemoryError):
    """PUSH_E_NO_MEMORY."""


class ConfigError(SwiftPushError, ValueError):
    """PUSH_E_BAD_OPTION: an unknown option or a value out of range."""


class CredentialsError(SwiftPushError):
    """PUSH_E_KEY: no credentials, or a key or certificate that is unreadable or invalid."""


class TLSError(SwiftPushError):
    """PUSH_E_TLS: the TLS handshake failed (certificate, host name, ALPN) or the trust store is unusable."""


class ConnectError(SwiftPushError, ConnectionError):
    """PUSH_E_CONNECT: no connection to the APNs host."""


class InvalidNotification(SwiftPushError, ValueError):
    """A notification refused at send (bad token, topic, push type, priority, payload, size,
    collapse id, apns-id or expiration); `code` says which. It gets no result. In send_many,
    `accepted` notifications before it were queued."""


class ChannelRejected(SwiftPushError):
    """PUSH_E_REJECTED: APNs refused a channel management request. `status` is the HTTP status,
    `reason` the Reason (CHANNEL_NOT_REGISTERED, CANNOT_CREATE_CHANNEL_CONFIG,
    FEATURE_NOT_ENABLED, ...), `reason_text` APNs's text and `request_id` the answer's
    apns-request-id."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        self.status: int = 0
        self.reason: int = 0
        self.reason_text: str = ""
        self.request_id: str = ""


class InternalError(SwiftPushError):
    """PUSH_E_INTERNAL_ERROR: a bug in the library."""


class CallbackError(Exception):
    """The Client's on_result callable raised. Its exceptions are caught where the library calls
    it (results keep coming, the process goes on); close() raises this once it has closed the
    client, and Client.callback_error shows it at any time.

    count: how many on_result calls raised. result_count: how many results those calls were
    handed. failures: (exception, results) for the first of those calls (KEPT_CALLBACK_FAILURES
    in swiftpush.client; the rest are only counted): the exception and the very list of results
    the call was given, so that a result the callable did not get to is still at hand.
    __cause__ is the first exception (its traceback points into the callable)."""

    def __init__(self, count: int, result_count: int, failures: List[Tuple[BaseException, list]]) -> None:
        first = failures[0][0] if failures else None
        super().__init__(f"on_result raised {count} time{'s' if count != 1 else ''} (in calls handed "
                         f"{result_count} result{'s' if result_count != 1 else ''}); first: {first!r}")
        self.count = count
        self.result_count = result_count
        self.failures = failures
        self.__cause__ = first


_BY_STATUS: Dict[int, Type[SwiftPushError]] = {
    Status.INVALID_ARGUMENT: InvalidArgument,
    Status.QUEUE_FULL: QueueFull,
    Status.CLOSED: Closed,
    Status.TIMEOUT: Timeout,
    Status.NO_MEMORY: OutOfMemory,
    Status.BAD_OPTION: ConfigError,
    Status.KEY: CredentialsError,
    Status.TLS: TLSError,
    Status.CONNECT: ConnectError,
    Status.REJECTED: ChannelRejected,
    Status.INTERNAL_ERROR: InternalError,
}
_BY_STATUS.update({code: InvalidNotification for code in VALIDATION_STATUSES})


def error_for(code: int, message: str, cls: Optional[Type[SwiftPushError]] = None) -> SwiftPushError:
    """The exception for a status code (SwiftPushError itself for codes this binding doesn't know)."""
    return (cls or _BY_STATUS.get(code, SwiftPushError))(code, message)
