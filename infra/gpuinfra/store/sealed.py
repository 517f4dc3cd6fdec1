"""One sealed, atomic, bounded way to keep an entry on disk, for every cache (compiled definitions, the
workspace's folds, each stack's preview, a review's base side).

A cache can make a review faster, never greener: an entry is sealed with an HMAC-SHA256 under a key the reviewer
holds and the cache does not, so an entry someone wrote into the cache folder (a poisoned CI cache, a forged file
whose plain SHA-256 anyone can recompute) does not check out and is ignored. The key is `GPUINFRA_CACHE_KEY` (a CI
secret), else a random key kept in the user's configuration folder (`$XDG_CONFIG_HOME/gpuinfra/cache.key`, mode
0600), else, when neither can be had, a key of this process alone (nothing is trusted across processes). Reads are
bounded: regular files only, at most `max_bytes`. Writes go to a temporary file renamed into place. Each folder
stays under a size cap, least recently used entries dropped first (gpuinfra.store.prune)."""

from __future__ import annotations

import hashlib
import hmac
import os
import tempfile
from functools import cache
from pathlib import Path
from stat import S_ISREG

from gpuinfra.store import prune

KEY_ENV = "GPUINFRA_CACHE_KEY"


def _key_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gpuinfra" / "cache.key"


@cache
def secret() -> bytes:
    """The reviewer's key: the environment's, else the user's key file (made on first use), else this process's."""
    given = os.environ.get(KEY_ENV)
    if given:
        return given.encode()
    path = _key_file()
    try:
        return _read_key(path) or _made_key(path)
    except OSError:
        return os.urandom(32)


def _read_key(path: Path) -> bytes | None:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if not S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077 or info.st_size > 256:
        raise PermissionError(f"{path}: not a private regular file of this user")
    return path.read_bytes().strip() or None


def _made_key(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = os.urandom(32).hex().encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another process made it first
        return _read_key(path) or os.urandom(32)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
    return key


def seal(kind: str, key: str, payload: bytes) -> bytes:
    """The entry's seal: an HMAC over what it is (`kind`), the key it was stored under and its content."""
    return (
        hmac.new(secret(), kind.encode() + b"\0" + key.encode() + b"\0" + payload, hashlib.sha256).hexdigest().encode()
    )


def write_sealed(path: Path, kind: str, key: str, payload: bytes) -> None:
    """Store `payload` sealed, atomically; a cache that cannot be written is no error (the work is done)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(seal(kind, key, payload) + b"\n" + payload)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return
    prune.after_write(path.parent)


def read_sealed(path: Path, kind: str, key: str, max_bytes: int) -> bytes | None:
    """The payload stored for `key`, or None when absent, not a regular file, over `max_bytes` (the whole entry),
    or not sealed by this reviewer's key for exactly this kind and key."""
    try:
        with open(path, "rb", opener=_no_block) as handle:
            info = os.fstat(handle.fileno())
            if not S_ISREG(info.st_mode) or info.st_size > max_bytes:
                return None
            blob = handle.read(max_bytes + 1)  # a file that grows while read is still bounded
    except OSError:
        return None
    if len(blob) > max_bytes:
        return None
    found, _, payload = blob.partition(b"\n")
    if not hmac.compare_digest(found, seal(kind, key, payload)):
        return None
    prune.touch(path)  # used now: pruning drops the least recently used entries first
    return payload


def _no_block(path: str, flags: int) -> int:
    """Open without blocking on a FIFO (O_NONBLOCK) and without following a final symlink."""
    return os.open(path, flags | os.O_NONBLOCK | os.O_NOFOLLOW)


__all__ = ["KEY_ENV", "read_sealed", "seal", "secret", "write_sealed"]
