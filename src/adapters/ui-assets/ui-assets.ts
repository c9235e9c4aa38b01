import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';

/** One file of the built web interface, held in memory with what its answer needs. */
export interface UiAsset {
  bytes: Buffer;
  /** The gzip form when it is smaller by enough to matter, else null; made at the first request for it. */
  readonly gzipped: Buffer | null;
  contentType: string;
  etag: string;
}

export interface UiAssets {
  /** The file at a path relative to the interface's root (`index.html`, `assets/index-3f2a.js`). */
  get(path: string): UiAsset | undefined;
  readonly built: boolean;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);
const MAX_FILES = 500;
const MAX_TOTAL_BYTES = 20 * 1024 * 1024;

function filesUnder(root: string, dir: string, into: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(root, path, into);
    else if (entry.isFile()) into.push(relative(root, path).split(sep).join('/'));
    if (into.length > MAX_FILES) throw new Error(`the web interface folder ${root} holds more than ${MAX_FILES} files`);
  }
}

/**
 * Reads the built interface once, at start-up: it is a few hundred kilobytes, and answering from
 * memory means a request can never name a file outside it. A missing folder (a checkout where
 * `npm run build` has not run) gives an empty set, and the service still starts.
 */
export function loadUiAssets(dir: string): UiAssets {
  const assets = new Map<string, UiAsset>();
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // not built
  }
  if (isDir) {
    const paths: string[] = [];
    filesUnder(dir, dir, paths);
    let total = 0;
    for (const path of paths) {
      const bytes = readFileSync(join(dir, path));
      total += bytes.length;
      if (total > MAX_TOTAL_BYTES) throw new Error(`the web interface folder ${dir} holds more than ${MAX_TOTAL_BYTES} bytes`);
      const ext = extname(path).toLowerCase();
      // Compressed on first use, not here: level 9 over the bundle costs ~50 ms the start-up need not pay.
      let gzipped: Buffer | null | undefined = COMPRESSIBLE.has(ext) && bytes.length > 1024 ? undefined : null;
      assets.set(path, {
        bytes,
        get gzipped() {
          if (gzipped === undefined) {
            const gzip = gzipSync(bytes, { level: 9 });
            gzipped = gzip.length < bytes.length * 0.9 ? gzip : null;
          }
          return gzipped;
        },
        contentType: CONTENT_TYPES[ext] ?? 'application/octet-stream',
        etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`,
      });
    }
  }
  return { get: (path) => assets.get(path), built: assets.has('index.html') };
}
