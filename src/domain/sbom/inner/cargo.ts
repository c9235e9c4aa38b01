/** Rust crates from `Cargo.lock`: every `[[package]]` with its name and version (registry crates; path and git crates too). */
import { purl } from '../purl.js';
import type { InnerComponent } from '../model.js';

export function parseCargoLock(text: string, foundIn: string): InnerComponent[] {
  const out: InnerComponent[] = [];
  for (const block of text.split(/^\[\[package\]\]\s*$/m).slice(1)) {
    const name = /^name\s*=\s*"([^"]+)"/m.exec(block)?.[1];
    const version = /^version\s*=\s*"([^"]+)"/m.exec(block)?.[1];
    if (!name || !version) continue;
    out.push({ ecosystem: 'cargo', namespace: null, name, version, foundIn, purl: purl({ type: 'cargo', name, version }), license: null });
  }
  return out;
}
