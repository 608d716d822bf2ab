#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses (FuzzTesting/Sources/Fuzz*) into Tests/fuzz/corpus/<harness>/.

Usage: Tests/fuzz/make-corpus.py PKI_DIR   (PKI_DIR made by scripts/make-test-pki.sh)

The committed corpus is this script's output; run it again only to change the seeds (the keys
and certificates then change too, since make-test-pki.sh makes new ones). Seeds for the
harnesses that read a program (payload, cabi, keys) are encoded as FuzzInput reads them:
one byte picks a step, `bytes()` is a length byte (0xFF: a two-byte little-endian length
follows) and that many bytes, an Int64 is [1, index into FuzzInput.edgeIntegers] or
[0, eight little-endian bytes].
"""
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def blob(b):
    b = b.encode() if isinstance(b, str) else b
    return bytes([len(b)]) if len(b) < 0xFF else b"\xff" + struct.pack("<H", len(b))


def data(b):
    b = b.encode() if isinstance(b, str) else b
    return blob(b) + b


def i64(v):
    return b"\x00" + struct.pack("<q", v)


def edge(index):
    return bytes([1, index])


def write(harness, name, content):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(content.encode() if isinstance(content, str) else content)


def json_seeds():
    docs = {
        "alert": '{"aps":{"alert":{"title":"Hello","body":"from swiftpush"},"badge":1,"sound":"default"}}',
        "all-values": '{"s":"x","n":-12.5e+3,"i":9223372036854775807,"t":true,"f":false,"z":null,"a":[1,[2,{}],[]],"o":{}}',
        "escapes": r'{"q":"\"\\\/\b\f\n\r\t","u":"caf\u00e9 \u2028 \ud83d\ude00","lone":"\ud800"}',
        "utf8": '{"snow":"☃","emoji":"😀","cjk":"通知"}',
        "whitespace": ' \n\t{ "a" : [ 1 , 2 ] ,\r\n "b" : { } } \n',
        "numbers": "[0,-0,1e5,1E-5,0.5,-9223372036854775808,9223372036854775808,123456789012345678901234567890]",
        "nested": "{\"a\":" * 12 + "[]" + "}" * 12,
        "deep-array": "[" * 30 + "]" * 30,
        "scalar-string": '"just a string"',
        "scalar-number": "42",
        "error-body": '{"reason":"Unregistered","timestamp":1700000000123}',
        "bad-trailing-comma": '{"a":1,}',
        "bad-control-char": '{"a":"\x01"}',
        "bad-escape": r'{"a":"\x"}',
        "bad-short-unicode": r'{"a":"\u12"}',
        "bad-leading-zero": "[01]",
        "bad-unterminated": '{"a":"b',
        "bad-literal": "[tru]",
        "bad-trailing": '{"a":1} x',
    }
    for name, text in docs.items():
        write("json", name, text)
    write("json", "bad-utf8-overlong", b'{"a":"\xc0\xaf"}')
    write("json", "bad-utf8-surrogate", b'{"a":"\xed\xa0\x80"}')
    write("json", "bad-utf8-too-big", b'{"a":"\xf4\x90\x80\x80"}')
    write("json", "utf8-edges", b'{"a":"\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"}')


TEXT = ["title", "subtitle", "body", "launch-image", "title-loc-key", "subtitle-loc-key", "loc-key", "sound",
        "thread-id", "category", "target-content-id", "interruption-level", "filter-criteria", "event",
        "attributes-type"]
INTS = ["badge", "content-available", "mutable-content", "timestamp", "stale-date", "dismissal-date"]
PUSH_TYPES = ["alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
              "pushtotalk", "widgets", "controls"]


def p_text(field, value):
    return bytes([0, TEXT.index(field)]) + data(value) + b"\x00"


def p_int(field, value):
    return bytes([3, INTS.index(field), 0]) + i64(value)


def p_locarg(lst, value):
    return bytes([2, lst]) + data(value)


def p_raw(field, value):  # 0 content-state, 1 attributes
    return bytes([6, field]) + data(value)


def p_custom(key, value):
    return bytes([8]) + data(key) + data(value)


def p_double(value):
    return b"\x00" + struct.pack("<d", value)


def payload_seeds():
    end = lambda t="alert": bytes([PUSH_TYPES.index(t)])
    write("payload", "alert", p_text("title", "Hello") + p_text("subtitle", "Sub") + p_text("body", "from swiftpush")
          + p_int("badge", 3) + p_text("sound", "default") + end())
    write("payload", "escaping", p_text("title", 'q"uo\\te\n\t\x00\x1f\x7f') + p_text("body", "line\u2028sep\u2029 café ☃ 😀")
          + end())
    write("payload", "localized", p_text("title-loc-key", "GAME_TITLE") + p_locarg(0, "Alice") + p_locarg(0, "Bob")
          + p_text("loc-key", "GAME_INVITE") + p_locarg(2, "5") + p_text("subtitle-loc-key", "S") + p_locarg(1, "x") + end())
    write("payload", "loc-args-without-key", p_locarg(2, "orphan") + end())
    write("payload", "critical-sound", bytes([5]) + data("alarm.caf") + p_double(0.75)
          + p_text("interruption-level", "critical") + end())
    write("payload", "background", p_int("content-available", 1) + p_text("thread-id", "t1") + end("background"))
    write("payload", "live-activity", p_text("event", "update") + p_int("timestamp", 1700000000)
          + p_raw(0, '{"score":{"home":1,"away":2},"clock":"12:00","players":[{"n":"A"},{"n":"B"}]}')
          + p_int("stale-date", 1700003600) + p_int("dismissal-date", 1700007200) + bytes([4]) + p_double(0.5)
          + end("liveactivity"))
    write("payload", "live-activity-start", p_text("event", "start") + p_text("attributes-type", "MatchAttributes")
          + p_raw(1, '{"team":"Blue"}') + p_raw(0, '{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":[1]}}}}}}}}') + end("liveactivity"))
    write("payload", "custom-keys", p_text("body", "b") + p_custom("acme", '{"id":42,"tags":["x","y"]}')
          + p_custom("n", "1.5e3") + p_custom("caf\u00e9 \"k\"", "null") + p_custom("aps", "{}") + end())
    write("payload", "mutable-and-filter", p_int("mutable-content", 1) + p_text("category", "MSG")
          + p_text("target-content-id", "w1") + p_text("filter-criteria", "work") + p_text("interruption-level", "time-sensitive")
          + end())
    write("payload", "bad-values", p_text("interruption-level", "loud") + p_text("event", "pause") + p_int("badge", -1)
          + p_int("content-available", 2) + bytes([4]) + p_double(1.5) + p_raw(0, "[1]") + p_raw(1, "{") + end())
    write("payload", "direct-properties", bytes([10, 0]) + i64(-5) + bytes([10, 3]) + edge(15) + end())
    write("payload", "near-limit", p_text("body", "x" * 4070) + end())
    write("payload", "invalid-utf8", p_text("title", b"\xc3\x28") + p_text("body", b"\xed\xa0\x80") + end())


def response_seeds():
    for name, text in {
        "bad-device-token": '{"reason":"BadDeviceToken"}',
        "unregistered": '{"reason":"Unregistered","timestamp":1700000000123}',
        "expired-provider-token": '{"reason":"ExpiredProviderToken"}',
        "too-many-requests": '{"reason":"TooManyRequests"}',
        "unknown-reason": '{"reason":"SomethingNew"}',
        "escaped-reason": r'{"reason":"Bad\u0054opic"}',
        "extras": ' {"timestamp" : 42 , "extra": [1, {"reason": "x"}], "reason" : "ExpiredToken" } ',
        "timestamp-edges": '{"reason":"Unregistered","timestamp":-9223372036854775808}',
        "timestamp-overflow": '{"reason":"Unregistered","timestamp":9223372036854775808}',
        "timestamp-float": '{"reason":"Unregistered","timestamp":1.7e12}',
        "duplicate-reason": '{"reason":"BadTopic","reason":7}',
        "reason-not-string": '{"reason":null}',
        "goaway-shutdown": '{"reason":"Shutdown"}',
        "goaway-plain-text": "server shutting down for maintenance",
        "empty-object": "{}",
        "array": '["reason","BadTopic"]',
    }.items():
        write("response", name, text)
    write("response", "goaway-binary", b"\x00\xff\xfe garbage \xc3")
    write("response", "goaway-long", ("x" * 126 + "é" + "y" * 40).encode())


def apns_seeds():
    for name, text in {
        "xcode-sample": '{\n  "Simulator Target Bundle": "com.example.app",\n  "aps": {\n    "alert": {"title": "Hi", "body": "there"},\n    "badge": 1.50\n  }\n}\n',
        "key-last": '{"aps":{"alert":"x"},"custom":[1, 2,  3],"Simulator Target Bundle":"com.example.app"}',
        "key-twice-same": '{"Simulator Target Bundle":"b","aps":{},"Simulator Target Bundle":"b"}',
        "key-twice-different": '{"Simulator Target Bundle":"a","aps":{},"Simulator Target Bundle":"b"}',
        "key-escaped": r'{"Simulator Target Bundl\u0065":"com.ex\u0061mple","q\"uo\\te":1,"caf\u00e9":2}',
        "key-not-string": '{"Simulator Target Bundle":5,"aps":{}}',
        "key-empty": '{"Simulator Target Bundle":"","aps":{}}',
        "bundle-with-space": '{"Simulator Target Bundle":"com.example app","aps":{}}',
        "bundle-non-ascii": '{"Simulator Target Bundle":"com.exämple","aps":{}}',
        "no-key": ' {"aps" : {"alert":"x"}}\n',
        "only-key": '{"Simulator Target Bundle":"com.example.app"}',
        "not-object": "[1]",
        "truncated": '{"aps":{}',
        "live-activity": '{"Simulator Target Bundle":"com.example.app","aps":{"event":"update","timestamp":1700000000,"content-state":{"s":1}}}',
    }.items():
        write("apns", name, text)
    write("apns", "long-bundle", '{"Simulator Target Bundle":"' + "a" * 250 + '","aps":{}}')


def keys_seeds(pki):
    read = lambda n: open(os.path.join(pki, n), "rb").read()
    write("keys", "p8", b"\x00" + read("AuthKey_TESTKEY001.p8"))
    write("keys", "p8-rsa", b"\x00" + read("rsa.key"))
    write("keys", "p8-ec-key-pem", b"\x00" + read("client.key"))
    write("keys", "p8-certificate", b"\x00" + read("ca.pem"))
    write("keys", "p12", b"\x01" + data("secret") + read("client.p12"))
    write("keys", "pem-same-file", b"\x02\x01" + data(read("client.pem") + read("client.key")))
    write("keys", "pem-two-files", b"\x02\x00" + data(read("client.pem")) + read("client.key"))
    write("keys", "pem-mismatch", b"\x02\x00" + data(read("client.pem")) + read("untrusted-client.key"))


# FuzzCABI: step bytes (choose(10)): 0 send, 3 batch, 4 set_string, 6 set_int, 7 payload, 9 wrong handles.
OPT = {"host": 1, "port": 2, "ca": 3, "key-file": 4, "key-id": 5, "team-id": 6, "topic": 7, "deadline": 11,
       "key-pem": 13, "env": 14, "proxy": 20, "proxy-credentials": 21, "cert": 22, "cert-key": 23, "p12": 24,
       "p12-password": 25}
EXACT, NUL_TERMINATED, NULL, OVERSIZED, NEGATIVE = 5, 1, 0, 3, 4


def arg(value, mode=EXACT):
    """A CString.fuzzed argument: its bytes, the length mode, and the mode's own bytes."""
    extra = {OVERSIZED: b"\x07", NEGATIVE: b"\x05\x01"}.get(mode, b"")
    return data(value) + bytes([mode]) + extra


