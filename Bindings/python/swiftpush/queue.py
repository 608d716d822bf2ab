"""Producing for `swiftpush worker`: notifications into a Redis stream, outcomes out of one.

Needs redis-py (``pip install swiftpush[queue]``); the rest of the package does not. The entry
and outcome formats, and the guarantees, are in docs/worker.md::

    from swiftpush.queue import Producer
    p = Producer("redis://localhost:6379/0")
    p.send("n-1", "00fc13ad...", {"aps": {"alert": "Hi"}}, app="demo")
    for o in p.outcomes():          # follows the outcomes stream
        print(o.id, o.outcome, o.reason)
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

#: The namespace of the name-based (version 5) apns-ids the worker derives from ids.
NOTIFICATION_NAMESPACE = uuid.UUID("5b0f3f1e-8c53-4b8e-9d6a-2f1c7a4e9b30")

#: Entry fields a notification may carry (format version 1), besides id, token and payload.
OPTIONAL_FIELDS = ("app", "topic", "push_type", "priority", "expiration", "collapse_id", "not_after")


def apns_id(notification_id: str) -> str:
    """The apns-id the worker sends notification `notification_id` with (every resend too)."""
    return str(uuid.uuid5(NOTIFICATION_NAMESPACE, notification_id))


@dataclass(frozen=True)
class Outcome:
    """One entry of the outcomes stream (docs/worker.md, "Outcomes")."""

    stream_id: str
    id: str
    entry: str
    outcome: str  #: ACCEPTED, REJECTED or FAILED
    status: int
    reason: str
    detail: str = ""
    app: str = ""
    token: str = ""
    apns_id: str = ""
    attempts: int = 0
    deliveries: int = 0
    worker: str = ""
    latency_us: int = 0
    timestamp_ms: int = 0
    maybe_delivered: bool = False

    @classmethod
    def from_fields(cls, stream_id: str, fields: Mapping[str, str]) -> "Outcome":
        def number(name: str) -> int:
            return int(fields.get(name, "0") or 0)

        return cls(stream_id=stream_id, id=fields.get("id", ""), entry=fields.get("entry", ""),
                   outcome=fields.get("outcome", ""), status=number("status"), reason=fields.get("reason", ""),
                   detail=fields.get("detail", ""), app=fields.get("app", ""), token=fields.get("token", ""),
                   apns_id=fields.get("apns_id", ""), attempts=number("attempts"), deliveries=number("deliveries"),
                   worker=fields.get("worker", ""), latency_us=number("latency_us"),
                   timestamp_ms=number("timestamp_ms"), maybe_delivered=fields.get("maybe_delivered") == "1")


def _field(value: Any) -> Union[str, bytes]:
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def entry_fields(notification_id: str, token: str, payload: Union[Mapping[str, Any], str, bytes],
                 **options: Any) -> dict:
    """The stream entry's fields for one notification; `payload` may be a dict (sent as compact
    JSON) or JSON text. Unknown options raise TypeError, None values are left out."""
    unknown = set(options) - set(OPTIONAL_FIELDS)
    if unknown:
        raise TypeError(f"unknown notification fields: {sorted(unknown)}")
    fields = {"v": "1", "id": notification_id, "token": token, "payload": _field(payload)}
    for name in OPTIONAL_FIELDS:
        if options.get(name) is not None:
            fields[name] = _field(options[name])
    return fields


class Producer:
    """Adds notifications to the stream `push:{shard}` and reads `outcomes:{shard}`.

    `url` is a redis-py URL; `redis_client` an existing redis-py client instead. Thread-safety is
    redis-py's (a client may be shared between threads).
    """

    def __init__(self, url: str = "redis://localhost:6379/0", shard: str = "0", redis_client: Any = None) -> None:
        try:
            import redis  # optional dependency: pip install swiftpush[queue]
        except ImportError as e:  # pragma: no cover - exercised only without the extra
            raise ImportError("swiftpush.queue needs redis-py: pip install 'swiftpush[queue]'") from e
        self.redis = redis_client if redis_client is not None else redis.Redis.from_url(url, decode_responses=True)
        self.stream = f"push:{{{shard}}}"
        self.outcomes_stream = f"outcomes:{{{shard}}}"
        self.unregistered_stream = f"unregistered:{{{shard}}}"

    def send(self, notification_id: str, token: str, payload: Union[Mapping[str, Any], str, bytes],
             **options: Any) -> str:
        """Adds one notification; returns its stream entry id. Options: app, topic, push_type,
        priority, expiration, collapse_id, not_after."""
        return self.redis.xadd(self.stream, entry_fields(notification_id, token, payload, **options))

    def send_many(self, notifications: Iterable[Mapping[str, Any]], batch: int = 1000) -> list:
        """Adds many notifications (dicts with id, token, payload and options), pipelined
        `batch` at a time; returns their stream entry ids in order."""
        ids: list = []
        pipe = self.redis.pipeline(transaction=False)
        pending = 0
        for n in notifications:
            n = dict(n)
            pipe.xadd(self.stream, entry_fields(n.pop("id"), n.pop("token"), n.pop("payload"), **n))
            pending += 1
            if pending == batch:
                ids += pipe.execute()
                pending = 0
        if pending:
            ids += pipe.execute()
        return ids

    def outcomes(self, after: str = "0", follow: bool = True, block_ms: int = 1000) -> Iterator[Outcome]:
        """Outcomes after stream id `after` ("0": from the start), in order; with `follow` the
        iterator waits for new ones (forever: break out of it), else it ends at the last one.

        Either outcome format is read (docs/worker.md): format 2 holds a batch of outcomes in
        one stream entry, so its outcomes share a `stream_id` — resume after one only once every
        outcome of that entry has been handled."""
        for sid, fields in self._read(self.outcomes_stream, after, follow, block_ms):
            if fields.get("v") != "2":
                yield Outcome.from_fields(sid, fields)
                continue
            for obj in json.loads(fields.get("outcomes", "[]")):
                flat = {k: str(v) for k, v in obj.items()}
                flat.update(v="2", worker=fields.get("worker", ""))
                yield Outcome.from_fields(sid, flat)

    def unregistered(self, after: str = "0", follow: bool = False, block_ms: int = 1000) -> Iterator[dict]:
        """Tokens APNs reported gone (410): dicts with token, app, id, reason, timestamp_ms."""
        for sid, f in self._read(self.unregistered_stream, after, follow, block_ms):
            yield dict(f, stream_id=sid)

    def _read(self, stream: str, after: str, follow: bool, block_ms: int) -> Iterator[tuple]:
        cursor = after
        while True:
            reply = self.redis.xread({stream: cursor}, count=1000, block=block_ms if follow else None)
            entries = reply[0][1] if reply else []
            if not entries and not follow:
                return
            for sid, fields in entries:
                cursor = sid
                yield sid, fields
