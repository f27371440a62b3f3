"""MCP protocol versions and what each one can carry.

Every version-dependent decision in hexmcp reads this table, so a new revision is one new row.
Versions are ISO dates, so string comparison orders them.
"""

from __future__ import annotations

import attrs

V2024_11_05 = "2024-11-05"
V2025_03_26 = "2025-03-26"
V2025_06_18 = "2025-06-18"
V2025_11_25 = "2025-11-25"
V2026_07_28 = "2026-07-28"


@attrs.frozen(kw_only=True)
class VersionFeatures:
    """What one protocol version allows on the wire."""

    version: str
    handshake: bool  # initialize/initialized and per-connection state (False: stateless, per-request _meta)
    batching: bool  # JSON-RPC batches (only 2025-03-26 has them)
    structured_output: bool  # Tool.outputSchema and CallToolResult.structuredContent
    elicitation: bool
    audio_content: bool
    resource_links: bool
    # A tool's arguments refused (by its input schema or its own checks) answer a tool result with isError
    # the model can read and correct, not a JSON-RPC error: input validation is tool execution (SEP-1303).
    argument_errors_as_results: bool


FEATURES: dict[str, VersionFeatures] = {
    f.version: f
    for f in (
        VersionFeatures(version=V2024_11_05, handshake=True, batching=False, structured_output=False,
                        elicitation=False, audio_content=False, resource_links=False, argument_errors_as_results=False),
        VersionFeatures(version=V2025_03_26, handshake=True, batching=True, structured_output=False,
                        elicitation=False, audio_content=True, resource_links=False, argument_errors_as_results=False),
        VersionFeatures(version=V2025_06_18, handshake=True, batching=False, structured_output=True,
                        elicitation=True, audio_content=True, resource_links=True, argument_errors_as_results=False),
        VersionFeatures(version=V2025_11_25, handshake=True, batching=False, structured_output=True,
                        elicitation=True, audio_content=True, resource_links=True, argument_errors_as_results=True),
        VersionFeatures(version=V2026_07_28, handshake=False, batching=False, structured_output=True,
                        elicitation=True, audio_content=True, resource_links=True, argument_errors_as_results=True),
    )
}

SUPPORTED_VERSIONS: tuple[str, ...] = tuple(sorted(FEATURES))
HANDSHAKE_VERSIONS: tuple[str, ...] = tuple(v for v in SUPPORTED_VERSIONS if FEATURES[v].handshake)
STATELESS_VERSIONS: tuple[str, ...] = tuple(v for v in SUPPORTED_VERSIONS if not FEATURES[v].handshake)
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]
LATEST_VERSION = SUPPORTED_VERSIONS[-1]


def negotiate_handshake_version(requested: str) -> str:
    """The version an `initialize` answer carries: the requested one when we speak it, else our latest.

    A stateless version asked for through `initialize` is answered with the latest handshake version,
    because a 2026-07-28 peer never sends `initialize`; the client then decides whether to go on.
    """
    if requested in FEATURES and FEATURES[requested].handshake:
        return requested
    return LATEST_HANDSHAKE_VERSION


def features(version: str) -> VersionFeatures:
    return FEATURES[version]
