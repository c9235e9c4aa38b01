/**
 * SBOMs of real Debian packages (issue 10): a Go program, Python libraries and an npm or Java
 * package from the machine's APT cache are uploaded, and the embedded components of each
 * package's SBOM are checked against what the files themselves declare, read here independently
 * of src/domain/sbom/inner (own Go build info reader, own core-metadata header reader, unzip -Z1
 * for jars). Skipped, saying so, where the cache is empty; each kind is skipped when absent.
 * Debian builds Go programs in GOPATH mode, so their build info names the main package path and
 * no modules: that path is what is compared (test/http/sbom.test.ts covers `mod`/`dep` lines).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { readdir, readFile, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../../harness/multipart.js';
import { cyclonedxProblems, spdxProblems } from '../helpers/sbom-validate.js';
import { makeTempDir } from '../helpers/tmp.js';

const CACHE = '/var/cache/apt/archives';
/** Debian packages of programs written in Go (their binaries carry build info). */
const GO_PROGRAMS = ['etcd-server', 'aptly', 'prometheus', 'restic', 'rclone', 'hugo', 'gh', 'fzf', 'golang-1.19-go', 'golang-1.21-go'];
const MAX_BYTES = 32 * 1024 * 1024;

function cacheFiles(): string[] {
  try {
    return readdirSync(CACHE).filter((f) => /_(amd64|all)\.deb$/.test(f)).sort();
  } catch {
    return [];
  }
}

const files = cacheFiles();
const small = (f: string) => statSync(join(CACHE, f)).size <= MAX_BYTES;
const nameOf = (f: string) => f.split('_')[0]!;
/** The first cache file per wanted name, in the order of `names`. */
const pick = (names: readonly string[]) => names.map((n) => files.find((f) => nameOf(f) === n && small(f))).find(Boolean) ?? null;
const firstMatching = (re: RegExp, count: number) => files.filter((f) => re.test(nameOf(f)) && small(f)).slice(0, count);

const goDeb = pick(GO_PROGRAMS);
const pythonDebs = firstMatching(/^python3-(attr|click|certifi|idna|six|jinja2|colorama|babel|chardet|dateutil)$/, 3);
const npmDebs = firstMatching(/^node-/, 2);
const javaDebs = firstMatching(/-java$/, 1);

/** Kind of what a component should be: ecosystem, name, version ("" when none). */
const key = (ecosystem: string, name: string, version: string | null | undefined) => `${ecosystem} ${name} ${version ?? ''}`;

/** Go build info, read the way `go version -m` does for Go 1.18+ binaries (inline strings). */
function goModules(bin: Buffer): string[] | null {
  const at = bin.indexOf(Buffer.from('\xff Go buildinf:', 'latin1'));
  if (at < 0 || (bin[at + 15]! & 2) === 0) return null;
  let p = at + 32;
  const uvarint = () => {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bin[p++]!;
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
    }
  };
  const goVersionLength = uvarint(); // then the Go version itself
  p += goVersionLength;
  const length = uvarint();
  const raw = bin.toString('utf8', p, p + length);
  // 16-byte sentinels around the text, as runtime/debug strips them.
  const text = raw.length >= 33 ? raw.slice(16, -16) : raw;
  const out: string[] = [];
  let path: string | null = null;
  const mods: Array<[string, string]> = [];
  for (const line of text.split('\n')) {
    const f = line.split('\t');
    if (f[0] === 'path') path = f[1]!;
    else if (f[0] === 'mod' || f[0] === 'dep') mods.push([f[1]!, f[0] === 'mod' && f[2] === '(devel)' ? '' : f[2] ?? '']);
    else if (f[0] === '=>') mods[mods.length - 1] = [f[1]!, f[2] ?? ''];
  }
  if (!mods.length && path) out.push(key('golang', path, ''));
  for (const [m, v] of mods) out.push(key('golang', m, v));
  return out;
}

