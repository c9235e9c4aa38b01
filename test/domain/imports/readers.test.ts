/**
 * Upstream index readers on real files: the machine's APT lists (skipped when absent) and
 * repositories built here with apt-ftparchive and createrepo_c.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createBoundedDecompressor } from '../../../src/domain/compression.js';
import { packagesCandidates, parseRelease } from '../../../src/domain/imports/apt-release.js';
import { debEntry, lines, stanzaBatches, stanzas } from '../../../src/domain/imports/deb822-stream.js';
import { parseRepomd, PrimaryReader } from '../../../src/domain/imports/rpm-metadata.js';
import { XmlTokenizer } from '../../../src/domain/imports/xml-stream.js';
import type { CatalogEntry, RpmCatalogRelations } from '../../../src/domain/imports/catalog.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { buildAptRepo, buildRpmRepo } from '../../../harness/upstream.js';

async function* text(stream: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for await (const chunk of stream) yield decoder.write(chunk as Buffer);
  yield decoder.end();
}

const LIMITS = { maxOutputBytes: 2 ** 31, maxRatio: 1000 };

describe('XML tokenizer', () => {
  it('gives the same events whatever the chunking', () => {
    const doc = '<?xml version="1.0"?><!-- c --><a x="1 &amp; 2" y=\'>\'><b/>t&lt;x&#65;<![CDATA[<raw>]]></a>';
    const events = (chunk: number) => {
      const out: string[] = [];
      let pending = '';
      const flush = () => {
        if (pending !== '') out.push(`text(${pending})`);
        pending = '';
      };
      const t = new XmlTokenizer({
        open: (n, a) => (flush(), out.push(`<${n} ${JSON.stringify(a)}>`)),
        close: (n) => (flush(), out.push(`</${n}>`)),
        text: (s) => (pending += s),
      });
      for (let i = 0; i < doc.length; i += chunk) t.write(doc.slice(i, i + chunk));
      t.end();
      return out.join('');
    };
    const whole = events(doc.length);
    for (const size of [1, 2, 3, 7]) assert.equal(events(size), whole);
    assert.match(whole, /<a \{"x":"1 & 2","y":">"\}/);
    assert.match(whole, /text\(t<xA<raw>\)/);
  });

  it('refuses document type declarations and unknown entities', () => {
    const run = (doc: string) => () => {
      const t = new XmlTokenizer({ open() {}, close() {}, text() {} });
      t.write(doc);
      t.end();
    };
    assert.throws(run('<!DOCTYPE x [<!ENTITY a "b">]><x/>'), /document type/);
    assert.throws(run('<x>&a;</x>'), /unknown entity/);
    assert.throws(run('<x><y></x>'), /ends inside|unbalanced/);
  });
});

describe('APT indexes', () => {
  const lists = '/var/lib/apt/lists';
  const real = existsSync(lists) ? readdirSync(lists).filter((f) => /_Packages(\.lz4)?$/.test(f)) : [];

  it('streams every paragraph of the machine\'s APT lists', { skip: real.length === 0 ? 'no APT lists on this machine' : false }, async () => {
    for (const file of real) {
      const path = join(lists, file);
      const source = file.endsWith('.lz4') ? spawn('lz4', ['-dc', path]).stdout : createReadStream(path);
      let count = 0;
      const names = new Set<string>();
      for await (const stanza of stanzas(lines(text(source)))) {
        const entry = debEntry(stanza);
        names.add(entry.name);
        count += 1;
      }
      const expected = await new Promise<number>((resolve) => {
        const cmd = file.endsWith('.lz4') ? `lz4 -dc '${path}' | grep -c '^Package:'` : `grep -c '^Package:' '${path}'`;
        const child = spawn('sh', ['-c', cmd]);
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', () => resolve(Number(out.trim())));
      });
      assert.equal(count, expected, file);
      assert.ok(names.size > 0);
    }
  });

  it('parses the machine\'s signed InRelease checksum sections', { skip: !existsSync(lists) || !readdirSync(lists).some((f) => f.endsWith('_InRelease')) }, async () => {
    for (const file of readdirSync(lists).filter((f) => f.endsWith('_InRelease'))) {
      const raw = await readFile(join(lists, file), 'utf8');
      const start = raw.indexOf('\n\n') + 2;
      const body = raw.slice(start, raw.indexOf('\n-----BEGIN PGP SIGNATURE-----') + 1);
      const release = parseRelease(body);
      assert.ok(release.sha256.size > 0, file);
      assert.ok([...release.sha256.keys()].some((k) => k.includes('binary-amd64/Packages')), file);
    }
  });

  let dir: { dir: string; cleanup: () => Promise<void> };
  before(async () => {
    dir = await makeTempDir('tollgate-upstream-');
    await buildAptRepo(dir.dir, null, [
      { name: 'alpha', version: '1.0-1', depends: 'beta (>= 2), gamma | delta', description: 'Alpha tool\n long text' },
      { name: 'beta', version: '2.1-1', provides: 'virtual-beta', multiArch: 'foreign' },
      { name: 'gamma', version: '1:0.5', arch: 'all', preDepends: 'beta' },
    ]);
  });
  after(() => dir.cleanup());

  it('reads a Release file and the Packages.xz it signs', async () => {
    const release = parseRelease(await readFile(join(dir.dir, 'dists/stable/Release'), 'utf8'));
    assert.equal(release.suite, 'stable');
    assert.deepEqual(release.architectures, ['amd64']);
    const [xz] = packagesCandidates('main', 'amd64');
    const signed = release.sha256.get(xz!);
    assert.ok(signed);
    const bytes = await readFile(join(dir.dir, 'dists/stable', xz!));
    assert.equal(createHash('sha256').update(bytes).digest('hex'), signed.sha256);
    assert.equal(bytes.length, signed.size);

    const decompressed = createReadStream(join(dir.dir, 'dists/stable', xz!)).pipe(createBoundedDecompressor('xz', LIMITS));
    const entries: CatalogEntry[] = [];
    for await (const stanza of stanzas(lines(text(decompressed)))) entries.push(debEntry(stanza));
    const alpha = entries.find((e) => e.name === 'alpha')!;
    assert.equal(alpha.version, '1.0-1');
    assert.equal(alpha.summary, 'Alpha tool');
    assert.deepEqual(alpha.relations, { depends: 'beta (>= 2), gamma | delta', preDepends: null, provides: null, multiArch: null });
    assert.match(alpha.location, /^pool\/main\/alpha_1\.0-1_amd64\.deb$/);
    const gamma = entries.find((e) => e.name === 'gamma')!;
    assert.equal(gamma.version, '1:0.5');
    assert.equal(gamma.arch, 'all');
    const deb = await readFile(join(dir.dir, alpha.location));
    assert.equal(createHash('sha256').update(deb).digest('hex'), alpha.sha256);
  });

  it('gives the same paragraphs in batches whatever the chunking', async () => {
    const text = 'Package: a\nVersion: 1\nDescription: x\n more\n\n\nPackage: b\nVersion: 2\n\nPackage: c\nVersion: 3';
    const expected = ['a=1', 'b=2', 'c=3'];
    for (const size of [1, 2, 5, 13, text.length]) {
      const chunks = async function* () {
        for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
      };
      const got: string[] = [];
      for await (const batch of stanzaBatches(chunks())) for (const st of batch) got.push(`${st.get('Package')}=${st.get('Version')}`);
      assert.deepEqual(got, expected, `chunks of ${size}`);
    }
  });

  it('refuses a Release without a SHA256 section or with a malformed line', () => {
    assert.throws(() => parseRelease('Suite: x\n'), /no SHA256/);
    assert.throws(() => parseRelease('Suite: x\nSHA256:\n abc 12 main/Packages\n'), /malformed/);
  });
});

describe('RPM metadata', () => {
  let dir: { dir: string; cleanup: () => Promise<void> };
  before(async () => {
    dir = await makeTempDir('tollgate-upstream-rpm-');
    await buildRpmRepo(dir.dir, null, [
      { name: 'rpm-alpha', version: '1.0', requires: ['rpm-beta >= 2', '/usr/bin/rpm-gamma', '(rpm-delta or rpm-beta)'], summary: 'Alpha & friends' },
      { name: 'rpm-beta', version: '2.5', release: '3', epoch: 1, provides: ['beta-virtual = 7'] },
      { name: 'rpm-gamma', version: '0.1', arch: 'noarch', files: { '/usr/bin/rpm-gamma': { content: '#!/bin/sh\n', mode: 0o755 } } },
    ]);
  });
  after(() => dir.cleanup());

  it('reads repomd.xml and streams primary.xml.gz in small chunks', async () => {
    const repomd = parseRepomd(await readFile(join(dir.dir, 'repodata/repomd.xml'), 'utf8'));
    const primary = repomd.data.find((d) => d.type === 'primary')!;
    assert.equal(primary.checksumType, 'sha256');
    const gz = await readFile(join(dir.dir, primary.location));
    assert.equal(createHash('sha256').update(gz).digest('hex'), primary.checksum);

    const reader = new PrimaryReader();
    const entries: CatalogEntry[] = [];
    const decompressed = createReadStream(join(dir.dir, primary.location), { highWaterMark: 97 }).pipe(createBoundedDecompressor('gzip', LIMITS));
    for await (const chunk of text(decompressed)) {
      for (let i = 0; i < chunk.length; i += 50) {
        reader.write(chunk.slice(i, i + 50));
        entries.push(...reader.take());
      }
    }
    reader.end();
    entries.push(...reader.take());
    assert.deepEqual(entries.map((e) => e.name).sort(), ['rpm-alpha', 'rpm-beta', 'rpm-gamma']);
    const alpha = entries.find((e) => e.name === 'rpm-alpha')!;
    assert.equal(alpha.summary, 'Alpha & friends');
    const rel = alpha.relations as RpmCatalogRelations;
    assert.ok(rel.requires.some((r) => r.name === 'rpm-beta' && r.evr === '2' && r.flags === (4 | 8)));
    assert.ok(rel.requires.some((r) => r.name === '/usr/bin/rpm-gamma'));
    assert.ok(rel.requires.some((r) => r.name === '(rpm-delta or rpm-beta)'));
    const beta = entries.find((e) => e.name === 'rpm-beta')!;
    assert.equal(beta.version, '1:2.5-3');
    assert.ok((beta.relations as RpmCatalogRelations).provides.some((p) => p.name === 'beta-virtual' && p.evr === '7'));
    const gamma = entries.find((e) => e.name === 'rpm-gamma')!;
    assert.ok((gamma.relations as RpmCatalogRelations).files.includes('/usr/bin/rpm-gamma'));
    const rpm = await readFile(join(dir.dir, gamma.location));
    assert.equal(createHash('sha256').update(rpm).digest('hex'), gamma.sha256);
    assert.equal(rpm.length, gamma.size);
  });

  it('refuses a primary.xml whose package count does not match', () => {
    const complete = '<package><name>a</name><arch>noarch</arch><version ver="1" rel="1"/><checksum type="sha256">' + 'a'.repeat(64) +
      '</checksum><size package="3"/><location href="a.rpm"/></package>';
    const reader = new PrimaryReader();
    reader.write(`<metadata packages="2">${complete}</metadata>`);
    assert.equal(reader.take().length, 1);
    assert.throws(() => reader.end(), /declares 2 packages but lists 1/);
    const incomplete = new PrimaryReader();
    assert.throws(() => incomplete.write('<metadata><package><name>a</name></package></metadata>'), /incomplete package entry a/);
  });
});
