"""The gateway pack's outbound client: configuration, the OpenAI-compatible client, retries, the error map.

The client module (aiohttp) is imported only when a gateway is configured: `hexmcp stdio`
without one does not pay for it at start-up.
"""

from .config import GatewayConfig, GatewayConfigError, load_gateway_config
from .retry import RetryPolicy

__all__ = ["GatewayConfig", "GatewayConfigError", "RetryPolicy", "load_gateway_config"]
