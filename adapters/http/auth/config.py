"""`OAuthConfig`: the resource server's settings, validated once."""

from __future__ import annotations

from typing import Mapping

import attrs

from ...settings import positive, string_tuple
from .fetch import check_url

JWT = "jwt"
INTROSPECTION = "introspection"
# Asymmetric algorithms only: a shared-secret (HS*) or unsigned token could be minted by anyone who
# read the JWKS, or by anyone at all.
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


def _canonical(url: str) -> str:
    """RFC 8707's canonical form: lower-case scheme and host, no fragment, no trailing slash."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url.strip())
    if parts.fragment or not parts.scheme or not parts.netloc:
        raise ValueError(f"the resource URI must be absolute and have no fragment, got {url!r}")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query, ""))


@attrs.frozen(kw_only=True)
class OAuthConfig:
    issuer: str = attrs.field(converter=lambda value: value.strip().rstrip("/") if isinstance(value, str) else value)
    """The authorization server's issuer identifier: tokens must carry it as `iss`."""
    resource: str = attrs.field(converter=_canonical)
    """This server's canonical URI (RFC 8707), e.g. https://mcp.example.com/mcp: tokens must name it in `aud`."""
    audiences: tuple[str, ...] = attrs.field(default=(), converter=string_tuple)
    """Other `aud` values accepted besides `resource` (an issuer that names its APIs otherwise)."""
    validation: str = attrs.field(default=JWT, validator=attrs.validators.in_((JWT, INTROSPECTION)))
    jwks_url: str | None = None
    """Where the issuer's signing keys are; None: from its metadata (RFC 8414 / OpenID discovery)."""
    introspection_url: str | None = None
    """The RFC 7662 endpoint; None: from the issuer's metadata."""
    client_id: str | None = None
    """This resource server's client id at the issuer, for introspection requests."""
    client_secret: str | None = attrs.field(default=None, repr=False)
    scopes: Mapping[str, str] = attrs.field(factory=dict)
    """Scope rules (`scopes.ScopePolicy.parse`): method or `tool:NAME` → the scope it needs."""
    algorithms: tuple[str, ...] = attrs.field(default=DEFAULT_ALGORITHMS, converter=string_tuple)
    leeway_s: float = attrs.field(default=30.0, validator=attrs.validators.ge(0))
    """Clock skew tolerated on `exp` and `nbf`."""
    jwks_refresh_s: float = attrs.field(default=3600.0, validator=positive)
    """How often the JWKS is fetched again in the background."""
    jwks_min_interval_s: float = attrs.field(default=10.0, validator=attrs.validators.ge(0))
    """The least time between two fetches of the JWKS, however many tokens name an unknown key."""
    introspection_cache_s: float = attrs.field(default=30.0, validator=attrs.validators.ge(0))
    """How long an introspection answer is reused (never past the token's `exp`)."""
    introspection_cache_size: int = attrs.field(default=10_000, validator=positive)
    fetch_timeout_s: float = attrs.field(default=5.0, validator=positive)

    def __attrs_post_init__(self) -> None:
        check_url(self.issuer, "the OAuth issuer")
        for url, what in ((self.jwks_url, "the JWKS URL"), (self.introspection_url, "the introspection URL")):
            if url is not None:
                check_url(url, what)
        bad = [alg for alg in self.algorithms if alg not in DEFAULT_ALGORITHMS]
        if bad:
            raise ValueError(f"OAuth algorithms must be asymmetric ones ({', '.join(DEFAULT_ALGORITHMS)}), got {bad}")
        if self.validation == INTROSPECTION and not (self.client_id and self.client_secret):
            raise ValueError("token introspection needs the resource server's client id and secret")

    @property
    def accepted_audiences(self) -> tuple[str, ...]:
        return (self.resource, *self.audiences)
