"""The audit trail (ADR 0922): one JSON line per tool call, appended atomically, rotated by size, read back."""

from .log_file import AuditFile
from .observer import AuditLog
from .record import DEFAULT_REDACTED, Redaction

__all__ = ["DEFAULT_REDACTED", "AuditFile", "AuditLog", "Redaction"]
