"""Who is calling: authenticators that turn a request's credentials into a `Principal`, and the scopes
each method and tool needs.

Two ways to authenticate, either or both: the static bearer token (`--auth-token`, one secret shared by
every client, named by `--auth-token-name`) and OAuth 2.1 access tokens issued by the operator's
authorization server, checked against its JWKS or by introspection. The design: docs/adr/1101-oauth-resource-server.md.
"""

from .authenticator import Authenticator, build_authenticator
from .principal import Principal

__all__ = ["Authenticator", "Principal", "build_authenticator"]
