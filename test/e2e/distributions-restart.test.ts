import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../harness/net.js';
import { loginAsInitialAdmin, spawnService, waitUntilReady } from '../../harness/service.js';
import { makeTempDir } from '../helpers/tmp.js';

describe('distributions as data survive a restart, and a definitions file is applied at start', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let service: ChildProcess | null = null;
  let base: string;
  let port: number;
  const dataDir = () => join(work.dir, 'data');
  const file = () => join(work.dir, 'distributions.json');

  const start = async () => {
    // Ed25519: an RSA-4096 key is generated in 5-60 s, and this test is not about the key (it timed out once in CI).
    service = spawnService(dataDir(), port, { DISTRIBUTIONS_FILE: file(), SIGNING_KEY_ALGORITHM: 'ed25519' });
    await waitUntilReady(base);
  };
  const stop = async () => {
    if (!service) return;
    const exited = once(service, 'exit');
    service.kill('SIGTERM');
    await exited;
    service = null;
  };
  const listed = async (token: string) =>
    (await (await fetch(`${base}/distributions`, { headers: { authorization: `Bearer ${token}` } })).json()) as Array<{ codename: string; components: string[]; index_architectures: string[]; private: boolean; up_to_date: boolean }>;

  before(async () => {
    work = await makeTempDir('tollgate-dists-restart-');
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    await writeFile(file(), JSON.stringify({
      distributions: [
        { codename: 'acme-lts', format: 'deb', description: 'Acme LTS', components: ['main', 'contrib'], architectures: ['amd64', 'arm64'] },
        { codename: 'bookworm', architectures: ['amd64', 'arm64'] },
      ],
    }));
  });
  after(async () => {
    await stop();
    await work.cleanup();
  });

  it('creates the file’s distribution and changes the built-in one at the first start', async () => {
    await start();
    const token = await loginAsInitialAdmin(base, dataDir());
    const dists = await listed(token);
    const lts = dists.find((d) => d.codename === 'acme-lts');
    assert.deepEqual([lts?.components, lts?.index_architectures], [['main', 'contrib'], ['amd64', 'arm64']]);
    assert.deepEqual(dists.find((d) => d.codename === 'bookworm')?.index_architectures, ['amd64', 'arm64']);
    const release = await readFile(join(dataDir(), 'repo/apt/dists/acme-lts/Release'), 'utf8');
    assert.match(release, /^Components: main contrib$/m);
  });

  it('keeps a distribution created through the API after a restart, published and up to date', async () => {
    const token = await loginAsInitialAdmin(base, dataDir());
    const created = await fetch(`${base}/distributions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ codename: 'acme-edge', format: 'deb', architectures: ['arm64'], private: true }),
    });
    assert.equal(created.status, 201, await created.text());
    await stop();
    await start();
    const again = await loginAsInitialAdmin(base, dataDir());
    const edge = (await listed(again)).find((d) => d.codename === 'acme-edge');
    assert.ok(edge, 'still listed after the restart');
    assert.deepEqual(edge.index_architectures, ['arm64']);
    assert.equal(edge.private, true);
    assert.equal(edge.up_to_date, true);
    assert.ok(existsSync(join(dataDir(), 'repo/apt/dists/acme-edge/main/binary-arm64/Packages.xz')));
    // The file's definitions are applied again at this start: unchanged, so nothing is rewritten.
    const audit = await (await fetch(`${base}/audit/logs?action=DISTRIBUTION_UPDATE`, { headers: { authorization: `Bearer ${again}` } })).json() as { items?: unknown[]; total?: number };
    assert.equal(audit.total ?? audit.items?.length, 1, 'bookworm was changed once, at the first start');
  });
});
