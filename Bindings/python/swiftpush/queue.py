"""Producing for `swiftpush worker`: notifications into a Redis stream, outcomes out of one.

Needs redis-py (``pip install swiftpush[queue]``); the rest of the package does not. The entry
and outcome formats, and the guarantees, are in docs/worker.md::

    from swiftpush.queue import Producer
    p = Producer("redis://localhost:6379/0")
    p.send("n-1", "00fc13ad...", {"aps": {"alert": "Hi"}}, app="demo")
    for o in p.outcomes():          # follows the outcomes stream
        print(o.id, o.outcome, o.reason)

Redis as it runs in production: an ACL user and TLS (``rediss://``, verified against
``ssl_ca_certs`` or the system's CAs), a password from a file or the environment, and Redis
Cluster (redis-py's ``RedisCluster``), with entries spread over shards by id::

    p = Producer("rediss://redis.example.com:6380/0", username="sender",
                 password_file="/run/secrets/redis", ssl_ca_certs="ca.pem")
    p = Producer("redis://10.0.0.1:7000", cluster=True, shards=6, wait_replicas=1)
"""
from __future__ import annotations

import binascii
import json
import os
import datetime
import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

#: The namespace of the name-based (version 5) apns-ids the worker derives from ids.
NOTIFICATION_NAMESPACE = uuid.UUID("5b0f3f1e-8c53-4b8e-9d6a-2f1c7a4e9b30")

#: Entry fields a notification may carry (format version 1), besides id, token and payload.
OPTIONAL_FIELDS = ("app", "topic", "push_type", "priority", "expiration", "collapse_id", "not_after", "campaign")


def shard_of(notification_id: str, shards: int) -> str:
    """The shard (``"0"``...``str(shards - 1)``) of notification `notification_id` among `shards`:
    CRC16/XMODEM of its UTF-8 bytes mod `shards` — the rule of ``swiftpush enqueue --shards``, so
    both producers send an id to the same shard (and a resent id lands where its first copy did)."""
    if shards < 1:
        raise ValueError("shards must be at least 1")
    return str(binascii.crc_hqx(notification_id.encode("utf-8"), 0) % shards)


def _read_password(password_file: Optional[str], password_env: Optional[str]) -> Optional[str]:
    if password_file is not None and password_env is not None:
        raise ValueError("give password_file or password_env, not both")
    if password_file is not None:
        with open(password_file, encoding="utf-8") as f:
            text = f.read()
        return text[:-1] if text.endswith("\n") else text
    if password_env is not None:
        if password_env not in os.environ:
            raise ValueError(f"the environment variable {password_env} (the Redis password) is not set")
        return os.environ[password_env]
    return None


#: Error replies that mean "not run: try again after a pause" on a cluster (the command was not
#: executed, so sending it again cannot duplicate it).
_RETRY_LATER = ("MOVED", "ASK", "CLUSTERDOWN", "TRYAGAIN", "LOADING", "MASTERDOWN", "READONLY")


def apns_id(notification_id: str, token: Optional[str] = None) -> str:
    """The apns-id the worker sends notification `notification_id` with (every resend too); for
    a token of a multicast entry, the name-based UUID of ``id + "/" + token``."""
    name = notification_id if token is None else f"{notification_id}/{token}"
    return str(uuid.uuid5(NOTIFICATION_NAMESPACE, name))


#: The most tokens one multicast entry carries (the worker refuses larger entries whole).
MAX_TOKENS_PER_ENTRY = 1000


_LOWER_HEX = frozenset("0123456789abcdef")


