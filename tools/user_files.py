"""Files a user hands the server at start-up (--taxonomy, --glossary): one error shape that names the
file, the line and the reason, and one way to read them as text."""

from __future__ import annotations

from pathlib import Path


class UserFileError(Exception):
    """A user's file is unusable. The message names the file, the line (when known) and why."""

    def __init__(self, path: object, reason: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


def read_user_text(path: Path, error: type[UserFileError]) -> str:
    """The file's text (UTF-8, a BOM allowed); an unreadable or undecodable file raises `error`."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise error(path, f"cannot read file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise error(path, f"not valid UTF-8 (byte offset {exc.start})") from exc
