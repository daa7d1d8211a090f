"""A folder of Markdown notes sent as a ``.zip`` (an Obsidian vault, zipped): read it safely.

``read_archive(data)`` returns the notes (their name in the archive and their text) and how
many other files it skipped (pictures, PDFs, ``.obsidian/`` settings, ``__MACOSX/`` and other
hidden entries): nothing is written to disk, and nothing of the archive is trusted. The whole
archive is refused, before anything is imported, with ``ArchiveRefused`` naming the reason
and the entry:

- ``damaged``: not a zip file, or an entry whose data does not unpack (a bad CRC, an unknown
  compression method);
- ``unsafe_name``: an entry whose name climbs out of the folder (``..``), starts at the root
  (``/etc/passwd``, ``C:\\``), or holds a backslash or a control character; a symbolic link;
- ``encrypted``: an entry with a password;
- ``nested``: an archive inside the archive (``.zip``, ``.7z``, ``.rar``, ``.tar``, ``.gz``
  ...): its notes would be hidden from these limits;
- ``too_big``: a note over ``MAX_NOTE_BYTES`` unpacked, or notes over ``MAX_UNPACKED_BYTES`` in
  all. The sizes are counted as the data is unpacked, never taken from the entry's header, so
  a zip bomb stops at the limit: at most ``MAX_UNPACKED_BYTES`` are ever inflated;
- ``too_many``: more than ``MAX_MEMBERS`` entries;
- ``not_text``: a note that is not UTF-8 text;
- ``no_notes``: no ``.md`` file at all.
"""

from __future__ import annotations

import stat
import zipfile
import zlib
from dataclasses import dataclass
from io import BytesIO
from pathlib import PurePosixPath

MAX_ARCHIVE_BYTES = 20 * 1024 * 1024  # the archive itself: what Telegram lets a bot download
MAX_NOTE_BYTES = 1024 * 1024  # one note, unpacked
MAX_UNPACKED_BYTES = 20 * 1024 * 1024  # every note together, unpacked
MAX_MEMBERS = 10_000
NOTE_SUFFIXES = (".md", ".markdown")
ARCHIVE_SUFFIXES = (".zip", ".7z", ".rar", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".jar")

DAMAGED, UNSAFE_NAME, ENCRYPTED, NESTED = "damaged", "unsafe_name", "encrypted", "nested"
TOO_BIG, TOO_MANY, NOT_TEXT, NO_NOTES = "too_big", "too_many", "not_text", "no_notes"


class ArchiveRefused(Exception):
    """The archive cannot be imported: ``reason`` (see the module docstring) and ``member``,
    the entry it is about (empty for the archive as a whole)."""

    def __init__(self, reason: str, member: str = "") -> None:
        super().__init__(f"{reason}: {member}" if member else reason)
        self.reason = reason
        self.member = member


@dataclass(frozen=True)
class Note:
    """One Markdown file of the archive: its name in it (with its folders) and its text."""

    name: str
    text: str

    @property
    def title(self) -> str:
        """Its name without the folder and ``.md``, as Obsidian titles a note."""
        return PurePosixPath(self.name).stem


def _unsafe(name: str) -> bool:
    if not name or name.startswith("/") or "\\" in name or any(ord(c) < 32 for c in name):
        return True
    parts = name.split("/")
    return ".." in parts or (len(parts[0]) == 2 and parts[0][1] == ":")


def _skipped(name: str) -> bool:
    """A hidden entry: a dot file or folder (``.obsidian/``, ``.trash/``), a macOS resource
    fork (``__MACOSX/``, ``._note.md``)."""
    return any(part.startswith((".", "__MACOSX")) for part in name.split("/") if part)


def _is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def read_archive(data: bytes) -> tuple[list[Note], int]:
    """The notes of a zipped folder, and how many other files were skipped
    (``ArchiveRefused`` if it cannot be imported as a whole)."""
    try:
        archive = zipfile.ZipFile(BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as e:
        raise ArchiveRefused(DAMAGED) from e
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise ArchiveRefused(TOO_MANY)
        notes: list[Note] = []
        skipped = 0
        unpacked = 0
        for info in members:
            name = info.filename
            if _unsafe(name) or _is_link(info):
                raise ArchiveRefused(UNSAFE_NAME, name)
            if info.is_dir():
                continue
            lower = name.lower()
            if lower.endswith(ARCHIVE_SUFFIXES):
                raise ArchiveRefused(NESTED, name)
            if _skipped(name) or not lower.endswith(NOTE_SUFFIXES):
                skipped += 1
                continue
            if info.flag_bits & 0x1:
                raise ArchiveRefused(ENCRYPTED, name)
            if info.file_size > MAX_NOTE_BYTES:
                raise ArchiveRefused(TOO_BIG, name)
            raw = _unpack(archive, info, min(MAX_NOTE_BYTES, MAX_UNPACKED_BYTES - unpacked))
            unpacked += len(raw)
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError as e:
                raise ArchiveRefused(NOT_TEXT, name) from e
            if "\x00" in text:
                raise ArchiveRefused(NOT_TEXT, name)
            notes.append(Note(name, text))
    if not notes:
        raise ArchiveRefused(NO_NOTES)
    return notes, skipped


def _unpack(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    """The entry's data, unpacked up to ``limit`` bytes (``too_big`` past it)."""
    try:
        with archive.open(info) as member:
            raw = member.read(limit + 1)
    except RuntimeError as e:  # a password is needed after all
        raise ArchiveRefused(ENCRYPTED, info.filename) from e
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, OSError, EOFError) as e:
        raise ArchiveRefused(DAMAGED, info.filename) from e
    if len(raw) > limit:
        raise ArchiveRefused(TOO_BIG, info.filename)
    return raw


__all__ = ["ArchiveRefused", "Note", "read_archive"]
