"""Length-prefixed JSON messages over a socket (the worker's replies are data, never code)."""

from __future__ import annotations

import json
import struct

MAX_MESSAGE = 64 << 20


def send(sock, msg: dict) -> None:
    data = json.dumps(msg).encode()
    sock.sendall(struct.pack("<I", len(data)) + data)


def _exact(sock, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv(sock) -> dict | None:
    """The next message, or None when the other side is gone (or sent garbage)."""
    head = _exact(sock, 4)
    if head is None:
        return None
    (n,) = struct.unpack("<I", head)
    data = _exact(sock, n) if n <= MAX_MESSAGE else None
    if data is None:
        return None
    try:
        msg = json.loads(data)
    except ValueError:
        return None
    return msg if isinstance(msg, dict) else None
