#!/usr/bin/env python3
"""A small HTTP CONNECT proxy on loopback, for the proxy tests.

usage: connect_proxy.py PORT_FILE [--credentials user:password] [--log FILE]

Listens on 127.0.0.1 (ephemeral port, written to PORT_FILE once listening), answers
`CONNECT host:port` with 200 and relays bytes both ways; with --credentials, requires
`Proxy-Authorization: Basic ...` and answers 407 otherwise. It only tunnels to loopback
addresses. Each CONNECT target is appended to --log, so tests can check the tunnel was used.
Stops on SIGTERM.
"""
import argparse
import base64
import socket
import sys
import threading

from loopback import listen_and_publish


def relay(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def handle(client, args):
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = client.recv(1)
        if not chunk:
            client.close()
            return
        head += chunk
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = (lines[0].split(" ") + ["", "", ""])[:3]
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:] if l)}
    if method != "CONNECT":
        client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        client.close()
        return
    if args.credentials:
        expected = "Basic " + base64.b64encode(args.credentials.encode()).decode()
        if headers.get("proxy-authorization") != expected:
            client.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
    host, _, port = target.rpartition(":")
    host = host.strip("[]")
    if args.log:
        with open(args.log, "a") as f:
            f.write(target + "\n")
    try:
        addr = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)[0]
        if not (addr[4][0].startswith("127.") or addr[4][0] == "::1"):
            raise OSError("only loopback targets")
        upstream = socket.create_connection(addr[4][:2], timeout=5)
        upstream.settimeout(None)
    except (OSError, ValueError):
        client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        client.close()
        return
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=relay, args=(client, upstream), daemon=True).start()
    threading.Thread(target=relay, args=(upstream, client), daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("port_file")
    p.add_argument("--credentials")
    p.add_argument("--log")
    args = p.parse_args()
    server = listen_and_publish(args.port_file)
    while True:
        client, _ = server.accept()
        threading.Thread(target=handle, args=(client, args), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