/** Name and Version of core metadata (RFC 822 headers up to the first blank line). */
function coreMetadata(text: string): string {
  const head = text.split(/\r?\n\r?\n/, 1)[0]!;
  const field = (f: string) => new RegExp(`^${f}:[ \\t]*(.*?)\\s*$`, 'mi').exec(head)?.[1] ?? '';
  return key('pypi', field('Name'), field('Version'));
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

function extract(deb: string, into: string): void {
  const r = spawnSync('dpkg-deb', ['-x', join(CACHE, deb), into]);
  assert.equal(r.status, 0, String(r.stderr));
}

/** What the extracted files of `deb` declare, as `key()` strings, relative to install paths. */
async function declared(root: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const file of await walk(root)) {
    const rel = file.slice(root.length);
    if (/\.dist-info\/METADATA$|\.egg-info\/PKG-INFO$/.test(rel) || (/\.egg-info$/.test(rel) && (await lstat(file)).isFile())) {
      out.add(coreMetadata(await readFile(file, 'utf8')));
    } else if (/^\/usr\/share\/nodejs\/(@[^/]+\/)?[^/]+\/package\.json$|\/node_modules\/(@[^/]+\/)?[^/]+\/package\.json$/.test(rel)) {
      const json = JSON.parse(await readFile(file, 'utf8')) as { name?: string; version?: string };
      if (json.name && json.version) out.add(key('npm', json.name.replace(/^@[^/]+\//, ''), json.version));
    } else if (/\.jar$/.test(rel)) {
      const list = spawnSync('unzip', ['-Z1', file], { encoding: 'utf8' });
      for (const member of list.stdout.split('\n').filter((m) => /^META-INF\/maven\/[^/]+\/[^/]+\/pom\.properties$/.test(m))) {
        const props = spawnSync('unzip', ['-p', file, member], { encoding: 'utf8' }).stdout;
        const value = (k: string) => new RegExp(`^${k}=(.*)$`, 'm').exec(props)?.[1]?.trim() ?? '';
        out.add(key('maven', value('artifactId'), value('version')));
      }
    } else if ((await lstat(file)).mode & 0o111) {
      const modules = goModules(await readFile(file));
      for (const m of modules ?? []) out.add(m);
    }
  }
  return out;
}

for (const backend of backends()) describe(`SBOMs of real Debian packages from the APT cache (${backend})`, { skip: files.length === 0 ? `no packages in ${CACHE}` : false }, () => {
  let t: TestApp;
  let auditor: string;
  let work: { dir: string; cleanup: () => Promise<void> };
  const uploaded = new Map<string, { name: string; version: string }>();

  before(async () => {
    work = await makeTempDir('tollgate-sbom-real-');
    t = await startTestApp({ backend });
    const admin = await t.tokenFor('admin');
    auditor = await t.tokenFor('auditor');
    for (const deb of [goDeb, ...pythonDebs, ...npmDebs, ...javaDebs].filter((d): d is string => d !== null)) {
      const path = join(CACHE, deb);
      const sha256 = createHash('sha256').update(await readFile(path)).digest('hex');
      const form = await multipartBody({ distribution: 'bookworm', sha256 }, { path });
      const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
      assert.equal(res.statusCode, 201, `${deb}: ${res.body}`);
      const body = res.json() as { name: string; version: string };
      uploaded.set(deb, { name: body.name, version: body.version });
    }
  });
  after(async () => {
    await t?.close();
    await work?.cleanup();
  });

  /** The SBOM's inner components as `key()` strings, after validating both formats. */
  async function sbomComponents(deb: string): Promise<Set<string>> {
    const { name, version } = uploaded.get(deb)!;
    const url = `/sbom/${encodeURIComponent(name)}/${encodeURIComponent(version)}?distribution=bookworm`;
    const cdx = await t.app.inject({ method: 'GET', url: `${url}&format=cyclonedx`, headers: bearer(auditor) });
    assert.equal(cdx.statusCode, 200, cdx.body);
    assert.deepEqual(await cyclonedxProblems(cdx.body), [], deb);
    const spdx = await t.app.inject({ method: 'GET', url: `${url}&format=spdx`, headers: bearer(auditor) });
    assert.equal(spdx.statusCode, 200, spdx.body);
    assert.deepEqual(spdxProblems(spdx.json()), [], deb);
    const root = cdx.json().metadata.component as { components?: Array<{ name: string; version?: string; properties: Array<{ name: string; value: string }> }> };
    return new Set((root.components ?? []).map((c) => key(c.properties.find((p) => p.name === 'tollgate:ecosystem')!.value, c.name, c.version)));
  }

  async function check(deb: string, ecosystem: string, expectSome: boolean): Promise<void> {
    const dir = join(work.dir, deb);
    extract(deb, dir);
    const expected = new Set([...(await declared(dir))].filter((k) => k.startsWith(`${ecosystem} `)));
    if (expectSome) assert.ok(expected.size > 0, `${deb} declares no ${ecosystem} component: the test's own reader found nothing`);
    const found = new Set([...(await sbomComponents(deb))].filter((k) => k.startsWith(`${ecosystem} `)));
    assert.deepEqual([...found].sort(), [...expected].sort(), deb);
  }

  it('lists the Go modules a real Go program was built with, as its build info says', { skip: goDeb ? false : `no Go program (${GO_PROGRAMS.join(', ')}) in ${CACHE}` }, async () => {
    await check(goDeb!, 'golang', true);
  });

  it('lists the Python distributions of python3-* packages by their METADATA / PKG-INFO name and version', { skip: pythonDebs.length ? false : `no python3-* package in ${CACHE}` }, async () => {
    for (const deb of pythonDebs) await check(deb, 'pypi', true);
  });

  it('lists the npm modules of node-* packages by their package.json', { skip: npmDebs.length ? false : `no node-* package in ${CACHE}` }, async () => {
    for (const deb of npmDebs) await check(deb, 'npm', true);
  });

  it('lists the Maven artifacts of *-java jars exactly as their pom.properties say (none when Debian stripped them)', { skip: javaDebs.length ? false : `no *-java package in ${CACHE}` }, async () => {
    for (const deb of javaDebs) await check(deb, 'maven', false);
  });
});
