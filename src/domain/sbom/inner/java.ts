/**
 * Java archives: the Maven coordinates in `META-INF/maven/<group>/<artifact>/pom.properties`
 * (one per artifact shaded into the jar). Only those members are decompressed.
 */
import { unzipSync } from 'fflate';
import { purl } from '../purl.js';
import type { InnerComponent } from '../model.js';

const POM_PROPERTIES = /^META-INF\/maven\/[^/]+\/[^/]+\/pom\.properties$/;
/** A pom.properties is a few hundred bytes; anything larger is not one. */
const MAX_MEMBER = 64 * 1024;

export function parsePomProperties(text: string, foundIn: string): InnerComponent | null {
  const values = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Za-z]+)\s*[=:]\s*(.*?)\s*$/.exec(line);
    if (m) values.set(m[1]!, m[2]!);
  }
  const group = values.get('groupId');
  const artifact = values.get('artifactId');
  const version = values.get('version');
  if (!group || !artifact || !version) return null;
  return { ecosystem: 'maven', namespace: group, name: artifact, version, foundIn, purl: purl({ type: 'maven', namespace: group, name: artifact, version }), license: null };
}

export function jarComponents(bytes: Uint8Array, foundIn: string): InnerComponent[] {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes, { filter: (f) => POM_PROPERTIES.test(f.name) && f.originalSize <= MAX_MEMBER });
  } catch {
    return [];
  }
  const out: InnerComponent[] = [];
  for (const data of Object.values(files)) {
    const c = parsePomProperties(Buffer.from(data).toString('utf8'), foundIn);
    if (c) out.push(c);
  }
  return out;
}