def pack_tokens(tokens: Iterable[str]) -> Optional[bytes]:
    """`tokens` in the packed form of a multicast entry's ``tokens_bin`` field (each token's
    bytes after one byte holding their count), or None when a token is not lowercase hex of an
    even length up to 510 digits (the worker reads packed tokens back as lowercase hex, so only
    those come back exactly as written)."""
    out = bytearray()
    for t in tokens:
        if not t or len(t) % 2 or len(t) > 510 or not _LOWER_HEX.issuperset(t):
            return None
        out.append(len(t) // 2)
        out += bytes.fromhex(t)
    return bytes(out)


def multicast_fields(notification_id: str, tokens: Iterable[str], payload: Union[Mapping[str, Any], str, bytes],
                     packed: bool = True, **options: Any) -> dict:
    """The stream entry's fields for one payload to many tokens (a multicast entry, format
    version 2; at most `MAX_TOKENS_PER_ENTRY` tokens). The tokens go packed (``tokens_bin``: half
    the bytes for Redis to move) when they are lowercase hex and `packed` is true, else as text
    (``tokens``, comma-separated). Options as for `entry_fields`."""
    tokens = list(tokens)
    if not 1 <= len(tokens) <= MAX_TOKENS_PER_ENTRY:
        raise ValueError(f"a multicast entry carries 1 to {MAX_TOKENS_PER_ENTRY} tokens, not {len(tokens)}")
    if any("," in t for t in tokens):
        raise ValueError("a token may not contain a comma")
    fields = entry_fields(notification_id, "", payload, **options)
    del fields["token"]
    fields["v"] = "2"
    binary = pack_tokens(tokens) if packed else None
    if binary is not None:
        fields["tokens_bin"] = binary
    else:
        fields["tokens"] = ",".join(tokens)
    return fields


#: Notifications per batch entry `Producer.send_many` writes unless told otherwise.
DEFAULT_PER_ENTRY = 500


def batch_element(notification: Mapping[str, Any]) -> dict:
    """One notification (a dict with id, token, payload and options) as an element of a batch
    entry's ``notifications``: the fields of a single entry, a payload dict as a JSON object and
    JSON text as a string (the worker reads either), None values left out."""
    n = dict(notification)
    unknown = set(n) - {"id", "token", "payload"} - set(OPTIONAL_FIELDS)
    if unknown:
        raise TypeError(f"unknown notification fields: {sorted(unknown)}")
    def text(value: Any) -> str:
        v = _field(value)
        return v.decode("utf-8") if isinstance(v, bytes) else v
    payload = n["payload"]
    element = {"id": n["id"], "token": n["token"], "payload": dict(payload) if isinstance(payload, Mapping) else text(payload)}
    for name in OPTIONAL_FIELDS:
        if name not in ("app", "campaign") and n.get(name) is not None:
            element[name] = text(n[name])
    return element


def batch_fields(elements: list, app: Optional[str] = None, campaign: Optional[str] = None) -> dict:
    """The stream entry's fields for a batch entry (format version 2) of `elements`
    (`batch_element`s, at most `MAX_TOKENS_PER_ENTRY`); `app` and `campaign` are the entry's."""
    if not 1 <= len(elements) <= MAX_TOKENS_PER_ENTRY:
        raise ValueError(f"a batch entry carries 1 to {MAX_TOKENS_PER_ENTRY} notifications, not {len(elements)}")
    fields = {"v": "2", "notifications": json.dumps(elements, separators=(",", ":"), ensure_ascii=False)}
    if app is not None:
        fields["app"] = app
    if campaign is not None:
        fields["campaign"] = campaign
    return fields


def _tokens_in(fields: Mapping[str, Any]) -> int:
    """How many notifications an entry's fields carry (a multicast's tokens, a batch's
    elements; 1 for a single entry)."""
    if "notifications" in fields:
        return len(json.loads(fields["notifications"]))  # sizes are passed: only for callers of _write without them
    if "tokens" in fields:
        return len(fields["tokens"].split(","))
    if "tokens_bin" in fields:
        packed, n, at = fields["tokens_bin"], 0, 0
        while at < len(packed):
            at += 1 + packed[at]
            n += 1
        return n
    return 1


def _index_ranges(text: str) -> list:
    """ "0-2,5" -> [0, 1, 2, 5] (a record's notification positions)."""
    out: list = []
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        out += range(int(first), int(last or first) + 1)
    return out


def _record_outcomes(sid: str, fields: Mapping[str, str]) -> Iterator["Outcome"]:
    """The outcomes of a format-3 entry (docs/worker.md, "Outcome records"): per record, its
    accepted notifications (one Outcome per id of a batch or single entry; one with `count` for
    a multicast's accepted tokens), its other outcomes one by one, and its rest (one Outcome with
    `count` for the notifications that share it)."""
    worker = fields.get("worker", "")
    for rec in json.loads(fields.get("records", "[]")):
        base = dict(entry=rec.get("entry", ""), app=rec.get("app", ""), campaign=rec.get("campaign", ""),
                    kind=rec.get("kind", ""), deliveries=int(rec.get("deliveries", 0)), worker=worker)
        rid = rec.get("id", "")
        accepted = int(rec.get("accepted", 0))
        if accepted:
            at = _index_ranges(rec.get("accepted_at", ""))
            if rec.get("kind") == "multicast":
                yield Outcome(stream_id=sid, id=rid, outcome="ACCEPTED", status=200, reason="", count=accepted,
                              indexes=rec.get("accepted_at", ""), **base)
            else:
                ids = rec.get("accepted_ids") or [rid] * accepted
                for nid, index in zip(ids, at):
                    yield Outcome(stream_id=sid, id=nid, outcome="ACCEPTED", status=200, reason="", index=index,
                                  apns_id=apns_id(nid), **base)
        for o in rec.get("others", []):
            nid = o.get("id", rid)
            token = o.get("token", "")
            sent = int(o.get("attempts", 0)) > 0 or int(o.get("status", 0)) != 0
            yield Outcome(stream_id=sid, id=nid, outcome=o.get("outcome", ""), status=int(o.get("status", 0)),
                          reason=o.get("reason", ""), detail=o.get("detail", ""), token=token,
                          apns_id=(apns_id(nid, token) if rec.get("kind") == "multicast" else apns_id(nid)) if sent else "",
                          attempts=int(o.get("attempts", 0)), latency_us=int(o.get("latency_us", 0)),
                          timestamp_ms=int(o.get("timestamp_ms", 0)), maybe_delivered=str(o.get("maybe_delivered", "")) == "1",
                          index=int(o.get("index", 0)), **base)
        if "rest" in rec:
            o = rec["rest"]
            yield Outcome(stream_id=sid, id=rid, outcome=o.get("outcome", ""), status=int(o.get("status", 0)),
                          reason=o.get("reason", ""), detail=o.get("detail", ""), count=int(rec.get("rest_count", 0)),
                          indexes=rec.get("rest_at", ""), **base)


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
    #: Format 3 (records): the entry's kind, its campaign, the notification's position in the
    #: entry, and for a group (a multicast's accepted tokens, or one outcome shared by a whole
    #: entry) how many notifications it stands for and their positions ("0-41,43-499").
    kind: str = ""
    campaign: str = ""
    index: Optional[int] = None
    count: int = 1
    indexes: str = ""

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


def send_at_millis(send_at: Union[datetime.datetime, int, float, None], now_ms: Optional[int] = None) -> Optional[int]:
    """`send_at` as the ``send_at`` field's UNIX milliseconds (None: send now): a timezone-aware
    ``datetime`` or UNIX milliseconds. What ``swiftpush enqueue --at`` checks: a naive datetime
    (whose zone is a guess) and a time not in the future raise ValueError, saying so: such a
    notification would be sent at once, which is not what a schedule asks for
    (docs/worker.md, "Scheduled sending")."""
    if send_at is None:
        return None
    if isinstance(send_at, datetime.datetime):
        if send_at.tzinfo is None or send_at.utcoffset() is None:
            raise ValueError(f"send_at {send_at.isoformat()}: a naive datetime; give one with a time zone (tzinfo)")
        millis = int(send_at.timestamp() * 1000)
        shown = send_at.isoformat()
    elif isinstance(send_at, (int, float)) and not isinstance(send_at, bool):
        millis, shown = int(send_at), str(send_at)
    else:
        raise TypeError(f"send_at must be a datetime or UNIX milliseconds, not {type(send_at).__name__}")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if millis <= now:
        raise ValueError(f"send_at {shown} is in the past ({now - millis} ms ago): give a time to come, "
                         "or leave send_at out to send now")
    return millis


def _scheduled(entries: list, millis: Optional[int]) -> list:
    """`entries` ((stream, fields) pairs) with ``send_at`` added to each (millis None: as they are)."""
    if millis is None:
        return entries
    return [(stream, dict(fields, send_at=str(millis))) for stream, fields in entries]


class NotConfirmedError(Exception):
    """Entries were written but WAIT saw fewer replicas acknowledge them than asked for: a
    failover may lose them. `entries` holds their stream entry ids."""

    def __init__(self, message: str, entries: list) -> None:
        super().__init__(message)
        self.entries = entries


FAST_SUFFIX = ":fast"
"""What a shard's fast-lane stream adds to its name: ``push:{s}:fast``."""


def _check_lane(lane: str) -> str:
    """`lane` if it names a lane (``"fast"`` or ``"bulk"``); ValueError otherwise."""
    if lane not in ("fast", "bulk"):
        raise ValueError(f"lane must be 'fast' or 'bulk', not {lane!r}")
    return lane


class Producer:
    """Adds notifications to the stream `push:{shard}` and reads `outcomes:{shard}`.

    `url` is a redis-py URL (``redis://`` or ``rediss://`` for TLS); `redis_client` an existing
    redis-py client instead. `username` and `password` (or `password_file`, `password_env`) log
    in as an ACL user; other keyword arguments go to redis-py (``ssl_ca_certs``,
    ``ssl_certfile``...). With `cluster` the client is a ``RedisCluster`` (seeds: `url`'s host,
    or `nodes`, a list of ``"host:port"``). With `shards`, each notification goes to shard
    ``shard_of(id, shards)`` instead of `shard`. With `wait_replicas`, every batch of writes is
    followed by ``WAIT wait_replicas wait_timeout_ms`` on its connection and
    ``NotConfirmedError`` is raised for writes that too few replicas acknowledged. `lane`
    (``"bulk"``, the default, or ``"fast"``) is the lane every send goes to unless it names its
    own (``lane=`` of `send`, `send_many`, `send_to_many`): the fast lane, ``push:{shard}:fast``,
    is read first by every worker, with a share of its in-flight budget that bulk traffic cannot
    take (docs/worker.md, "The fast lane"); the id of an entry there is returned as
    ``"f" + <stream id>``, as outcome records name it. `send_at` (of `send`, `send_many`,
    `send_to_many`: a timezone-aware datetime or UNIX milliseconds, in the future) holds the
    entries until then, as ``swiftpush enqueue --at`` does (docs/worker.md, "Scheduled
    sending"). Thread-safety is redis-py's (a client may be shared between threads).
    """

    def __init__(self, url: str = "redis://localhost:6379/0", shard: str = "0", redis_client: Any = None, *,
                 shards: Optional[int] = None, cluster: bool = False, nodes: Optional[Iterable[str]] = None,
                 username: Optional[str] = None, password: Optional[str] = None,
                 password_file: Optional[str] = None, password_env: Optional[str] = None,
                 wait_replicas: int = 0, wait_timeout_ms: int = 1000, lane: str = "bulk",
                 **redis_options: Any) -> None:
        try:
            import redis  # optional dependency: pip install swiftpush[queue]
        except ImportError as e:  # pragma: no cover - exercised only without the extra
            raise ImportError("swiftpush.queue needs redis-py: pip install 'swiftpush[queue]'") from e
        _check_lane(lane)
        if shards is not None and shards < 1:
            raise ValueError("shards must be at least 1")
        if wait_replicas < 0 or (wait_replicas and wait_timeout_ms < 1):
            raise ValueError("wait_replicas must be >= 0, and wait_timeout_ms >= 1 with it (WAIT 0 blocks for ever)")
        secret = _read_password(password_file, password_env)
        if secret is not None:
            if password is not None:
                raise ValueError("give one of password, password_file and password_env")
            password = secret
        options = dict(redis_options, decode_responses=True)
        if username is not None:
            options["username"] = username
        if password is not None:
            options["password"] = password
        self.cluster = cluster
        if redis_client is not None:
            self.redis = redis_client
        elif cluster:
            from redis.cluster import ClusterNode, RedisCluster
            if nodes:
                seeds = [ClusterNode(h, int(p)) for h, _, p in (n.rpartition(":") for n in nodes)]
                self.redis = RedisCluster(startup_nodes=seeds, **options)
            else:
                self.redis = RedisCluster.from_url(url, **options)
        else:
            self.redis = redis.Redis.from_url(url, **options)
        self.shard, self.shards, self.lane = shard, shards, lane
        self.wait_replicas, self.wait_timeout_ms = wait_replicas, wait_timeout_ms
        self.stream = f"push:{{{shard}}}"
        self.outcomes_stream = f"outcomes:{{{shard}}}"
        self.unregistered_stream = f"unregistered:{{{shard}}}"

    def stream_for(self, notification_id: str, lane: Optional[str] = None) -> str:
        """The stream notification `notification_id` goes to, in `lane` (default: the
        producer's)."""
        lane = self.lane if lane is None else _check_lane(lane)
        base = self.stream if self.shards is None else f"push:{{{shard_of(notification_id, self.shards)}}}"
        return base + FAST_SUFFIX if lane == "fast" else base

    def send(self, notification_id: str, token: str, payload: Union[Mapping[str, Any], str, bytes],
             lane: Optional[str] = None, send_at: Union[datetime.datetime, int, float, None] = None,
             **options: Any) -> str:
        """Adds one notification; returns its stream entry id. Options: app, topic, push_type,
        priority, expiration, collapse_id, not_after; `lane`: ``"fast"`` or ``"bulk"``
        (default: the producer's); `send_at`: hold it until then (`send_at_millis`: a time in
        the past raises ValueError and writes nothing)."""
        millis = send_at_millis(send_at)
        fields = entry_fields(notification_id, token, payload, **options)
        stream = self.stream_for(notification_id, lane)
        return self._write(_scheduled([(stream, fields)], millis))[0]

    def send_many(self, notifications: Iterable[Mapping[str, Any]], batch: int = 1000,
                  per_entry: int = DEFAULT_PER_ENTRY, lane: Optional[str] = None,
                  send_at: Union[datetime.datetime, int, float, None] = None) -> list:
        """Adds many notifications (dicts with id, token, payload and options), in batch
        entries of up to `per_entry` notifications (grouped by shard, app and campaign; one
        read, guard call and record per entry: about a tenth of Redis's cost per notification,
        docs/worker.md "Benchmark"; their outcomes are records, format 3), or with
        ``per_entry=1`` each in a single entry of its own (format 1); `batch` entries are
        pipelined at a time; `lane` and `send_at` (every entry's) as for `send`. Returns, for
        each notification in order, the stream entry id that holds it."""
        if not 1 <= per_entry <= MAX_TOKENS_PER_ENTRY:
            raise ValueError(f"per_entry must be 1 to {MAX_TOKENS_PER_ENTRY}")
        millis = send_at_millis(send_at)
        if per_entry == 1:
            return self._send_singles(notifications, batch, lane, millis)
        groups: dict = {}
        order: list = []
        for n in notifications:
            element = batch_element(n)
            key = (self.stream_for(element["id"], lane), n.get("app"), n.get("campaign"))
            group = groups.setdefault(key, [])
            order.append((key, len(group)))
            group.append(element)
        entries, sizes, where = [], [], {}
        for key, elements in groups.items():
            stream, app, campaign = key
            for first in range(0, len(elements), per_entry):
                where[(key, first // per_entry)] = len(entries)
                chunk = elements[first:first + per_entry]
                entries.append((stream, batch_fields(chunk, app=app, campaign=campaign)))
                sizes.append(len(chunk))
        ids: list = []
        entries = _scheduled(entries, millis)
        for first in range(0, len(entries), batch):
            ids += self._write(entries[first:first + batch], sizes[first:first + batch])
        return [ids[where[(key, k // per_entry)]] for key, k in order]

    def _send_singles(self, notifications: Iterable[Mapping[str, Any]], batch: int, lane: Optional[str],
                      millis: Optional[int]) -> list:
        """`send_many` with ``per_entry=1``: a single entry per notification (``send_at``
        `millis` on each, unless None)."""
        ids: list = []
        pending: list = []
        for n in notifications:
            n = dict(n)
            nid = n.pop("id")
            pending.append((self.stream_for(nid, lane), entry_fields(nid, n.pop("token"), n.pop("payload"), **n)))
            if len(pending) == batch:
                ids += self._write(_scheduled(pending, millis))
                pending = []
        if pending:
            ids += self._write(_scheduled(pending, millis))
        return ids

    def send_to_many(self, notification_id: str, tokens: Iterable[str],
                     payload: Union[Mapping[str, Any], str, bytes], per_entry: int = 500,
                     lane: Optional[str] = None, send_at: Union[datetime.datetime, int, float, None] = None,
                     **options: Any) -> list:
        """One payload to many devices: multicast entries of at most `per_entry` tokens each
        (1 to `MAX_TOKENS_PER_ENTRY`), pipelined; returns their stream entry ids in order. Each
        (id, token) pair is one notification with exactly one outcome. When the tokens fill more
        than one entry, entry k (from 0) gets the id ``f"{notification_id}#{k}"``, so that each
        entry's id is its own (a repeated id is a DuplicateId); with one entry the id is used as
        it is. Options, `lane` and `send_at` as for `send`."""
        if not 1 <= per_entry <= MAX_TOKENS_PER_ENTRY:
            raise ValueError(f"per_entry must be 1 to {MAX_TOKENS_PER_ENTRY}")
        millis = send_at_millis(send_at)
        tokens = list(tokens)
        chunks = [tokens[i:i + per_entry] for i in range(0, len(tokens), per_entry)]
        entries = []
        for k, chunk in enumerate(chunks):
            nid = notification_id if len(chunks) == 1 else f"{notification_id}#{k}"
            entries.append((self.stream_for(nid, lane), multicast_fields(nid, chunk, payload, **options)))
        return self._write(_scheduled(entries, millis)) if entries else []

    def _write(self, entries: list, sizes: Optional[list] = None) -> list:
        """XADDs `entries` ((stream, fields) pairs); their entry ids in order. Then counts them
        in each shard's `stats:{s}` (`enqueued`, `campaign:<name>:enqueued`, in notifications:
        `sizes`, or what the fields carry), which `swiftpush status` reads what remains from."""
        ids = self._add(entries)
        # A fast-lane entry is named "f<id>" (as the worker's outcome records name it).
        ids = ["f" + i if stream.endswith(FAST_SUFFIX) else i for i, (stream, _) in zip(ids, entries)]
        counts: dict = {}
        for k, (stream, fields) in enumerate(entries):
            stats = "stats:" + stream[stream.index("{"):stream.index("}") + 1]
            n = sizes[k] if sizes is not None else _tokens_in(fields)
            counts[(stats, "enqueued")] = counts.get((stats, "enqueued"), 0) + n
            if fields.get("campaign"):
                key = (stats, f"campaign:{fields['campaign']}:enqueued")
                counts[key] = counts.get(key, 0) + n
        pipe = self.redis.pipeline(transaction=False)
        for (stats, field), n in sorted(counts.items()):
            pipe.hincrby(stats, field, n)
        pipe.execute()
        return ids

    def _add(self, entries: list) -> list:
        """The XADDs of `_write`."""
        if not self.wait_replicas:
            pipe = self.redis.pipeline(transaction=False)
            for stream, fields in entries:
                pipe.xadd(stream, fields)
            return pipe.execute()
        # WAIT covers only the writes of its own connection: one pipeline per stream, each on
        # the connection of the node that serves it.
        ids: list = [None] * len(entries)
        by_stream: dict = {}
        for i, (stream, fields) in enumerate(entries):
            by_stream.setdefault(stream, []).append(i)
        for stream, indexes in by_stream.items():
            for i, entry_id in zip(indexes, self._write_confirmed(stream, [entries[i][1] for i in indexes])):
                ids[i] = entry_id
        return ids

    def _write_confirmed(self, stream: str, batch: list) -> list:
        """XADDs `batch` to `stream` then WAIT, on one connection; on a cluster, the writes a
        redirect or a failover refused are sent again (after a pause and a fresh slot map), as
        are those a lost connection left unanswered (at-least-once: the worker's id guard
        records a duplicate entry as DuplicateId)."""
        import redis
        ids: list = [None] * len(batch)
        todo = list(range(len(batch)))
        unconfirmed: list = []
        deadline = time.monotonic() + 10
        attempt = 0
        while todo:
            client = self.redis
            if self.cluster:
                client = self.redis.get_redis_connection(self.redis.get_node_from_key(stream))
            pipe = client.pipeline(transaction=False)
            for i in todo:
                pipe.xadd(stream, batch[i])
            pipe.execute_command("WAIT", self.wait_replicas, self.wait_timeout_ms)
            retry = []
            try:
                results = pipe.execute(raise_on_error=False)
            except (redis.ConnectionError, redis.TimeoutError):
                if not self.cluster or time.monotonic() > deadline:
                    raise
                retry = todo
            else:
                for i, r in zip(todo, results[:-1]):
                    if isinstance(r, redis.ResponseError) and str(r).startswith(_RETRY_LATER):
                        retry.append(i)
                    elif isinstance(r, Exception):
                        raise r
                    else:
                        ids[i] = r
                acknowledged = results[-1] if isinstance(results[-1], int) else 0
                if acknowledged < self.wait_replicas:
                    unconfirmed += [ids[i] for i in todo if ids[i] is not None]
            if retry and (not self.cluster or time.monotonic() > deadline):
                raise redis.ClusterDownError(f"{len(retry)} writes to {stream} still refused after 10 s")
            if retry:
                time.sleep(min(0.05 * 2 ** attempt, 0.8))  # a failover announces its end to nobody
                attempt += 1
                self.redis.nodes_manager.initialize()
            todo = retry
        if unconfirmed:
            raise NotConfirmedError(f"{len(unconfirmed)} entries written to {stream} but not confirmed by "
                                    f"{self.wait_replicas} replica(s) within {self.wait_timeout_ms} ms", unconfirmed)
        return ids

    def outcomes(self, after: str = "0", follow: bool = True, block_ms: int = 1000) -> Iterator[Outcome]:
        """Outcomes of shard `shard` after stream id `after` ("0": from the start), in order; with `follow` the
        iterator waits for new ones (forever: break out of it), else it ends at the last one.

        Either outcome format is read (docs/worker.md): format 2 holds a batch of outcomes in
        one stream entry, so its outcomes share a `stream_id` — resume after one only once every
        outcome of that entry has been handled."""
        for sid, fields in self._read(self.outcomes_stream, after, follow, block_ms):
            if fields.get("v") == "3":
                yield from _record_outcomes(sid, fields)
                continue
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
