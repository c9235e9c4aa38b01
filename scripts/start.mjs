// `npm start`: runs the compiled service when dist/ is up to date with src/, otherwise runs the
// TypeScript sources directly through tsx (no build step, so a fresh clone starts in about a second).
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

const compiled = join(root, 'dist', 'main.js');
if (existsSync(compiled) && statSync(compiled).mtimeMs >= newestMtime(join(root, 'src'))) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'main.ts')).href);
}
