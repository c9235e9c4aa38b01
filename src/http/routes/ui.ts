/**
 * The web interface: the built single-page application under /ui/, and a browser asking for / is
 * sent there. It never answers at any other path, so the API's own root paths (/packages/,
 * /distributions/, …) stay the API's.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { loadUiAssets, type UiAsset } from '../../adapters/ui-assets/ui-assets.js';
import type { AppContext } from '../../services/context.js';
import { HttpError } from '../errors.js';
import type { App } from '../types.js';

export const UI_PREFIX = '/ui/';

/** Vite names every file under assets/ by its content hash: a new build gives new names. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html names the current build's files, so it is checked with the server on every load. */
const REVALIDATE = 'no-cache';

// The interface loads only its own files and talks only to this service.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "font-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

const wantsHtml = (request: FastifyRequest) => (request.headers.accept ?? '').includes('text/html');

function send(request: FastifyRequest, reply: FastifyReply, asset: UiAsset, cacheControl: string) {
  void reply
    .header('cache-control', cacheControl)
    .header('etag', asset.etag)
    .header('vary', 'accept-encoding')
    .header('content-type', asset.contentType);
  if (asset.contentType.startsWith('text/html')) void reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim() === asset.etag)) return reply.status(304).send();
  if (asset.gzipped && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
    return reply.header('content-encoding', 'gzip').send(asset.gzipped);
  }
  return reply.send(asset.bytes);
}

export async function uiRoutes(app: App, ctx: AppContext): Promise<void> {
  const assets = loadUiAssets(ctx.config.uiDir);
  const notBuilt = () => new HttpError(404, 'ui_not_built', 'The web interface is not built in this installation (npm run build)');

  function serve(request: FastifyRequest, reply: FastifyReply, path: string) {
    const index = assets.get('index.html');
    if (!index) throw notBuilt();
    const asset = path === '' ? index : assets.get(path);
    if (asset) return send(request, reply, asset, path.startsWith('assets/') ? IMMUTABLE : REVALIDATE);
    // Any other path below /ui/ is one of the application's own pages (a deep link or a reload):
    // the browser gets the application, which routes it. A missing script or style is a 404.
    if (!path.startsWith('assets/') && wantsHtml(request)) return send(request, reply, index, REVALIDATE);
    throw new HttpError(404, 'not_found', 'No such file in the web interface');
  }

  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    if (!wantsHtml(request)) return reply.callNotFound();
    return reply.redirect(UI_PREFIX, 302);
  });
  app.get('/ui', { schema: { hide: true } }, async (request, reply) => {
    // /ui without its slash would resolve the page's relative URLs against /.
    if (!request.url.split('?')[0]!.endsWith('/')) return reply.redirect(UI_PREFIX, 301);
    return serve(request, reply, '');
  });
  app.get('/ui/*', { schema: { hide: true } }, async (request, reply) => {
    return serve(request, reply, (request.params as { '*': string })['*']);
  });
}
