import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { documentXml, GzipXmlDocument, type DocumentType } from '../../../../src/domain/repo/rpm/gzip-document.js';
import { makeTempDir } from '../../../helpers/tmp.js';

const run = promisify(execFile);
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** A package chunk as the documents hold them; the document never parses it. */
const chunk = (i: number) => `<package pkgid="${i.toString(16).padStart(64, '0')}" name="pkg-${i}"><file>/usr/share/pkg-${i}/file &amp; more</file></package>\n`;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => chunk(from + k));

/** Writes a document from groups of chunks, one piece each, as a publish does; returns its file and facts. */
async function build(type: DocumentType, groups: string[][]) {
  const { document, bytes } = await GzipXmlDocument.begin(type);
  const pieces = await Promise.all(groups.map((g) => document.add(g.join(''))));
  const finished = await document.finish();
  return { document, data: Buffer.concat([bytes, ...pieces, finished.bytes]), facts: finished.facts };
}

describe('GzipXmlDocument', () => {
  it('writes one gzip member whose content, checksums and sizes are what repomd.xml says', async () => {
    const { data, facts } = await build('filelists', [range(0, 500), range(500, 501), range(501, 1200)]);
    const open = gunzipSync(data);
    assert.equal(open.toString('utf8'), documentXml('filelists', range(0, 1200)));
    assert.ok(open.toString('utf8').startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<filelists xmlns="http://linux.duke.edu/metadata/filelists">\n'));
    assert.deepEqual(facts, { checksum: sha256(data), openChecksum: sha256(open), size: data.length, openSize: open.length });
  });

  it('is read by gzip itself (one member, CRC and length checked)', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const { data } = await build('primary', [range(0, 300), range(300, 301)]);
    const path = join(dir, 'primary.xml.gz');
    await writeFile(path, data);
    await run('gzip', ['-t', path]);
    const { stdout } = await run('gzip', ['-dc', path], { maxBuffer: 1 << 26 });
    assert.equal(stdout, documentXml('primary', range(0, 301)));
  });

  it('extended after being finished: the published file cut before its tail, one more piece, equal to writing it all at once', async () => {
    const first = await build('other', [range(0, 400)]);
    const extended = first.document.fork();
    const piece = await extended.add(range(400, 403).join(''));
    const tail = await extended.finish();
    const data = Buffer.concat([first.data.subarray(0, first.document.bodySize), piece, tail.bytes]);
    const atOnce = await build('other', [range(0, 400), range(400, 403)]);
    assert.ok(data.equals(atOnce.data), 'same bytes as a document written with the same pieces');
    assert.deepEqual(tail.facts, atOnce.facts);
    assert.equal(gunzipSync(data).toString('utf8'), documentXml('other', range(0, 403)));
    // The fork left the original as it was: it still describes the first file.
    assert.deepEqual((await first.document.finish()).facts, first.facts);
  });

  it('keeps pieces in call order while they compress side by side', async () => {
    const { document, bytes } = await GzipXmlDocument.begin('primary');
    // A large piece first, small ones after: the small ones finish compressing first.
    const texts = [range(0, 20_000).join(''), chunk(20_000), chunk(20_001), range(20_002, 20_050).join('')];
    const pieces = await Promise.all(texts.map((text) => document.add(text)));
    const { bytes: tail, facts } = await document.finish();
    const data = Buffer.concat([bytes, ...pieces, tail]);
    assert.equal(facts.checksum, sha256(data));
    assert.equal(gunzipSync(data).toString('utf8'), documentXml('primary', range(0, 20_050)));
  });

  it('a piece refers to the XML before it: a document grown one package at a time stays near the size of one written at once', async () => {
    const oneByOne = await build('filelists', [range(0, 100), ...range(100, 400).map((c) => [c])]);
    const atOnce = await build('filelists', [range(0, 400)]);
    assert.equal(oneByOne.facts.openChecksum, atOnce.facts.openChecksum);
    // Each piece still carries its own block header and sync marker; without the dictionary each would repeat the XML it shares with its neighbours (> 4x here).
    assert.ok(oneByOne.data.length < atOnce.data.length * 2.5, `${oneByOne.data.length} bytes one by one, ${atOnce.data.length} at once`);
  });

  it('an empty document is a valid one', async () => {
    const { data, facts } = await build('primary', []);
    assert.equal(gunzipSync(data).toString('utf8'), documentXml('primary', []));
    assert.equal(facts.checksum, sha256(data));
  });
});
