// A real OAuth 2.1 / OpenID authorization server for hexmcp's tests: node-oidc-provider, configured from
// the JSON file named on the command line (written by tests/support/oidc_provider.py).
//
// Config: {issuer, port, keys: [private JWKs], clients: [...], scopes: [...],
//          resources: {"<resource URI>": {scope, format: "jwt"|"opaque", ttl}}}
// Access tokens are issued only for the listed resources (RFC 8707 resource indicators), as JWTs or
// opaque tokens (for introspection). The development login and consent pages are on: a test drives them
// over HTTP, as a browser would.
import fs from 'node:fs';
import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const resources = config.resources;

const provider = new Provider(config.issuer, {
  jwks: { keys: config.keys },
  clients: config.clients,
  scopes: ['openid', 'offline_access', ...config.scopes],
  claims: { openid: ['sub'] },
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf ?? undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        const resource = resources[indicator];
        if (!resource) throw new errors.InvalidTarget();
        return {
          scope: resource.scope,
          audience: indicator,
          accessTokenTTL: resource.ttl ?? 300,
          accessTokenFormat: resource.format ?? 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});

const server = provider.listen(config.port, '127.0.0.1', () => {
  process.stdout.write(`listening ${config.issuer}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
