"""What the test servers in this folder share: a listening socket on loopback whose port is
published in a file (written whole, then renamed, so a reader never sees half a number)."""

import os
import socket


def listen_and_publish(port_file: str) -> socket.socket:
    """Listens on 127.0.0.1, any free port, and writes that port to `port_file`."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    return server
