"""swiftpush: send Apple push notifications through libswiftpush.so (ctypes).

    import swiftpush
    with swiftpush.Client(key_file="AuthKey_ABC.p8", key_id="ABC", team_id="TEAM", topic="com.example.app") as client:
        client.send("00fc13ad...", {"aps": {"alert": "Hello"}})
        client.close(drain=10)
        for result in client.results():
            print(result.tag, result.outcome.name, result.reason.text)

The library is found through $SWIFTPUSH_LIBRARY (a full path), next to this package, or on the
system's library path. Its log events go to the "swiftpush" logger (levels as logging's; the
level the logger is enabled for when a Client opens decides what the library reports).
"""

import logging as _logging

# A library adds no output of its own: configure the "swiftpush" logger to see its events.
_logging.getLogger("swiftpush").addHandler(_logging.NullHandler())

from ._errors import (
    CallbackError,
    ChannelRejected,
    Closed,
    ConfigError,
    ConnectError,
    CredentialsError,
    InternalError,
    InvalidArgument,
    InvalidNotification,
    OutOfMemory,
    QueueFull,
    SwiftPushError,
    Timeout,
    TLSError,
)
from ._ffi import version as library_version
from ._tables import ConnectionState, Environment, Option, Outcome, PayloadField, Priority, PushType, Reason, Status
from .channels import ChannelInfo, StoragePolicy
from .client import BATCH_SIZE, Client, ConnectionStats, Notification, Result, Stats
from .payload import Payload, topic_for

__version__ = "0.2.0"

__all__ = [
    "BATCH_SIZE",
    "CallbackError",
    "ChannelInfo",
    "ChannelRejected",
    "Client",
    "Closed",
    "ConfigError",
    "ConnectionState",
    "ConnectionStats",
    "ConnectError",
    "CredentialsError",
    "Environment",
    "InternalError",
    "InvalidArgument",
    "InvalidNotification",
    "Notification",
    "Option",
    "Outcome",
    "OutOfMemory",
    "Payload",
    "PayloadField",
    "Priority",
    "PushType",
    "QueueFull",
    "Reason",
    "Result",
    "Stats",
    "Status",
    "StoragePolicy",
    "SwiftPushError",
    "Timeout",
    "TLSError",
    "library_version",
    "topic_for",
]
