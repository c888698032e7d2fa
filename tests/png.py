"""A small PNG reader for Chromium's screenshots (8-bit RGB or RGBA, not interlaced): no imaging library needed."""

from __future__ import annotations

import struct
import zlib

import numpy as np


def read_png(data: bytes) -> np.ndarray:
    """The image as an array of shape (height, width, channels), dtype uint8."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    idat, i = [], 8
    while i < len(data):
        n, kind = struct.unpack(">I4s", data[i : i + 8])
        if kind == b"IDAT":
            idat.append(data[i + 8 : i + 8 + n])
        i += 12 + n
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for r in range(h):
        start = r * (stride + 1)
        kind = raw[start]
        line = np.frombuffer(raw, np.uint8, stride, start + 1).astype(np.int32)
        if kind == 1:  # Sub
            line = np.cumsum(line.reshape(w, bpp), axis=0).reshape(-1) & 255
        elif kind == 2:  # Up
            line = (line + prev) & 255
        elif kind in (3, 4):  # Average, Paeth: each byte depends on the one decoded before it
            cur, up = line.tolist(), prev.tolist()
            for j in range(stride):
                a = cur[j - bpp] if j >= bpp else 0
                b = up[j]
                if kind == 3:
                    cur[j] = (cur[j] + ((a + b) >> 1)) & 255
                    continue
                c = up[j - bpp] if j >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[j] = (cur[j] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = np.array(cur, np.int32)
        out[r] = line
        prev = line
    return out.reshape(h, w, bpp)
