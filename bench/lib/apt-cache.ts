import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The machine's APT cache: hundreds of real packages after any `apt-get install`. */
export const APT_CACHE = '/var/cache/apt/archives';

/**
 * The first `limit` amd64 and `all` packages of the APT cache, by name, and their size in bytes;
 * null (and a line saying the bench is skipped) when the cache is empty or absent.
 */
export function aptCacheCorpus(limit = Number.POSITIVE_INFINITY): { files: string[]; bytes: number } | null {
  let names: string[] = [];
  try {
    names = readdirSync(APT_CACHE).filter((f) => /_(amd64|all)\.deb$/.test(f)).sort().slice(0, limit);
  } catch {
    // no cache at all
  }
  if (names.length === 0) {
    console.log(`skipped: no .deb in ${APT_CACHE} (any apt-get install fills it)`);
    return null;
  }
  const files = names.map((f) => join(APT_CACHE, f));
  return { files, bytes: files.reduce((sum, f) => sum + statSync(f).size, 0) };
}
