/** npm modules: `package.json` of each installed module, and `package-lock.json` (v2/v3 `packages`). */
import { purl } from '../purl.js';
import type { InnerComponent } from '../model.js';

const NAME = /^(?:@([a-z0-9][a-z0-9._~-]*)\/)?([a-z0-9._~][a-z0-9._~-]*)$/i;

function licenseOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string') return (value as { type: string }).type;
  return null;
}

export function npmComponent(name: unknown, version: unknown, license: unknown, foundIn: string): InnerComponent | null {
  if (typeof name !== 'string' || typeof version !== 'string' || !version) return null;
  const m = NAME.exec(name);
  if (!m) return null;
  const scope = m[1] ? `@${m[1]}` : null;
  return {
    ecosystem: 'npm', namespace: scope, name: m[2]!, version, foundIn,
    purl: purl({ type: 'npm', namespace: scope, name: m[2]!, version }),
    license: licenseOf(license),
  };
}

/** A module's own package.json; workspace or private manifests without a version give nothing. */
export function parsePackageJson(text: string, foundIn: string): InnerComponent[] {
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    const c = npmComponent(json.name, json.version, json.license, foundIn);
    return c ? [c] : [];
  } catch {
    return [];
  }
}

/** Lock files v2/v3: `packages` keyed by `node_modules/...` paths (the root entry "" is the project). */
export function parsePackageLock(text: string, foundIn: string): InnerComponent[] {
  try {
    const json = JSON.parse(text) as { packages?: Record<string, Record<string, unknown>> };
    const out: InnerComponent[] = [];
    for (const [key, entry] of Object.entries(json.packages ?? {})) {
      if (!key.includes('node_modules/') || entry.link) continue;
      const name = typeof entry.name === 'string' ? entry.name : key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
      const c = npmComponent(name, entry.version, entry.license, foundIn);
      if (c) out.push(c);
    }
    return out;
  } catch {
    return [];
  }
}
