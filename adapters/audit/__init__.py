"""The audit trail: one JSON line per request, refusal, ended task and /docs read, appended atomically,
rotated by size, read back and replayed.

The design and its trade-offs: docs/adr/0922-audit-trail.md, amended by docs/adr/1131-complete-audit-trail.md.
"""

from .log_file import AuditFile
from .observer import AuditLog
from .record import DEFAULT_REDACTED, Redaction
from .salt import ClientIds, SaltError, deployment_salt

__all__ = ["DEFAULT_REDACTED", "AuditFile", "AuditLog", "ClientIds", "Redaction", "SaltError", "deployment_salt"]
