"""An HTTP body decoded by its Content-Encoding with the decoded size bounded while it is decoded.

A hostile or broken server can send a few kilobytes that inflate to gigabytes (a zstd frame of RLE
blocks grows 30,000-fold; deflate 1,000-fold). Checking a size limit after decoding is too late, and so
is decoding one received chunk at a time, as HTTP clients do: one 64 KiB chunk of zstd is gigabytes.
Every place evalrun reads an HTTP body (an `http` agent, the OpenAI-compatible fast path) reads the body
as it was sent, bounded, and decodes it here, a bounded piece at a time, stopping as soon as the decoded
bytes pass the limit.

gzip, deflate and zstd (with the zstandard package) are decoded; they are what `ACCEPT_ENCODING` asks
for. brotli is never asked for (its Python bindings cannot all bound their output): a server that sends it
anyway gets an error that says so. An unknown coding is passed through as it is, as HTTP clients do.
"""
from __future__ import annotations

import zlib
from functools import lru_cache
from importlib.util import find_spec

_PIECE = 64 * 1024  # decoded bytes produced per step
_ZSTD_WINDOW = 8 * 1024 * 1024  # RFC 9659: a zstd content coding's window is at most 8 MB
_ZSTD_STEP = 256  # compressed bytes fed to zstd at a time (see _zstd_decoded)


class BodyTooLarge(Exception):
    """The decoded body would pass the limit; `codings` names what it was encoded with."""

    def __init__(self, limit: int, codings: str):
        super().__init__(f"larger than {limit} bytes once decoded (Content-Encoding: {codings})")
        self.limit, self.codings = limit, codings


class BodyUndecodable(Exception):
    """The body does not decode by its Content-Encoding (corrupt, truncated, or a coding evalrun cannot bound)."""


@lru_cache(maxsize=1)
def accept_encoding() -> str:
    """The Accept-Encoding evalrun sends: the codings `decoded_body` bounds (zstd when zstandard is installed)."""
    return "gzip, deflate, zstd" if find_spec("zstandard") is not None else "gzip, deflate"


def decoded_body(raw: bytes, content_encoding: str | None, limit: int) -> bytes:
    """`raw` (the body as sent) decoded by each coding of `content_encoding`, the last applied first; never more
    than `limit` decoded bytes are held (BodyTooLarge as soon as there would be more)."""
    codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
    body = raw
    for coding in reversed(codings):
        if coding in ("gzip", "x-gzip"):
            body = _inflated(body, limit, zlib.MAX_WBITS | 16, content_encoding or coding)
        elif coding == "deflate":  # zlib-wrapped as the RFC says, or raw deflate as some servers send it
            try:
                body = _inflated(body, limit, zlib.MAX_WBITS, content_encoding or coding)
            except BodyUndecodable:
                body = _inflated(body, limit, -zlib.MAX_WBITS, content_encoding or coding)
        elif coding == "zstd":
            body = _zstd_decoded(body, limit, content_encoding or coding)
        elif coding == "br":
            raise BodyUndecodable("it is brotli-encoded (Content-Encoding: br), which evalrun does not ask for and "
                                  "cannot decode within a size limit; have the server send gzip, zstd or no encoding")
        # identity, or a coding nobody asked for: the bytes as they are
    if len(body) > limit:
        raise BodyTooLarge(limit, content_encoding or "identity")
    return body


def _inflated(data: bytes, limit: int, wbits: int, codings: str) -> bytes:
    decoder = zlib.decompressobj(wbits)
    out = bytearray()
    pending = data
    try:
        while True:
            piece = decoder.decompress(pending, _PIECE)
            out += piece
            if len(out) > limit:
                raise BodyTooLarge(limit, codings)
            pending = decoder.unconsumed_tail
            if decoder.eof or (not pending and len(piece) < _PIECE):
                break
    except zlib.error as exc:
        raise BodyUndecodable(f"it does not decode as {codings}: {exc}") from None
    if data and not decoder.eof:
        raise BodyUndecodable(f"it does not decode as {codings}: the data ends before the end of its stream")
    if len(out) > limit:
        raise BodyTooLarge(limit, codings)
    return bytes(out)


def _zstd_decoded(data: bytes, limit: int, codings: str) -> bytes:
    """Fed _ZSTD_STEP bytes at a time: a zstd block decodes to at most 128 KiB and takes at least 4 bytes, so one
    step yields at most 8 MiB, and the limit is checked after each."""
    try:
        import zstandard
    except ImportError:
        raise BodyUndecodable("it is zstd-encoded (Content-Encoding: zstd) and the zstandard package is not "
                              "installed: pip install zstandard") from None
    context = zstandard.ZstdDecompressor(max_window_size=_ZSTD_WINDOW)
    decoder = context.decompressobj()
    out = bytearray()
    view = memoryview(data)
    try:
        for start in range(0, len(view), _ZSTD_STEP):
            piece: memoryview | bytes = view[start:start + _ZSTD_STEP]
            while piece:
                out += decoder.decompress(piece)
                if len(out) > limit:
                    raise BodyTooLarge(limit, codings)
                piece = decoder.unused_data if decoder.eof else b""  # the next frame begins in this piece
                if piece:
                    decoder = context.decompressobj()
    except zstandard.ZstdError as exc:
        raise BodyUndecodable(f"it does not decode as {codings}: {exc}") from None
    if data and not decoder.eof:
        raise BodyUndecodable(f"it does not decode as {codings}: the data ends inside a frame")
    return bytes(out)


def status_only_session():
    """A requests.Session (for the OpenTelemetry exporter, `--otlp`) that never reads an answer's body: the exporter
    reads only the status, and requests would otherwise read and decode the whole body into memory, a compressed
    bomb from a hostile receiver included. The connection is closed with the body unread."""
    import requests

    class StatusOnly(requests.Session):
        def request(self, *args, **kwargs):
            response = super().request(*args, **{**kwargs, "stream": True})
            response.close()
            return response

    return StatusOnly()
