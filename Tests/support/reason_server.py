#!/usr/bin/env python3
"""An HTTP/2 server that answers every request with one status and reason of the test's choosing,
for reasons the mock cannot give: what APNs sends when it adds a reason the library's table does
not know yet (Tests/SwiftPushKitTests/ResultTests.swift).

usage: reason_server.py PORT_FILE --cert PEM --key KEY --status 400 --reason SomethingNew [--lifetime SECONDS]

TLS 1.2+ with ALPN h2 on 127.0.0.1 (an ephemeral port, written to PORT_FILE once listening). The
HTTP/2 it speaks is the least a client needs (RFC 9113): the server's SETTINGS, an ACK of the
client's, PING ACKs, and for each request stream, once the client ends it, a HEADERS frame
(`:status`, `apns-id`) and a DATA frame `{"reason":"<reason>"}` that ends the stream. Request
headers are never decoded (nothing here depends on them). The process exits by itself after
--lifetime seconds (default 60); tests kill it with SIGKILL.
"""
import argparse
import os
import socket
import ssl
import struct
import sys
import threading
import time
import uuid

from loopback import listen_and_publish

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, SETTINGS, PING = 0x0, 0x1, 0x4, 0x6
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
# HPACK static table entries for :status (RFC 7541, Appendix A).
STATIC_STATUS = {200: 8, 204: 9, 206: 10, 304: 11, 400: 12, 404: 13, 500: 14}


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):
    """A header field without indexing, new name, no Huffman coding (RFC 7541 §6.2.2)."""
    def string(s):
        assert len(s) < 127
        return bytes([len(s)]) + s
    return b"\x00" + string(name) + string(value)


def answer(args, stream):
    status = args.status
    block = bytes([0x80 | STATIC_STATUS[status]]) if status in STATIC_STATUS else literal(b":status", str(status).encode())
    block += literal(b"apns-id", str(uuid.uuid4()).encode())
    body = ('{"reason":"%s"}' % args.reason).encode()
    return frame(HEADERS, END_HEADERS, stream, block) + frame(DATA, END_STREAM, stream, body)


def read_exact(tls, n, pending):
    while len(pending) < n:
        chunk = tls.recv(65536)
        if not chunk:
            raise EOFError
        pending += chunk
    return pending[:n], pending[n:]


def handle(conn, args, ctx):
    conn.settimeout(args.lifetime)
    try:
        tls = ctx.wrap_socket(conn, server_side=True)
        pending = b""
        preface, pending = read_exact(tls, len(PREFACE), pending)
        if preface != PREFACE:
            return
        # MAX_CONCURRENT_STREAMS 100.
        tls.sendall(frame(SETTINGS, 0, 0, struct.pack(">HI", 0x3, 100)))
        while True:
            head, pending = read_exact(tls, 9, pending)
            length = int.from_bytes(head[:3], "big")
            kind, flags = head[3], head[4]
            stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
            payload, pending = read_exact(tls, length, pending)
            if kind == SETTINGS and not flags & ACK:
                tls.sendall(frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                tls.sendall(frame(PING, ACK, 0, payload))
            elif kind in (HEADERS, DATA) and flags & END_STREAM and stream:
                tls.sendall(answer(args, stream))
    except (OSError, ssl.SSLError, EOFError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("port_file")
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--status", type=int, default=400)
    p.add_argument("--reason", required=True)
    p.add_argument("--lifetime", type=float, default=60)
    args = p.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    ctx.set_alpn_protocols(["h2"])
    server = listen_and_publish(args.port_file)
    end = time.monotonic() + args.lifetime
    while time.monotonic() < end:
        server.settimeout(max(0.01, end - time.monotonic()))
        try:
            conn, _ = server.accept()
        except socket.timeout:
            break
        threading.Thread(target=handle, args=(conn, args, ctx), daemon=True).start()
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
