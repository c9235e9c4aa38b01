import assert from 'node:assert/strict';
import { parseXml, type XmlElement } from '../domain/repo/rpm/mini-xml.js';

/**
 * Package entries of a primary.xml, reduced to what must agree between two generators (ours and
 * createrepo_c), sorted by name and architecture.
 */
export function primaryEntries(xml: string) {
  return parseXml(xml)
    .children.filter((c) => c.name === 'package')
    .map((p) => {
      const child = (el: XmlElement, name: string) => el.children.find((c) => c.name === name);
      const format = child(p, 'format')!;
      const deps = (kind: string) => (child(format, `rpm:${kind}`)?.children ?? []).map((e) => JSON.stringify(e.attrs)).sort();
      const entry = {
        name: child(p, 'name')!.text,
        arch: child(p, 'arch')!.text,
        version: child(p, 'version')!.attrs,
        checksum: child(p, 'checksum')!.text,
        location: child(p, 'location')!.attrs.href!,
        requires: deps('requires'),
        provides: deps('provides'),
        files: format.children.filter((c) => c.name === 'file').map((f) => f.text).sort(),
      };
      // Compared field by field by the callers: an empty reading on both sides would prove nothing.
      assert.ok(entry.name !== '' && /^[0-9a-f]{64}$/.test(entry.checksum), JSON.stringify(entry));
      return entry;
    })
    .sort((a, b) => `${a.name}.${a.arch}`.localeCompare(`${b.name}.${b.arch}`));
}
