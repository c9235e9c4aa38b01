/**
 * Counts package downloads served at /repo/. The hook runs once the response is over and
 * only increments an in-memory counter (src/services/downloads/counter.ts): the transfer itself is
 * never delayed, and nothing is read from disk or the database here. The token a download was
 * made with comes from the /repo/ route, which verified it (src/http/routes/repository.ts).
 */
import { countsAsDownload, packageFilePath } from '../domain/downloads/package-path.js';
import type { AppContext } from '../services/context.js';
import type { App } from './types.js';

export function countDownloads(app: App, ctx: AppContext): void {
  app.addHook('onResponse', (request, reply, done) => {
    // A transfer the client broke off is not a download.
    if (request.url.startsWith('/repo/') && reply.raw.writableEnded && countsAsDownload(request.method, reply.statusCode, request.headers.range)) {
      const path = packageFilePath(request.url);
      if (path) ctx.downloads.counter.record(path, Date.now(), request.downloadToken);
    }
    done();
  });
}
