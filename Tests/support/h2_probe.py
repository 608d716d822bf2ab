#!/usr/bin/env python3
"""A scripted HTTP/2 client for the mock APNs server's tests (uses PyPI's `h2`).

nghttp and h2load are well-behaved clients; some tests need a client that misbehaves on
purpose (more streams than MAX_CONCURRENT_STREAMS allows, several provider tokens on one
connection) or that reports every frame it gets (SETTINGS values, GOAWAY debug data, resets).

Usage: h2_probe.py < scenario.json    prints one JSON object: {"events": [...]}
Scenario: {"port": N, "cert": FILE?, "key": FILE?, "steps": [STEP, ...]}
  {"send": {"path": P, "headers": [[name, value], ...], "body": TEXT, "count": N, "force": BOOL,
            "method": M (default POST)}}
      opens N request streams back to back without reading, written at once; "force" ignores
      the server's MAX_CONCURRENT_STREAMS (to provoke a violation)
  {"await": {"answers": N, "settings": N, "goaway": true, "closed": true, "ping_acks": N,
             "timeout": SECONDS}}
      reads until every given total is reached (answers = responses + resets), or the timeout
  {"ping": {}}                       sends a PING
  {"hold": {}}                       creates the scenario's "held_file", then waits (up to 10 s)
                                     until its "go_file" exists: the test acts meanwhile
Events: {"type": "settings", "max_concurrent_streams": N}, {"type": "response", "stream": N,
  "status": N, "headers": {...}, "body": TEXT}, {"type": "reset", "stream": N, "code": N},
  {"type": "goaway", "last_stream_id": N, "error_code": N, "debug": TEXT},
  {"type": "ping_ack"}, {"type": "closed"},
  {"type": "records", "read": N} at the end of each await: TLS records read so far (application
  data and, in TLS 1.3, the encrypted handshake), to tell one record per answer from a batch
"""
import json
import os
import select
import socket
import ssl
import sys
import time
from collections import deque

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from h2.settings import SettingCodes


