"""swiftpush.queue against a real redis-server and a real `swiftpush worker` sending to the mock."""
from __future__ import annotations

import datetime
import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from conftest import TOKEN, Mock

redis = pytest.importorskip("redis", reason="swiftpush.queue needs redis-py (pip install 'swiftpush[queue]')")
from swiftpush import queue  # noqa: E402  (after the importorskip)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (scripts/install-deps.sh installs it)")
    port, workdir = free_port(), tmp_path_factory.mktemp("redis")
    process = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir),
                                "--appendonly", "yes", "--save", ""], stdout=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)  # between pings: redis-server announces readiness to nobody
    yield f"redis://127.0.0.1:{port}/0"
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="module", params=[1, 2], ids=["outcome_format_1", "outcome_format_2"])
def worker(request: pytest.FixtureRequest, redis_url: str, cli: str, pki: Path, mock: Mock,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A worker on shard py1 or py2, writing outcomes in that format: every test runs against both."""
    port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    shard = f"py{request.param}"
    config = tmp_path_factory.mktemp("worker") / "worker.json"
    config.write_text(json.dumps({
        "redis": {"host": "127.0.0.1", "port": port}, "shard": shard, "outcome_format": request.param,
        "apps": {"demo": {"key_file": str(pki / "AuthKey_TESTKEY001.p8"), "key_id": "TESTKEY001",
                          "team_id": "TEAM123456", "host": "localhost", "port": mock.port,
                          "ca_file": str(pki / "ca.pem"), "topics": ["com.example.app"]}}}))
    process = subprocess.Popen([cli, "worker", "--config", str(config), "--consumer", "py-1", "--quiet"])
    yield shard
    process.terminate()
    assert process.wait(30) == 0, "the worker did not drain and exit 0 on SIGTERM"


def test_entry_fields_payload_as_compact_json_options_checked_and_none_left_out() -> None:
    f = queue.entry_fields("n-1", TOKEN, {"aps": {"alert": "café"}}, app="demo", priority=5, collapse_id=None)
    assert f == {"v": "1", "id": "n-1", "token": TOKEN, "payload": '{"aps":{"alert":"café"}}',
                 "app": "demo", "priority": "5"}
    with pytest.raises(TypeError, match="unknown notification fields"):
        queue.entry_fields("n-1", TOKEN, "{}", colour="blue")


def test_apns_id_is_the_name_based_uuid_of_the_id() -> None:
    assert queue.apns_id("n-1") == queue.apns_id("n-1") != queue.apns_id("n-2")
    assert queue.apns_id("n-1")[14] == "5"


def test_send_many_then_outcomes_every_id_accepted_once_with_the_derived_apns_id(redis_url: str, worker: str) -> None:
    producer = queue.Producer(redis_url, shard=worker)
    # per_entry=1: each notification its own single entry (format 1 outcomes, with attempts).
    ids = producer.send_many(({"id": f"py-{i}", "token": TOKEN, "app": "demo",
                               "payload": {"aps": {"alert": f"notification {i}"}}} for i in range(500)), batch=128, per_entry=1)
    assert len(ids) == 500 and len(set(ids)) == 500
    assert producer.send("py-single", TOKEN, '{"aps":{"alert":"one"}}', app="demo", push_type="alert")
    seen: dict = {}
    deadline = time.monotonic() + 120
    for o in producer.outcomes(block_ms=500):
        seen.setdefault(o.id, []).append(o)
        if len(seen) == 501 or time.monotonic() > deadline:
            break
    assert len(seen) == 501
    for nid, outcomes in seen.items():
        assert len(outcomes) == 1, nid
        o = outcomes[0]
        assert (o.outcome, o.status, o.reason) == ("ACCEPTED", 200, ""), o
        assert o.apns_id == queue.apns_id(nid) and o.attempts >= 1 and o.worker == "py-1" and o.app == "demo"
    # Without follow, the iterator ends after the last outcome.
    assert len(list(producer.outcomes(follow=False))) == 501
    assert list(producer.unregistered()) == []


def test_send_many_writes_batch_entries_by_default_every_id_one_outcome(redis_url: str, worker: str) -> None:
    producer = queue.Producer(redis_url, shard=worker)
    last = next(iter(reversed(list(producer.outcomes(follow=False)))), None)
    stats = f"stats:{{{worker}}}"
    before = int(producer.redis.hget(stats, "enqueued") or 0)
    # 1,200 notifications of two apps' worth of grouping (one app here, two campaigns): batch
    # entries of at most 500, grouped by campaign; a payload as a dict and as JSON text.
    notes = [{"id": f"pb-{i}", "token": TOKEN, "app": "demo", "campaign": "even" if i % 2 == 0 else "odd",
              "payload": {"aps": {"alert": f"batched {i}"}} if i % 3 else '{"aps":{"alert":"text"}}', "priority": 5}
             for i in range(1200)]
    # The entry's fields are read on a shard no worker serves: on the served one the worker may
    # settle and delete the entry before XRANGE reads it (CI saw that once).
    unserved = queue.Producer(redis_url, shard=f"{worker}-unserved")
    try:
        quiet = unserved.send_many(notes)
        assert len(quiet) == 1200 and len(set(quiet)) == 4  # 600 per campaign: entries of 500 and 100
        fields = unserved.redis.xrange(unserved.stream_for("pb-0"), quiet[0], quiet[0])[0][1]
        assert fields["v"] == "2" and fields["app"] == "demo" and fields["campaign"] == "even"
    finally:
        unserved.redis.delete(unserved.stream_for("pb-0"), f"stats:{{{worker}-unserved}}")
    ids = producer.send_many(notes)
    assert len(ids) == 1200 and len(set(ids)) == 4
    assert int(producer.redis.hget(stats, "enqueued")) - before == 1200
    seen: dict = {}
    deadline = time.monotonic() + 120
    for o in producer.outcomes(after=last.stream_id if last else "0", block_ms=500):
        assert o.outcome == "ACCEPTED" and o.id.startswith("pb-"), o
        assert o.id not in seen, f"{o.id}: two outcomes"
        seen[o.id] = o
        if len(seen) == 1200 or time.monotonic() > deadline:
            break
    assert sorted(seen) == sorted(n["id"] for n in notes)
    assert {o.campaign for o in seen.values()} == {"even", "odd"}


def test_a_bad_entry_gets_a_rejected_outcome_with_the_reason(redis_url: str, worker: str) -> None:
    producer = queue.Producer(redis_url, shard=worker)
    last = next(iter(reversed(list(producer.outcomes(follow=False)))), None)
    producer.send("py-bad", "12345", {"aps": {}}, app="demo")
    o = next(producer.outcomes(after=last.stream_id if last else "0", block_ms=500))
    assert (o.id, o.outcome, o.reason) == ("py-bad", "REJECTED", "BadDeviceToken")
    assert "odd number of hex digits" in o.detail


def test_the_fast_lane_producer_writes_to_push_s_fast_and_every_id_gets_one_outcome(redis_url: str, worker: str) -> None:
    # issue 32, item 1: lane= on the producer, and per send; ids of fast entries are "f<id>",
    # as the worker's outcome records name them; the enqueued counter is the shard's.
    with pytest.raises(ValueError, match="lane"):
        queue.Producer(redis_url, shard=worker, lane="slow")
    producer = queue.Producer(redis_url, shard=worker, lane="fast")
    assert producer.stream_for("x") == f"push:{{{worker}}}:fast" and producer.stream_for("x", "bulk") == f"push:{{{worker}}}"
    last = next(iter(reversed(list(producer.outcomes(follow=False)))), None)
    stats = f"stats:{{{worker}}}"
    before = int(producer.redis.hget(stats, "enqueued") or 0)
    ids = producer.send_many(({"id": f"pf-{i}", "token": TOKEN, "app": "demo", "payload": {"aps": {"alert": "code"}}}
                              for i in range(20)), per_entry=1)
    bulk = queue.Producer(redis_url, shard=worker)
    ids.append(bulk.send("pf-one", TOKEN, {"aps": {"alert": "one"}}, app="demo", lane="fast"))
    assert all(i.startswith("f") for i in ids) and len(set(ids)) == 21
    assert producer.redis.xlen(f"push:{{{worker}}}:fast") + len(ids) >= 21
    assert int(producer.redis.hget(stats, "enqueued")) - before == 21
    seen: dict = {}
    deadline = time.monotonic() + 120
    for o in producer.outcomes(after=last.stream_id if last else "0", block_ms=500):
        assert o.id not in seen, f"{o.id}: two outcomes"
        seen[o.id] = o
        if len(seen) == 21 or time.monotonic() > deadline:
            break
    assert sorted(seen) == sorted([f"pf-{i}" for i in range(20)] + ["pf-one"])
    assert sorted(o.entry for o in seen.values()) == sorted(ids)
    assert all(o.outcome == "ACCEPTED" for o in seen.values())


def test_send_at_holds_entries_until_then_and_a_time_in_the_past_is_refused_unwritten(redis_url: str, worker: str) -> None:
    # issue 32, item 5: send_at= as swiftpush enqueue --at (a datetime with a zone, or UNIX ms).
    producer = queue.Producer(redis_url, shard=worker)
    stats = f"stats:{{{worker}}}"
    before = int(producer.redis.hget(stats, "enqueued") or 0)
    past = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=5)
    with pytest.raises(ValueError, match="is in the past"):
        producer.send("ps-past", TOKEN, {"aps": {"alert": "late"}}, app="demo", send_at=past)
    with pytest.raises(ValueError, match="is in the past"):
        producer.send_many([{"id": "ps-past-2", "token": TOKEN, "app": "demo", "payload": {"aps": {}}}],
                           send_at=int(time.time() * 1000) - 1)
    with pytest.raises(ValueError, match="time zone"):
        producer.send_to_many("ps-past-3", [TOKEN], {"aps": {}}, app="demo", send_at=datetime.datetime.now() + datetime.timedelta(hours=1))
    with pytest.raises(TypeError, match="send_at"):
        producer.send("ps-past-4", TOKEN, {"aps": {}}, app="demo", send_at="soon")
    assert int(producer.redis.hget(stats, "enqueued") or 0) == before, "a refused send_at wrote something"
    last = next(iter(reversed(list(producer.outcomes(follow=False)))), None)
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(milliseconds=1500)
    at_ms = int(at.timestamp() * 1000)
    ids = [producer.send("ps-one", TOKEN, {"aps": {"alert": "one"}}, app="demo", send_at=at)]
    ids += producer.send_many([{"id": f"ps-{i}", "token": TOKEN, "app": "demo", "payload": {"aps": {"alert": "s"}}} for i in range(3)],
                              per_entry=1, send_at=at_ms)
    ids += producer.send_many([{"id": f"pt-{i}", "token": TOKEN, "app": "demo", "payload": {"aps": {"alert": "b"}}} for i in range(3)],
                              send_at=at_ms)
    ids += producer.send_to_many("ps-many", [TOKEN], {"aps": {"alert": "m"}}, app="demo", send_at=at)
    assert int(producer.redis.hget(stats, "enqueued")) - before == 8
    expected = ["ps-one", "ps-many"] + [f"ps-{i}" for i in range(3)] + [f"pt-{i}" for i in range(3)]
    seen: dict = {}
    deadline = time.monotonic() + 60
    for o in producer.outcomes(after=last.stream_id if last else "0", block_ms=500):
        assert o.id not in seen, f"{o.id}: two outcomes"
        seen[o.id] = o
        if len(seen) == len(expected) or time.monotonic() > deadline:
            break
    assert sorted(seen) == sorted(expected)
    # Recorded (Redis's clock: the outcome's stream id) no earlier than send_at.
    for o in seen.values():
        assert o.outcome == "ACCEPTED" and int(o.stream_id.split("-")[0]) >= at_ms, o


def test_shard_of_is_crc16_xmodem_mod_n_like_swiftpush_enqueue() -> None:
    assert queue.shard_of("123456789", 100) == str(0x31C3 % 100)
    assert queue.shard_of("n-1", 1) == "0"
    assert {queue.shard_of(f"n-{i}", 6) for i in range(600)} == {"0", "1", "2", "3", "4", "5"}
    with pytest.raises(ValueError):
        queue.shard_of("n-1", 0)


def wait_for_ping(client: "redis.Redis", process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            return
        except (redis.ConnectionError, redis.AuthenticationError):
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)  # between pings: redis-server announces readiness to nobody


TLS_USER, TLS_PASSWORD = "producer", "py-correct-horse"


@pytest.fixture(scope="module")
def tls_redis(pki: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A TLS-only redis-server whose only user is `producer`."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (scripts/install-deps.sh installs it)")
    port, workdir = free_port(), tmp_path_factory.mktemp("redis-tls")
    process = subprocess.Popen([server, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
                                "--dir", str(workdir), "--save", "", "--tls-cert-file", str(pki / "server.pem"),
                                "--tls-key-file", str(pki / "server.key"), "--tls-ca-cert-file", str(pki / "ca.pem"),
                                "--tls-auth-clients", "no", "--user", "default", "off",
                                "--user", TLS_USER, "on", ">" + TLS_PASSWORD, "~*", "&*", "+@all"],
                               stdout=subprocess.DEVNULL)
    wait_for_ping(redis.Redis(port=port, ssl=True, ssl_ca_certs=str(pki / "ca.pem"),
                              username=TLS_USER, password=TLS_PASSWORD), process)
    yield port
    process.terminate()
    process.wait(10)


def test_tls_and_an_acl_user_with_the_password_from_a_file_or_the_environment(
        tls_redis: int, pki: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "redis-password"
    secret.write_text(TLS_PASSWORD + "\n")
    url = f"rediss://localhost:{tls_redis}/0"
    producer = queue.Producer(url, shard="pytls", username=TLS_USER, password_file=str(secret),
                              ssl_ca_certs=str(pki / "ca.pem"))
    ids = producer.send_many(({"id": f"t-{i}", "token": TOKEN, "app": "demo", "payload": {"aps": {}}} for i in range(50)),
                             per_entry=1)
    assert len(ids) == 50 and producer.redis.xlen("push:{pytls}") == 50
    monkeypatch.setenv("SWIFTPUSH_TEST_REDIS_PASSWORD", TLS_PASSWORD)
    other = queue.Producer(url, shard="pytls", username=TLS_USER, password_env="SWIFTPUSH_TEST_REDIS_PASSWORD",
                           ssl_ca_certs=str(pki / "ca.pem"))
    other.redis.xadd(other.outcomes_stream, {"id": "t-1", "outcome": "ACCEPTED", "status": "200", "reason": ""})
    assert [o.id for o in other.outcomes(follow=False)] == ["t-1"]


def test_a_wrong_password_or_an_unknown_ca_fails_at_once(tls_redis: int, pki: Path) -> None:
    url = f"rediss://localhost:{tls_redis}/0"
    start = time.monotonic()
    with pytest.raises(redis.AuthenticationError):
        queue.Producer(url, username=TLS_USER, password="wrong", ssl_ca_certs=str(pki / "ca.pem")).send("x", TOKEN, "{}")
    with pytest.raises(redis.ConnectionError, match="certificate verify failed"):
        queue.Producer(url, username=TLS_USER, password=TLS_PASSWORD,
                       ssl_ca_certs=str(pki / "untrusted-ca.pem")).send("x", TOKEN, "{}")
    assert time.monotonic() - start < 5


@pytest.fixture(scope="module")
def cluster_seed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A 3-master, 3-replica Redis Cluster (Tests/support/redis-cluster.sh); yields a seed HOST:PORT."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        pytest.skip("redis-server and redis-cli are needed (scripts/install-deps.sh installs them)")
    helper = Path(__file__).resolve().parents[3] / "Tests" / "support" / "redis-cluster.sh"
    workdir = tmp_path_factory.mktemp("cluster")
    subprocess.run(["bash", str(helper), "start", str(workdir), "--owner", str(os.getpid())], check=True,
                   stdout=subprocess.DEVNULL, timeout=120)
    try:
        yield (workdir / "nodes").read_text().split(",")[0].strip()
    finally:
        subprocess.run(["bash", str(helper), "stop", str(workdir)], check=False, timeout=60)


def test_a_cluster_producer_spreads_entries_over_shards_by_id_and_confirms_them_with_wait(cluster_seed: str) -> None:
    producer = queue.Producer(f"redis://{cluster_seed}", cluster=True, shards=6, wait_replicas=1)
    ids = producer.send_many(({"id": f"c-{i}", "token": TOKEN, "app": "demo", "payload": {"aps": {}}}
                              for i in range(600)), batch=200, per_entry=1)
    assert len(ids) == 600 and all(ids)
    expected = {str(s): 0 for s in range(6)}
    for i in range(600):
        expected[queue.shard_of(f"c-{i}", 6)] += 1
    assert {str(s): producer.redis.xlen(f"push:{{{s}}}") for s in range(6)} == expected
    # In batch entries (the default) each id goes to its own shard too: one entry per shard here.
    producer.send_many({"id": f"cb-{i}", "token": TOKEN, "app": "demo", "payload": {"aps": {}}} for i in range(600))
    for s in range(6):
        last = producer.redis.xrevrange(f"push:{{{s}}}", count=1)[0][1]
        ids_there = [n["id"] for n in json.loads(last["notifications"])]
        assert ids_there and all(queue.shard_of(i, 6) == str(s) for i in ids_there)
    assert sum(len(json.loads(producer.redis.xrevrange(f"push:{{{s}}}", count=1)[0][1]["notifications"])) for s in range(6)) == 600
    assert producer.send("c-single", TOKEN, "{}", app="demo")
    # Outcomes of one shard, read from the master that serves it.
    reader = queue.Producer(nodes=[cluster_seed], cluster=True, shard="3")
    reader.redis.xadd("outcomes:{3}", {"id": "c-7", "outcome": "ACCEPTED", "status": "200", "reason": ""})
    assert [o.id for o in reader.outcomes(follow=False)] == ["c-7"]


def test_multicast_fields_carry_the_tokens_and_refuse_too_many() -> None:
    # Lowercase hex tokens go packed (tokens_bin: a length byte, then the token's bytes).
    f = queue.multicast_fields("m-1", [TOKEN, TOKEN[:-1] + "1"], {"aps": {}}, app="demo")
    packed = bytes([32]) + bytes.fromhex(TOKEN) + bytes([32]) + bytes.fromhex(TOKEN[:-1] + "1")
    assert f == {"v": "2", "id": "m-1", "tokens_bin": packed, "payload": '{"aps":{}}', "app": "demo"}
    assert queue._tokens_in(f) == 2
    # Any other token (upper case here), or packed=False: the text form, as written.
    f = queue.multicast_fields("m-1", [TOKEN, TOKEN.upper()], {"aps": {}}, app="demo")
    assert f == {"v": "2", "id": "m-1", "tokens": f"{TOKEN},{TOKEN.upper()}", "payload": '{"aps":{}}', "app": "demo"}
    f = queue.multicast_fields("m-1", [TOKEN], {"aps": {}}, packed=False, app="demo")
    assert f["tokens"] == TOKEN and "tokens_bin" not in f
    with pytest.raises(ValueError):
        queue.multicast_fields("m-1", [TOKEN] * (queue.MAX_TOKENS_PER_ENTRY + 1), "{}")
    assert queue.apns_id("m-1", TOKEN) != queue.apns_id("m-1") and queue.apns_id("m-1", TOKEN)[14] == "5"


def test_send_to_many_every_token_gets_exactly_one_outcome(redis_url: str, worker: str) -> None:
    producer = queue.Producer(redis_url, shard=worker)
    last = next(iter(reversed(list(producer.outcomes(follow=False)))), None)
    tokens = ["ab%062x" % i for i in range(1200)]
    stats = f"stats:{{{worker}}}"
    before = int(producer.redis.hget(stats, "enqueued") or 0)
    ids = producer.send_to_many("py-mc", tokens, {"aps": {"alert": "to many"}}, per_entry=500, app="demo", campaign="py")
    assert len(ids) == 3
    # Counted for swiftpush status, in notifications: the shard's and the campaign's.
    assert int(producer.redis.hget(stats, "enqueued")) - before == 1200
    assert int(producer.redis.hget(stats, "campaign:py:enqueued") or 0) >= 1200
    covered: dict = {}
    deadline = time.monotonic() + 120
    for o in producer.outcomes(after=last.stream_id if last else "0", block_ms=500):
        assert o.id in ("py-mc#0", "py-mc#1", "py-mc#2") and (o.outcome, o.status) == ("ACCEPTED", 200), o
        positions = queue._index_ranges(o.indexes) if o.count > 1 or o.indexes else [o.index]
        assert len(positions) == o.count
        for p in positions:
            assert (o.id, p) not in covered, f"{o.id} token {p}: two outcomes"
            covered[(o.id, p)] = o
        if len(covered) == 1200 or time.monotonic() > deadline:
            break
    assert sorted(covered) == sorted([(f"py-mc#{k}", p) for k in range(3) for p in range(500 if k < 2 else 200)])
