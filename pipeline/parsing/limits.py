"""What reading one input may cost before it is refused: bytes once decompressed, the length of a JSONL
line, wall time (ParseConfig's limits). Over a limit, the input or record is one `OverLimit` error."""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from pipeline.errors import CorruptDocument, OverLimit

_CHUNK = 1 << 20


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} bytes"


def _damage(e: BaseException) -> str:
    # only the compressed data's own faults: a file that vanished or cannot be read is an OSError the
    # caller reports as unreadable, not as damage
    return "truncated gzip data" if isinstance(e, EOFError) else f"damaged gzip data ({e})"


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def open_input(path: Path) -> BinaryIO:
    """The file's content stream: decompressed when the bytes say gzip, whatever the name says."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def read_capped(path: Path, limit: int) -> bytes:
    """The whole content (decompressed if gzip), refused once it passes `limit` bytes: never more than
    `limit` + 1 bytes are held, however far a gzip bomb would inflate."""
    source = str(path)
    chunks: list[bytes] = []
    size = 0
    try:
        with open_input(path) as f:
            # in chunks: one read of `limit` bytes from a gzip stream peaks at three times that
            while size <= limit and (chunk := f.read(min(_CHUNK, limit + 1 - size))):
                chunks.append(chunk)
                size += len(chunk)
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise CorruptDocument(source, _damage(e)) from None
    data = b"".join(chunks)
    del chunks
    if len(data) > limit:
        raise OverLimit(source, f"content over {_size(limit)} once read (parse.max_decompressed_bytes)")
    return data


def capped_lines(
    f: BinaryIO, source: str, max_line: int, max_total: int, first: int = 1
) -> Iterator[bytes | OverLimit]:
    """The lines of a stream, the first numbered `first` in errors; a line over `max_line` bytes is
    skipped unheld and comes as its error. Past `max_total` bytes in all, or at damaged gzip data, one
    error ends the stream."""
    total = 0
    line_no = first - 1
    try:
        while raw := f.readline(max_line + 1):
            line_no += 1
            total += len(raw)
            too_long = len(raw) > max_line and not raw.endswith(b"\n")
            # the rest of an over-long line is skipped unheld, but no further than the total cap
            while too_long and total <= max_total and (rest := f.readline(_CHUNK)):
                total += len(rest)
                if rest.endswith(b"\n"):
                    break
            over = f"over {_size(max_total)} once decompressed; the rest is not read (parse.max_decompressed_bytes)"
            if too_long and total > max_total:  # one error for the file, the line it ended in included
                yield OverLimit(source, f"line {line_no} over {_size(max_line)}, and {over}")
                return
            if too_long:
                yield OverLimit(f"{source}:{line_no}", f"line over {_size(max_line)} (parse.max_line_bytes)")
            else:
                yield raw
            if total > max_total:
                yield OverLimit(source, over)
                return
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        # the damage belongs to the file (the records before it stay), not to a record of it
        yield CorruptDocument(source, f"{_damage(e)} after line {line_no}; the rest is not read")


class Deadline:
    """Wall time left to read one document (`seconds` None: no limit)."""

    def __init__(self, source: str, seconds: float | None):
        self.source = source
        self.seconds = seconds
        self.end = None if seconds is None else time.monotonic() + seconds

    def check(self, where: str) -> None:
        if self.end is not None and time.monotonic() > self.end:
            raise OverLimit(
                self.source, f"reading took over {self.seconds:g} s (parse.max_doc_seconds); stopped {where}"
            )
