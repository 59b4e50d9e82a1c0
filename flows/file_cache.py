"""The per-file result cache: what a file produced, kept so that a later run restores it.

An entry is a FileWork as data-only JSON (pipeline.records_codec: reading it builds only the record
types FileWork's fields name, so nothing in it is ever run). OUT_DIR (where the cache lives by default)
is only as trusted as whoever can write there, so every entry also carries an HMAC-SHA256 tag under a
key kept outside OUT_DIR, in the user's cache directory (created 0600): an entry whose tag does not
verify was not written by this user's runs and is not read; it is counted, reported and the file is
processed again. A signed entry that no longer fits the records (written before they changed) is a
miss too, logged but not counted. Entries of the earlier pickle format (`.bin`) are never looked at.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import stat
from pathlib import Path

from flows.work import FileWork
from pipeline.records_codec import CodecError, dumps, loads
from pipeline.store import atomic_write_bytes

KEY_FILE = "cache.key"
TAG = 32  # bytes of an HMAC-SHA256 tag, stored before the payload

log = logging.getLogger(__name__)


class CacheKeyError(RuntimeError):
    """The HMAC key file exists but is not one this user can trust."""


def key_dir() -> Path:
    """The user's own cache directory, never under OUT_DIR."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "longdoc-xl"


def load_key(directory: Path | None = None) -> bytes:
    """This user's cache key, created on first use (0600, never following a link)."""
    directory = directory or key_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read_key(path)
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(32))
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise CacheKeyError(f"{path}: the cache key must be a regular file of yours with mode 0600")
        key = f.read()
    if len(key) < 32:
        raise CacheKeyError(f"{path}: the cache key is too short; delete it to make a new one")
    return key


class FileCache:
    """A file's finished work under `cache_dir/entries`, keyed on sha256 + fingerprint and signed."""

    def __init__(self, cache_dir: str | Path, fingerprint: str, key: bytes | None = None):
        self.root = Path(cache_dir).resolve() / "entries"
        self.fingerprint = fingerprint
        self._key = key or load_key()
        self.rejected: list[str] = []  # paths of entries whose tag did not verify

    def key(self, file) -> str:
        window = file.window and f"{file.window.start}-{file.window.stop}"
        return hashlib.sha256(f"{file.sha256}:{window}:{self.fingerprint}".encode()).hexdigest()

    def path(self, file) -> Path:
        return self.root / f"{self.key(file)}.json"

    def _tag(self, name: str, payload: bytes) -> bytes:
        # The entry's name is signed too: a valid entry copied under another file's key is refused.
        return hmac.new(self._key, name.encode() + b"\0" + payload, hashlib.sha256).digest()

    def has(self, file) -> bool:
        return self.path(file).is_file()

    def get(self, file) -> FileWork | None:
        """The cached FileWork, or None when there is none or it cannot be trusted (then: redo it)."""
        path = self.path(file)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        tag, payload = data[:TAG], data[TAG:]
        if len(tag) < TAG or not hmac.compare_digest(tag, self._tag(path.name, payload)):
            self.rejected.append(str(path))
            log.warning(
                "%s: cache entry not signed by this user's key; ignored, the file is processed again", path
            )
            return None
        try:
            work = loads(payload, FileWork)
        except CodecError as e:
            log.warning(
                "%s: cache entry does not fit this version's records (%s); the file is processed again",
                path,
                e,
            )
            return None
        work.file = file  # the same bytes may now live at another path
        work.cached = True
        return work

    def put(self, work: FileWork) -> None:
        path = self.path(work.file)
        payload = dumps(work)
        atomic_write_bytes(path, self._tag(path.name, payload) + payload)
