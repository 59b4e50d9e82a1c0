"""Per-document failures: typed, naming the file and the reason, so a run records them and goes on."""

from __future__ import annotations


class DocumentError(Exception):
    """A document that cannot be processed. `str()` is the one-line message users see."""

    stage = "parse"
    lasting = True  # the same bytes fail the same way again, so the failure may be cached

    def __init__(self, source: str, reason: str):
        self.source = str(source)
        self.reason = reason
        super().__init__(f"{self.source}: {reason}")


class UnsupportedFormat(DocumentError):
    """Not a format the pipeline reads (or an extension that lies about the content)."""


class EmptyDocument(DocumentError):
    """An empty file, a zero-page PDF, or a document with no text at all."""


class CorruptDocument(DocumentError):
    """Truncated or damaged content the reader cannot open."""


class UnreadableFile(DocumentError):
    """An input the reader could not read (removed or made unreadable during the run): the failure
    belongs to that file, but it is not a property of its bytes."""

    lasting = False


class EncryptedDocument(DocumentError):
    """A password-protected PDF."""


class TooManyPages(DocumentError):
    """More pages than `parse.page_limit`."""


class OverLimit(DocumentError):
    """Over a size or time limit of the parse config (decompressed bytes, line length, wall time)."""


class SegmentError(DocumentError):
    stage = "segment"
