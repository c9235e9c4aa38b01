/**
 * The sync's Packages reader (debEntryBatches) against the general one it stands in for:
 * stanzaBatches + debEntry. Same entries on the machine's APT lists (skipped when absent) and on
 * odd paragraphs, same error on bad ones, whatever the chunking.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { debEntry, debEntryBatches, stanzaBatches } from '../../../src/domain/imports/deb822-stream.js';
import type { CatalogEntry } from '../../../src/domain/imports/catalog.js';

const SHA = 'ab'.repeat(32);
const para = (name: string, extra = '') => `Package: ${name}\nVersion: 1.0-1\nArchitecture: amd64\n${extra}Filename: pool/${name}.deb\nSize: 10\nSHA256: ${SHA}\nDescription: ${name} tool\n more text\n`;

async function* chunked(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

type Outcome = { entries: CatalogEntry[] } | { error: { code: unknown; message: string } };

async function outcome(read: () => Promise<CatalogEntry[]>): Promise<Outcome> {
  try {
    return { entries: await read() };
  } catch (error) {
    return { error: { code: (error as { code?: unknown }).code, message: (error as Error).message } };
  }
}

async function general(chunks: AsyncIterable<string>): Promise<CatalogEntry[]> {
  const out: CatalogEntry[] = [];
  for await (const batch of stanzaBatches(chunks)) for (const stanza of batch) out.push(debEntry(stanza));
  return out;
}

async function fast(chunks: AsyncIterable<string>): Promise<CatalogEntry[]> {
  const out: CatalogEntry[] = [];
  for await (const batch of debEntryBatches(chunks)) out.push(...batch);
  return out;
}

const CASES: Record<string, string> = {
  'plain paragraphs': `${para('a')}\n${para('b')}\n${para('c')}`,
  'no final newline, several blank lines, blank lines with spaces and tabs': `\n\n${para('a')}\n \t\n\n${para('b').slice(0, -1)}`,
  'relations, provides, multi-arch, folded depends': para('a', 'Depends: libc6 (>= 2.34),\n libfoo | libbar\nPre-Depends: dpkg (>= 1.19)\nProvides: x-a (= 1), y-a\nMulti-Arch: foreign\n'),
  'field names in other cases, unknown fields, odd spacing': 'package:   spaced  \nVERSION:1:2.3\nArchitecture: all\nX-Custom-Field: anything: with colons\n continued\nfilename: pool/x.deb\nsize: 42\nSha256: ' + SHA.toUpperCase() + '\ndescription:\n long only\n',
  'empty description and values with trailing spaces': `Package: a  \nVersion: 1 \nArchitecture: amd64\nFilename: pool/a.deb\nSize: 1\nSHA256: ${SHA}\nDescription:   \nDepends: b,  \n c  \n`,
  'continuation of the last kept field with unicode spaces': `${para('a').slice(0, -1)}\n \u00a0\nDepends: x\n \u00a0\n`,
  'CRLF line endings': para('a').replace(/\n/g, '\r\n') + '\r\n' + para('b').replace(/\n/g, '\r\n'),
  'CR in one paragraph only': `${para('a')}\n${para('b', 'Depends: c\r\n')}`,
  'a duplicate field': `${para('a')}\n${para('b', 'version: 2\n')}`,
  'a comment line': `${para('a', '# comment\n')}`,
  'a continuation line first': ` leading\n${para('a')}`,
  'a line without a colon': para('a', 'garbage line\n'),
  'an invalid field name': para('a', '-Bad: x\n'),
  'a field name with a space': para('a', 'Bad Name: x\n'),
  'an empty field name': para('a', ': x\n'),
  'a missing Filename': 'Package: a\nVersion: 1\nArchitecture: all\nSize: 1\nSHA256: ' + SHA + '\n',
  'an invalid Size': para('a').replace('Size: 10', 'Size: 1e3'),
  'an invalid SHA256': para('a').replace(SHA, 'xyz'),
  'too many fields': para('a', Array.from({ length: 1000 }, (_, i) => `X-F${i}: v\n`).join('')),
  'just under the field limit': para('a', Array.from({ length: 990 }, (_, i) => `X-F${i}: v\n`).join('')),
  'a field repeated in another paragraph is no duplicate': `${para('a', 'Tag: t\n')}\n${para('b', 'Tag: t\n')}`,
};

describe('Packages reader of the sync (debEntryBatches)', () => {
  for (const [what, text] of Object.entries(CASES)) {
    it(`agrees with stanzaBatches + debEntry: ${what}`, async () => {
      const expected = await outcome(() => general(chunked(text, text.length)));
      for (const size of [1, 2, 3, 7, 64, text.length]) {
        assert.deepEqual(await outcome(() => fast(chunked(text, size))), expected, `chunks of ${size}`);
      }
    });
  }

  it('refuses a paragraph or a line too long as stanzaBatches does', async () => {
    const long = `Package: a\nDescription: x\n${' y\n'.repeat(1_500_000)}`;
    assert.deepEqual(await outcome(() => fast(chunked(long, 65536))), await outcome(() => general(chunked(long, 65536))));
    const line = `Package: ${'a'.repeat(5 * 1024 * 1024)}`;
    assert.deepEqual(await outcome(() => fast(chunked(line, 65536))), await outcome(() => general(chunked(line, 65536))));
  });

  const lists = '/var/lib/apt/lists';
  const real = existsSync(lists) ? readdirSync(lists).filter((f) => /_Packages(\.lz4)?$/.test(f)) : [];
  it('gives the same entries as stanzaBatches + debEntry on the machine\'s APT lists', { skip: real.length === 0 ? 'no APT lists on this machine' : false }, async () => {
    const decode = async function* (stream: Readable): AsyncGenerator<string> {
      const decoder = new StringDecoder('utf8');
      for await (const chunk of stream) yield decoder.write(chunk as Buffer);
      yield decoder.end();
    };
    const open = (file: string) => (file.endsWith('.lz4') ? spawn('lz4', ['-dc', join(lists, file)]).stdout : createReadStream(join(lists, file)));
    for (const file of real) {
      const expected = await general(decode(open(file)));
      const got = await fast(decode(open(file)));
      assert.equal(got.length, expected.length, file);
      for (let i = 0; i < got.length; i++) assert.deepEqual(got[i], expected[i], `${file}: paragraph ${i + 1}`);
      // Serialised as the catalog stores them, too.
      assert.equal(JSON.stringify(got.map((e) => e.relations)), JSON.stringify(expected.map((e) => e.relations)), file);
    }
  });
});
