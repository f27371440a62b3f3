"""Transport drivers: one synchronous client per wire, all with the same `Driver` interface (base.py)."""

from .base import Closed, Driver
from .http import HttpDriver, RestDriver
from .stdio import StdioDriver
from .ws import WsDriver

__all__ = ["Closed", "Driver", "HttpDriver", "RestDriver", "StdioDriver", "WsDriver"]
