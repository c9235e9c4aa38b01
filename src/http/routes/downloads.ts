/**
 * GET /downloads/stats: downloads of package files counted by the built-in server and read from
 * reverse-proxy access logs (ACCESS_LOG_PATH).
 */
import { Type } from 'typebox';
import { DOWNLOAD_WINDOWS, isDownloadWindow } from '../../domain/downloads/attribution.js';
import type { AppContext } from '../../services/context.js';
import { principalOf } from '../auth-hook.js';
import { notFound, unprocessable } from '../errors.js';
import { answering, errorResponses } from '../schemas.js';
import type { App } from '../types.js';

const DEFAULT_DAYS = 30;
const Distribution = Type.Union([Type.String(), Type.Null()], {
  description: 'Codename; null for an APT pool file listed by several distributions (counted once, credited to none)',
});

const TokenDownloadsOut = Type.Object({
  token_id: Type.String(),
  username: Type.String({ description: "The token owner's user name" }),
  name: Type.Union([Type.String(), Type.Null()], { description: 'The token\'s name; null once the token is gone with its account' }),
  kind: Type.Union([Type.Literal('api'), Type.Literal('read'), Type.Null()]),
  downloads: Type.Integer(),
});

const StatsOut = answering<Awaited<ReturnType<AppContext['downloads']['stats']>>>()(Type.Object({
  days: Type.Integer(),
  from: Type.String({ description: 'First UTC day of the window (YYYY-MM-DD)' }),
  to: Type.String({ description: 'Last UTC day: today' }),
  total: Type.Integer(),
  distinct_packages: Type.Integer({ description: 'Packages downloaded at least once in the window' }),
  by_day: Type.Array(Type.Object({ day: Type.String(), downloads: Type.Integer() }), { description: 'Every day of the window, oldest first' }),
  by_distribution: Type.Array(Type.Object({ distribution: Distribution, downloads: Type.Integer() }), { description: 'Most downloaded first' }),
  packages: Type.Array(Type.Object({
    name: Type.String(), version: Type.String(), distribution: Distribution, arch: Type.String(), downloads: Type.Integer(),
  }), { description: 'The `limit` most downloaded packages, most downloaded first' }),
  by_token: Type.Optional(Type.Array(TokenDownloadsOut, {
    description: 'Without `token`: downloads made with each token (HTTP Basic password or Bearer at /repo/) the caller may see (admins: all; others: their own), most first, `limit` at most',
  })),
  token: Type.Optional(TokenDownloadsOut),
}));

export async function downloadRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/downloads/stats', {
    schema: {
      tags: ['downloads'],
      summary: 'Package downloads over the last 7, 30 or 90 UTC days (today included)',
      description: 'A download is a GET of a .deb/.rpm under the repository answered 200, or 206 from byte 0. '
        + 'Index files are not downloads. Proxy logs are read every minute.',
      querystring: Type.Object({
        days: Type.Optional(Type.Integer({ description: 'One of 7, 30, 90 (default 30)' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
        token: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A token id: only the downloads made with it (your own tokens; any for admins)' })),
      }, { additionalProperties: false }),
      response: { 200: StatsOut, ...errorResponses },
    },
  }, async (request) => {
    const days = request.query.days ?? DEFAULT_DAYS;
    if (!isDownloadWindow(days)) {
      throw unprocessable('invalid_days', `days must be one of ${DOWNLOAD_WINDOWS.join(', ')}, got ${days}`, [
        { loc: ['query', 'days'], msg: `must be one of ${DOWNLOAD_WINDOWS.join(', ')}` },
      ]);
    }
    const p = principalOf(request);
    const visible = await ctx.tokens.visibleIds(p.user, p.role === 'admin');
    const limit = request.query.limit ?? 50;
    const token = request.query.token;
    if (token !== undefined) {
      // Someone else's token is answered as unknown, as on revocation: its existence is not disclosed.
      const known = visible === null ? (await ctx.tokens.exists(token)) || (await ctx.downloads.store.hasToken(token)) : visible.includes(token);
      if (!known) throw notFound('API token', 'token_not_found');
      return ctx.downloads.stats(days, limit, { token });
    }
    return ctx.downloads.stats(days, limit, { view: visible === null ? { all: true } : { all: false, ids: visible } });
  });
}
