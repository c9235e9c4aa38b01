/**
 * Real Debian packages, not fixtures: a sample of the machine's APT cache (filled by every
 * `apt-get install`) is uploaded, each index stanza is compared with what `apt-ftparchive
 * packages` writes for the same files (and the Contents index with `apt-ftparchive contents`), and a
 * sandboxed apt-get downloads every one of them back, byte for byte, and apt-file searches them. Skipped, saying so, where the cache is empty.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { aptSandbox, exec } from '../helpers/apt.js';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../../harness/multipart.js';
import { makeTempDir } from '../helpers/tmp.js';

const CACHE = '/var/cache/apt/archives';
const MAX_BYTES = 4 * 1024 * 1024;

/**
 * A deterministic sample that covers the spellings toy fixtures miss: epochs (`%3a` in cache file
 * names), `+` (+b1, +deb12u1, +dfsg) and `~`, plus plain ones; one version per package name.
 */
function sampleCache(): string[] {
  let names: string[];
  try {
    names = readdirSync(CACHE).filter((f) => /_(amd64|all)\.deb$/.test(f)).sort();
  } catch {
    return [];
  }
  const small = names.filter((f) => statSync(join(CACHE, f)).size <= MAX_BYTES);
  const chosen = new Map<string, string>();
  const take = (match: (f: string) => boolean, count: number) => {
    let taken = 0;
    for (const f of small) {
      if (taken >= count) return;
      const name = f.split('_')[0]!;
      if (chosen.has(name) || !match(f)) continue;
      chosen.set(name, f);
      taken++;
    }
  };
  take((f) => f.includes('%3a'), 8);
  take((f) => f.includes('~'), 6);
  take((f) => f.includes('+'), 12);
  // Spread the plain ones over the alphabet rather than taking the first few.
  const plain = small.filter((f) => !/%3a|~|\+/.test(f));
  const step = Math.max(1, Math.floor(plain.length / 10));
  take((f) => plain.indexOf(f) % step === 0, 10);
  return [...chosen.values()].map((f) => join(CACHE, f));
}

/** Stanzas of a Packages file keyed by `name version arch`. */
function stanzas(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const stanza of text.split(/\n\n+/).filter((s) => s.trim())) {
    const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(stanza)?.[1];
    map.set(`${field('Package')} ${field('Version')} ${field('Architecture')}`, `${stanza.trimEnd()}\n`);
  }
  return map;
}

const sha256 = async (path: string) => createHash('sha256').update(await readFile(path)).digest('hex');

const sample = sampleCache();

describe('real Debian packages from the APT cache', { skip: sample.length === 0 ? `no packages in ${CACHE}` : false }, () => {
  let t: TestApp;
  let base: string;
  let work: { dir: string; cleanup: () => Promise<void> };
  const uploaded = new Map<string, { path: string; name: string; version: string; arch: string }>();

  before(async () => {
    work = await makeTempDir('tollgate-real-debs-');
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const admin = await t.tokenFor('admin');
    for (const path of sample) {
      const form = await multipartBody({ distribution: 'bookworm', sha256: await sha256(path) }, { path });
      const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
      assert.equal(res.statusCode, 201, `${path}: ${res.body}`);
      const body = res.json() as { status: string; name: string; version: string; arch: string };
      assert.equal(body.status, 'published', `${path}: ${JSON.stringify(body)}`);
      uploaded.set(`${body.name} ${body.version} ${body.arch}`, { path, name: body.name, version: body.version, arch: body.arch });
    }
    // Their payloads (the file lists for Contents) are read behind the uploads.
    await t.ctx.repo.fileLists.idle();
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('samples versions with epochs, + and ~', () => {
    const versions = [...uploaded.values()].map((u) => u.version);
    assert.ok(versions.length >= 10, `only ${versions.length} packages sampled`);
    assert.ok(versions.some((v) => v.includes('+')), 'a version with +');
    assert.ok(versions.some((v) => /^\d+:/.test(v)), 'a version with an epoch');
  });

  it('writes each stanza exactly as apt-ftparchive does for the same files', async () => {
    const aptRoot = join(t.dataDir, 'repo', 'apt');
    const reference = await exec('apt-ftparchive', ['packages', 'pool'], aptRoot);
    assert.equal(reference.code, 0, reference.stderr);
    const theirs = stanzas(reference.stdout);
    const ours = stanzas(await readFile(join(aptRoot, 'dists', 'bookworm', 'main', 'binary-amd64', 'Packages'), 'utf8'));
    assert.equal(ours.size, uploaded.size);
    assert.deepEqual([...ours.keys()].sort(), [...theirs.keys()].sort());
    for (const [key, stanza] of ours) assert.equal(stanza, theirs.get(key), key);
  });

  it('lists in Contents-amd64 every file apt-ftparchive contents lists for the same packages', async () => {
    const aptRoot = join(t.dataDir, 'repo', 'apt');
    const reference = await exec('apt-ftparchive', ['contents', 'pool'], aptRoot);
    assert.equal(reference.code, 0, reference.stderr);
    const ours = gunzipSync(await readFile(join(aptRoot, 'dists', 'bookworm', 'main', 'Contents-amd64.gz'))).toString();
    const theirs = contentsPairs(reference.stdout);
    assert.ok(theirs.size > 100, `only ${theirs.size} files listed`);
    assert.deepEqual(contentsPairs(ours), theirs);
  });

  it('lets a sandboxed apt-get download every package, byte for byte', async () => {
    const keyring = join(work.dir, 'tollgate.gpg');
    await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
    const apt = await aptSandbox(join(work.dir, 'client'));
    await apt.setSource(`deb [signed-by=${keyring}] ${base}/repo/apt bookworm main`);
    await apt.updateCleanly();
    for (const { name, version, arch } of uploaded.values()) {
      const download = await apt.download(`${name}:${arch === 'all' ? 'amd64' : arch}=${version}`);
      assert.equal(download.code, 0, `${name}=${version}: ${download.stderr}`);
    }
    const files = await readdir(join(apt.dir, 'downloads'));
    assert.equal(files.length, uploaded.size);
    const original = new Map<string, string>();
    for (const u of uploaded.values()) original.set(await sha256(u.path), u.path);
    for (const file of files) {
      const digest = await sha256(join(apt.dir, 'downloads', file));
      assert.ok(original.has(digest), `${file} differs from every uploaded file`);
      original.delete(digest);
    }
    assert.equal(original.size, 0);
    // apt-get update fetched the Contents index too: apt-file finds a real package's file.
    const [name, path] = [...contentsPairs(gunzipSync(await readFile(join(t.dataDir, 'repo', 'apt', 'dists', 'bookworm', 'main', 'Contents-amd64.gz'))).toString())][0]!.split('\t');
    const found = await apt.fileSearch(`/${path}`);
    assert.equal(found.code, 0, found.stderr);
    assert.ok(found.stdout.split('\n').includes(`${name}: /${path}`), found.stdout);
  });
});

/** `package\tpath` for every line, a line naming several packages (`a,b`, `section/a`) counted once per package. */
function contentsPairs(text: string): Set<string> {
  const pairs = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^(.*?)\s+(\S+)$/.exec(line);
    if (!m) continue;
    for (const pkg of m[2]!.split(',')) pairs.add(`${pkg.slice(pkg.lastIndexOf('/') + 1)}\t${m[1]}`);
  }
  return pairs;
}