PAYLOAD_FIELDS = list(range(1, 16)) + [20, 21, 22, 30, 31, 32, 33, 34, 35, 36, 40, 50, 51]


def pf(constant):
    """A PUSH_PAYLOAD_* constant as payloadStep's field() reads it."""
    return bytes([1, PAYLOAD_FIELDS.index(constant)])


def notification(token="00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0", topic="com.example.fuzz",
                 payload='{"aps":{"alert":"hi"}}', push_type=0, priority=b"\x01\x00", flags=b"\x01",
                 collapse=None, apns_id=None, token_mode=EXACT, payload_mode=EXACT, struct_size=b"\x01"):
    n = struct_size + bytes([push_type]) + priority + flags + edge(0) + edge(1)
    n += arg(token, token_mode)
    n += arg(topic) if topic is not None else arg("", NULL)
    n += arg(payload, payload_mode)
    n += arg(collapse) if collapse is not None else arg("", NULL)
    n += arg(apns_id) if apns_id is not None else arg("", NULL)
    return n


def set_string(option, value, mode=EXACT):
    return bytes([4, OPT[option]]) + arg(value, mode)


def set_file(option, content):
    return bytes([4, OPT[option], 1]) + data(content) + bytes([EXACT])


def cabi_seeds(pki):
    read = lambda n: open(os.path.join(pki, n), "rb").read()
    write("cabi", "send-valid", b"\x00" + b"\x00" + notification())
    write("cabi", "send-default-topic-nul-terminated", b"\x00" + b"\x00" + notification(topic=None, token_mode=NUL_TERMINATED,
                                                                                 payload_mode=NUL_TERMINATED))
    write("cabi", "send-voip-with-everything", b"\x00" + b"\x00" + notification(
        push_type=3, topic="com.example.fuzz.voip", priority=b"\x01\x01", flags=b"\x00\x01\x00\x00\x00",
        collapse="group-1", apns_id="123e4567-e89b-12d3-a456-426614174000"))
    write("cabi", "send-bad-fields", b"\x00" + b"\x00" + notification(token="0g", topic="bad topic", payload="[1]",
                                                                   collapse="x" * 70, apns_id="nope")
          + b"\x00" + notification(push_type=1, priority=b"\x01\x01") + b"\x00" + notification(push_type=42))
    write("cabi", "send-oversized-lengths", b"\x00" + b"\x00" + notification(token_mode=OVERSIZED)
          + b"\x00" + notification(payload_mode=OVERSIZED) + b"\x00" + notification(token_mode=NEGATIVE, struct_size=b"\x00\x03"))
    write("cabi", "send-batch", b"\x00" + b"\x03\x02" + notification() + notification(payload="{") + notification())
    write("cabi", "config-strings", b"\x00" + set_string("host", "api.sandbox.push.apple.com") + set_string("key-id", "ABC123DEFG")
          + set_string("team-id", "DEF123GHIJ") + set_string("topic", "com.example.app") + set_string("proxy", "[::1]:8080")
          + set_string("proxy-credentials", "user:pass") + set_string("host", "", NUL_TERMINATED) + set_string("key-id", "a b")
          + set_string("p12-password", "x", NEGATIVE) + bytes([4, 99]) + arg("unknown option"))
    write("cabi", "config-ints", b"\x00" + bytes([6, OPT["port"]]) + i64(2197) + bytes([6, OPT["port"]]) + i64(65536)
          + bytes([6, OPT["deadline"]]) + edge(0) + bytes([6, OPT["env"]]) + i64(1) + bytes([6, 200]) + i64(1))
    write("cabi", "open-with-p8", b"\x01" + set_string("key-pem", read("AuthKey_TESTKEY001.p8")) + set_string("key-id", "TESTKEY001")
          + set_string("team-id", "TEAM123456"))
    write("cabi", "open-with-key-file", b"\x01" + set_file("key-file", read("AuthKey_TESTKEY001.p8"))
          + set_string("key-id", "TESTKEY001") + set_string("team-id", "TEAM123456") + set_file("ca", read("ca.pem")))
    write("cabi", "open-with-p12", b"\x01" + set_string("p12-password", "secret") + set_file("p12", read("client.p12")))
    write("cabi", "open-with-pem", b"\x01" + set_file("cert", read("client.pem")) + set_file("cert-key", read("client.key")))
    write("cabi", "open-with-wrong-key-type", b"\x01" + set_string("key-pem", read("rsa.key")) + set_file("cert-key", read("client.key")))
    write("cabi", "payload-build", b"\x00" + b"\x07\x00" + pf(1) + arg("Hello \"you\"") + b"\x07\x02" + pf(22) + arg("A")
          + b"\x07\x00" + pf(7) + arg("LOC") + b"\x07\x03" + pf(30) + edge(1) + b"\x07\x06" + pf(50) + arg('{"s":1}')
          + b"\x07\x07" + arg("k") + arg("[1,2]") + b"\x07\x08\x01" + b"\x01" + arg("com.example.app") + b"\x03")
    write("cabi", "payload-bad-calls", b"\x00" + b"\x07\x00" + pf(12) + arg("loud") + b"\x07\x01" + b"\x00\x63" + arg("x")
          + b"\x07\x03" + pf(36) + i64(77) + b"\x07\x04" + pf(40) + p_double(2.0) + b"\x07\x05" + arg("", NULL) + p_double(0.5)
          + b"\x07\x07" + arg("aps") + arg("{}") + b"\x07\x00" + pf(3) + arg("neg", NEGATIVE) + b"\x07\x08\x00" + pf(36)
          + b"\x07\x08\x01\x00" + arg("bad bundle") + b"\x06")
    write("cabi", "wrong-handles", b"\x00" + b"\x09\x00\x01\x01\x01" + b"\x09\x01\x05\x02\x02" + b"\x09\x02\x0d\x00\x00")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    pki = sys.argv[1]
    # Replace the seeds; keep the regression-* inputs (past crashes, added by hand).
    for harness in ("json", "payload", "response", "apns", "keys", "cabi"):
        d = os.path.join(CORPUS, harness)
        for name in os.listdir(d) if os.path.isdir(d) else []:
            if not name.startswith("regression-"):
                os.remove(os.path.join(d, name))
    json_seeds()
    payload_seeds()
    response_seeds()
    apns_seeds()
    keys_seeds(pki)
    cabi_seeds(pki)


if __name__ == "__main__":
    main()