class Probe:
    def __init__(self, scenario):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["h2"])
        if scenario.get("cert"):
            ctx.load_cert_chain(scenario["cert"], scenario.get("key"))
        self.records_read = 0
        ctx._msg_callback = self.on_tls_message
        raw = socket.create_connection(("127.0.0.1", scenario["port"]), timeout=10)
        self.sock = ctx.wrap_socket(raw, server_hostname="localhost")
        self.sock.setblocking(False)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8",
                                           validate_outbound_headers=False,
                                           normalize_outbound_headers=False)
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        self.events = []
        self.bodies = {}
        self.headers = {}
        self.answers = 0
        self.settings = 0
        self.ping_acks = 0
        self.goaway = False
        self.closed = False
        self.flush()

    def on_tls_message(self, conn, direction, version, content_type, msg_type, data):
        # OpenSSL reports the 5-byte header of every record; 23 is application_data (the outer
        # type of every TLS 1.3 record after the ServerHello).
        if direction == "read" and content_type == ssl._TLSContentType.HEADER and data[:1] == b"\x17":
            self.records_read += 1

    def flush(self):
        data = self.conn.data_to_send()
        while data and not self.closed:
            try:
                n = self.sock.send(data)
                data = data[n:]
            except (ssl.SSLWantWriteError, BlockingIOError):
                select.select([], [self.sock], [], 1)
            except OSError:
                self.close()

    def close(self):
        if not self.closed:
            self.closed = True
            self.events.append({"type": "closed"})

    def send(self, step):
        headers = [(":method", step.get("method", "POST")), (":scheme", "https"), (":authority", "localhost"),
                   (":path", step["path"])] + [tuple(h) for h in step.get("headers", [])]
        body = step.get("body", "").encode()
        for _ in range(step.get("count", 1)):
            if self.closed or self.goaway:
                break
            sid = self.conn.get_next_available_stream_id()
            limits = self.conn.remote_settings._settings
            saved = limits.get(SettingCodes.MAX_CONCURRENT_STREAMS)
            if step.get("force"):
                limits[SettingCodes.MAX_CONCURRENT_STREAMS] = deque([2 ** 31 - 1])
            try:
                self.conn.send_headers(sid, headers, end_stream=not body)
                if body:
                    self.conn.send_data(sid, body, end_stream=True)
            finally:
                if step.get("force"):
                    if saved is None:
                        del limits[SettingCodes.MAX_CONCURRENT_STREAMS]
                    else:
                        limits[SettingCodes.MAX_CONCURRENT_STREAMS] = saved
        # One write for the lot: the server reads the requests together, as from a client
        # that does not wait for answers.
        self.flush()

    def done(self, want):
        if want.get("closed") and not self.closed:
            return False
        if want.get("goaway") and not self.goaway:
            return False
        return (self.answers >= want.get("answers", 0) and self.settings >= want.get("settings", 0)
                and self.ping_acks >= want.get("ping_acks", 0))

    def wait(self, want):
        deadline = time.monotonic() + want.get("timeout", 5)
        while not self.done(want) and not self.closed and time.monotonic() < deadline:
            if self.sock.pending() == 0:
                select.select([self.sock], [], [], max(0.0, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except (ssl.SSLWantReadError, BlockingIOError):
                continue
            except OSError:
                self.close()
                break
            if not data:
                self.close()
                break
            if self.goaway:
                continue  # h2 refuses input after GOAWAY; only the end of the connection matters now
            try:
                events = self.conn.receive_data(data)
            except h2.exceptions.ProtocolError as e:
                self.events.append({"type": "protocol_error", "detail": str(e)})
                self.close()
                break
            for e in events:
                self.handle(e)
            self.flush()
        self.events.append({"type": "records", "read": self.records_read})

    def handle(self, e):
        if isinstance(e, h2.events.RemoteSettingsChanged):
            self.settings += 1
            ev = {"type": "settings"}
            c = e.changed_settings.get(SettingCodes.MAX_CONCURRENT_STREAMS)
            if c is not None:
                ev["max_concurrent_streams"] = c.new_value
            self.events.append(ev)
        elif isinstance(e, h2.events.ResponseReceived):
            self.headers[e.stream_id] = dict(e.headers)
        elif isinstance(e, h2.events.DataReceived):
            self.bodies[e.stream_id] = self.bodies.get(e.stream_id, b"") + e.data
            self.conn.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
        elif isinstance(e, h2.events.StreamEnded):
            h = self.headers.pop(e.stream_id, {})
            self.answers += 1
            self.events.append({"type": "response", "stream": e.stream_id, "status": int(h.get(":status", 0)),
                                "headers": h, "body": self.bodies.pop(e.stream_id, b"").decode(errors="replace")})
        elif isinstance(e, h2.events.StreamReset):
            self.answers += 1
            self.events.append({"type": "reset", "stream": e.stream_id, "code": int(e.error_code)})
        elif isinstance(e, h2.events.ConnectionTerminated):
            self.goaway = True
            self.events.append({"type": "goaway", "last_stream_id": e.last_stream_id, "error_code": int(e.error_code),
                                "debug": (e.additional_data or b"").decode(errors="replace")})
        elif isinstance(e, h2.events.PingAckReceived):
            self.ping_acks += 1
            self.events.append({"type": "ping_ack"})


def main():
    scenario = json.load(sys.stdin)
    probe = Probe(scenario)
    for step in scenario["steps"]:
        if "send" in step:
            probe.send(step["send"])
        elif "await" in step:
            probe.wait(step["await"])
        elif "ping" in step:
            probe.conn.ping(b"swiftpsh")
            probe.flush()
        elif "hold" in step:
            open(scenario["held_file"], "w").close()
            deadline = time.monotonic() + 10
            while not os.path.exists(scenario["go_file"]) and time.monotonic() < deadline:
                time.sleep(0.01)
    json.dump({"events": probe.events}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
