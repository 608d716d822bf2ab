#!/usr/bin/env python3
"""Servers that are not APNs, for the bad-server tests (Tests/PushTransportTests/BadServerTests.swift).

usage: bad_server.py MODE PORT_FILE [--cert PEM --key KEY] [--lifetime SECONDS] [--log FILE]

Listens on 127.0.0.1 (an ephemeral port, written to PORT_FILE once listening) and treats every
connection according to MODE:
  tls11       TLS 1.0/1.1 only (OpenSSL 3 needs security level 0 for that), with ALPN h2: a
              client that requires TLS 1.2 gets a protocol-version alert
  http1       TLS 1.2+, ALPN http/1.1 only; answers each request with "HTTP/1.1 200 OK"
  no-alpn     TLS 1.2+, no ALPN at all; answers each request with "HTTP/1.1 200 OK"
  http1-as-h2 TLS 1.2+, agrees to ALPN h2 but speaks HTTP/1.1 (a misconfigured front end): on
              the client's first bytes it answers "HTTP/1.1 400 Bad Request" and closes
  garbage     no TLS: sends bytes that are not a TLS record right after accept, then closes
  silent      accepts TCP and never sends a byte (keeps the socket open until it exits)
  h2-silent   TLS 1.2+ with ALPN h2: sends its HTTP/2 SETTINGS (the client is then connected),
              then reads everything (requests, PINGs) and never sends another byte: a server
              that took the request and went silent
Each accepted connection appends one line (the mode) to --log. Only loopback is used; the
process exits by itself after --lifetime seconds (default 60), and tests kill it with SIGKILL.
"""
import argparse
import os
import socket
import ssl
import sys
import threading
import time
import warnings

from loopback import listen_and_publish

warnings.filterwarnings("ignore", category=DeprecationWarning)  # TLS 1.0/1.1 are deprecated: that is the point
# An HTTP/2 SETTINGS frame with no settings (RFC 9113 §6.5): length 0, type 4, no flags, stream 0.
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
GARBAGE = b"\x00\xffTHIS IS NOT TLS\r\n" + bytes(range(256)) * 4


def tls_context(args):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    if args.mode == "tls11":
        ctx.set_ciphers("DEFAULT@SECLEVEL=0")
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        ctx.set_alpn_protocols(["h2"])
    elif args.mode == "http1":
        ctx.set_alpn_protocols(["http/1.1"])
    elif args.mode in ("http1-as-h2", "h2-silent"):
        ctx.set_alpn_protocols(["h2"])
    return ctx


def handle(conn, args, ctx):
    conn.settimeout(args.lifetime)
    try:
        if args.mode == "garbage":
            conn.sendall(GARBAGE)
            # The server's behaviour under test, not a wait of the test: the connection stays
            # open a moment so the client reads the garbage rather than a reset.
            time.sleep(0.5)
            return
        if args.mode == "silent":
            while conn.recv(65536):
                pass
            return
        tls = ctx.wrap_socket(conn, server_side=True)
        if args.mode == "h2-silent":
            tls.sendall(EMPTY_SETTINGS)
            while tls.recv(65536):
                pass
            return
        if args.mode == "http1-as-h2":
            tls.recv(65536)
            tls.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            # Close the way an HTTP/1.1 server does, reading what the client still sends, so the
            # answer is not lost to a TCP reset.
            tls.settimeout(5)
            while tls.recv(65536):
                pass
            return
        data = b""
        while True:
            chunk = tls.recv(65536)
            if not chunk:
                return
            data += chunk
            while b"\r\n\r\n" in data:
                _, _, data = data.partition(b"\r\n\r\n")
                tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    except (OSError, ssl.SSLError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["tls11", "http1", "no-alpn", "http1-as-h2", "h2-silent", "garbage", "silent"])
    p.add_argument("port_file")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--lifetime", type=float, default=60)
    p.add_argument("--log")
    args = p.parse_args()
    ctx = None if args.mode in ("garbage", "silent") else tls_context(args)
    server = listen_and_publish(args.port_file)
    end = time.monotonic() + args.lifetime
    while time.monotonic() < end:
        server.settimeout(max(0.01, end - time.monotonic()))
        try:
            conn, _ = server.accept()
        except socket.timeout:
            break
        if args.log:
            with open(args.log, "a") as f:
                f.write(args.mode + "\n")
        threading.Thread(target=handle, args=(conn, args, ctx), daemon=True).start()
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
