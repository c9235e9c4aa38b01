// Bundles the compiled service (tsc's output in dist/) into a few ES modules for `npm start`.
//
// Why: loaded as ~1,000 separate ES modules (TypeBox alone is 373 files, Kysely 262), the service
// holds a module record, a source string and a scope per file, and V8 grows its heap while they
// load; the same code as one bundle with lazily loaded chunks starts faster and holds less (see the
// README, "Memory at rest"). The code is tsc's output, unchanged: esbuild only joins it, and chains
// tsc's source maps so that stack traces still name src/*.ts.
//
//   node scripts/bundle.mjs [distDir]   <distDir>/main.js -> <distDir>/tollgate.mjs (default dist)
//
// The bundle and its chunks sit in distDir itself, beside tsc's files, so that paths the code
// computes from its own location (`../ui/dist` in config.ts) mean the same in both.
import { readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

/** Prefix of every file the bundler writes, so that a rebuild can clear the previous chunks. */
export const BUNDLE_PREFIX = 'tollgate';

/**
 * Packages left to Node's own loader: native addons (a `.node` file found beside their own
 * sources), and packages that read files next to their own modules at run time (`__dirname`):
 * Swagger UI's static assets, Swagger's package.json, ioredis's error stacks. (pino's transport
 * workers would too, but the service logs to stdout and never starts one.)
 */
const EXTERNAL = ['better-sqlite3', 'lzma-native', 'pg-native', '@fastify/swagger', '@fastify/swagger-ui', 'ioredis'];

/**
 * Bundles `entries` (tsc's output: `{ in: absolute path, out: name }`) into `outdir`, each entry
 * as `<out>.mjs`, code shared by entries or imported lazily in `tollgate-chunk-*.mjs`; clears the
 * previous chunks first. Returns the files written (absolute paths), entries first.
 */
export async function bundleService(entries, outdir) {
  const dir = resolve(outdir);
  for (const name of await readdir(dir)) {
    if (name.startsWith(BUNDLE_PREFIX) && /\.mjs(\.map)?$/.test(name)) await rm(join(dir, name), { force: true });
  }
  const result = await esbuild.build({
    entryPoints: entries,
    outdir: dir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outExtension: { '.js': '.mjs' },
    chunkNames: `${BUNDLE_PREFIX}-chunk-[hash]`,
    external: EXTERNAL,
    // CommonJS dependencies call `require` for Node's built-in modules; an ES module has none.
    banner: { js: "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);" },
    sourcemap: 'linked',
    // Stack traces need the mappings only; the sources stay in src/ (and in tsc's maps).
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
  });
  const written = Object.keys(result.metafile.outputs).filter((p) => p.endsWith('.mjs')).map((p) => resolve(p));
  const named = entries.map((e) => join(dir, `${e.out}.mjs`));
  return [...named, ...written.filter((p) => !named.includes(p))];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const distDir = resolve(process.argv[2] ?? 'dist');
  const files = await bundleService([{ in: join(distDir, 'main.js'), out: BUNDLE_PREFIX }], distDir);
  console.log(`bundled ${files[0]} (${files.length - 1} chunks)`);
}
