/**
 * `tollgate upload` of source packages (built executable against the service in this process):
 * a .dsc sends the files it names from its folder, a .changes the .dsc and its files.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rm } from 'node:fs/promises';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeTempDir } from '../helpers/tmp.js';
import { buildCli, runCli } from '../../harness/cli.js';
import { buildSourcePackage } from '../../harness/source-packages.js';

/** The built client (buildCli: this process's own copy), built in `before`. */
let builtCli: Awaited<ReturnType<typeof buildCli>> | undefined;

const tollgate = (args: string[], env: Record<string, string>) => runCli(builtCli!.main, args, env);

describe('tollgate upload of source packages', () => {
  let t: TestApp;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;

  before(async () => {
    builtCli = await buildCli();
    tmp = await makeTempDir('tollgate-cli-source-');
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    env = { TOLLGATE_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, TOLLGATE_TOKEN: await t.tokenFor('uploader'), XDG_CONFIG_HOME: join(tmp.dir, 'config') };
  });
  after(async () => {
    await t?.close();
    await tmp?.cleanup();
    await builtCli?.remove();
  });

  it('sends the files a .dsc names (exit 0, published), or a .changes with its .dsc; a missing file is the service\'s 422 (exit 4)', async () => {
    const quilt = await buildSourcePackage(join(tmp.dir, 'quilt'), { name: 'cli-src', version: '1:1.0-1', format: '3.0 (quilt)' });
    const run = await tollgate(['upload', quilt.dsc, '--dist', 'jammy', '--sha256', 'auto', '--json'], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const [outcome] = JSON.parse(run.stdout) as Array<{ status: string; name: string; arch: string }>;
    assert.deepEqual([outcome!.status, outcome!.name, outcome!.arch], ['published', 'cli-src', 'source']);

    const viaChanges = await buildSourcePackage(join(tmp.dir, 'changes'), { name: 'cli-other', version: '2.0', format: '3.0 (native)', changes: true });
    const run2 = await tollgate(['upload', viaChanges.changes!, '--dist', 'jammy', '--sha256', 'auto', '--json'], env);
    assert.equal(run2.code, 0, run2.stderr + run2.stdout);
    assert.equal((JSON.parse(run2.stdout) as Array<{ name: string }>)[0]!.name, 'cli-other');

    const missing = await buildSourcePackage(join(tmp.dir, 'missing'), { name: 'cli-missing', version: '1.0', format: '3.0 (native)' });
    await rm(missing.files[0]!);
    const run3 = await tollgate(['upload', missing.dsc, '--dist', 'jammy', '--json'], env);
    assert.equal(run3.code, 4, run3.stderr + run3.stdout);
    assert.match(run3.stdout, /source_file_missing/);
  });
});
