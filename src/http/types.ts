import type { Access } from './permissions.js';
import type { Principal } from '../services/auth.js';
import type { RateLimitName } from './rate-limits.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** The JWT of the session cookie when the cookie, not a header, authenticated the request. */
    sessionJwt: string | null;
    /** /repo/: the token a package download was made with (set once the credential is verified), for the download statistics. */
    downloadToken: { id: string; username: string } | null;
  }
  interface FastifyContextConfig {
    /** Set from ROUTE_ACCESS when the route is registered (src/http/route-guard.ts). */
    access?: Access;
    /** The route template without its /api or /api/v1 prefix: the permission key and metrics label. */
    template?: string;
    limit?: RateLimitName;
  }
  interface FastifyInstance {
    /** Compiles now the validators and serializers a first request to `method path` would (deferred-compilations.ts); returns how many. */
    compileAhead(method: string, path: string): number;
  }
}

import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

/** The Fastify instance route files receive: request types inferred from their TypeBox schemas. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression<RawServerDefault>,
  RawReplyDefaultExpression<RawServerDefault>,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
