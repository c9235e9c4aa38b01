// `npm start`: runs the bundled build (dist/tollgate.mjs, see scripts/bundle.mjs) when it is up to
// date with src/, otherwise the TypeScript sources directly through tsx (no build step needed).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const compiled = join(root, 'dist', 'tollgate.mjs');
if (existsSync(compiled) && statSync(compiled).mtimeMs >= newestMtime(join(root, 'src'))) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'main.ts')).href);
}
