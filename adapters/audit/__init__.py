"""The audit trail: one JSON line per tool call, appended atomically, rotated by size, read back.

The design and its trade-offs: docs/adr/0922-audit-trail.md.
"""

from .log_file import AuditFile
from .observer import AuditLog
from .record import DEFAULT_REDACTED, Redaction

__all__ = ["DEFAULT_REDACTED", "AuditFile", "AuditLog", "Redaction"]
