/**
 * The install commands handed to users are pasted into a root shell: whatever the values (a
 * base URL stored before validation existed, a distribution added by configuration, a package
 * name), each must reach the program it is meant for as one literal argument. The commands are
 * parsed with `sh -n`, then run by `sh -c` with `sudo`, `tee`, `curl`, `apt-get` and `dnf`
 * replaced by recorders in a temp folder, so nothing is installed or written outside it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findDistribution, type Distribution } from '../../src/domain/distributions.js';
import { installInstructions } from '../../src/services/packages/install.js';
import { makeTempDir } from '../helpers/tmp.js';

let dir: string;
let cleanup: () => Promise<void>;

// Each call leaves <n>.<program>.args (NUL-separated arguments) and, for tee, <n>.tee.data. The
// two sides of `curl … | tee …` start in either order: tee takes its number only once it has read
// all its input, so after curl has recorded its call (a shared count had given both the same
// number, or tee the first, on a loaded machine).
const RECORDER = `#!/bin/sh
name=$(basename "$0")
if [ "$name" = tee ]; then data=$(mktemp "$REC/.data.XXXXXX"); cat > "$data"; fi
n=$(ls "$REC" | grep -c '\\.args$')
printf '%s\\0' "$@" > "$REC/$n.$name.args"
if [ "$name" = tee ]; then mv "$data" "$REC/$n.tee.data"; fi
if [ "$name" = curl ]; then printf 'KEYDATA'; fi
exit 0
`;

before(async () => {
  ({ dir, cleanup } = await makeTempDir('tollgate-install-'));
  await writeFile(join(dir, 'recorder'), RECORDER);
  spawnSync('mkdir', ['-p', join(dir, 'bin'), join(dir, 'work')]);
  for (const program of ['tee', 'curl', 'apt-get', 'dnf']) {
    await writeFile(join(dir, 'bin', program), RECORDER);
    await chmod(join(dir, 'bin', program), 0o755);
  }
  await writeFile(join(dir, 'bin', 'sudo'), '#!/bin/sh\nexec "$@"\n');
  await chmod(join(dir, 'bin', 'sudo'), 0o755);
});
after(() => cleanup());

interface Call {
  program: string;
  args: string[];
  data?: string;
}

/** Runs one command in a fresh record folder; answers the recorded calls in order. */
async function run(command: string, rec: string): Promise<Call[]> {
  const parsed = spawnSync('sh', ['-n', '-c', command], { encoding: 'utf8' });
  assert.equal(parsed.status, 0, `sh -n refused: ${command}\n${parsed.stderr}`);
  spawnSync('mkdir', ['-p', rec]);
  const result = spawnSync('sh', ['-c', command], {
    cwd: join(dir, 'work'),
    encoding: 'utf8',
    env: { PATH: `${join(dir, 'bin')}:/usr/bin:/bin`, REC: rec },
  });
  assert.equal(result.status, 0, `${command}\n${result.stderr}`);
  const files = (await readdir(rec)).filter((f) => f.endsWith('.args')).sort((a, b) => parseInt(a) - parseInt(b));
  const calls: Call[] = [];
  for (const file of files) {
    const [n, program] = file.split('.');
    const args = (await readFile(join(rec, file), 'utf8')).split('\0').slice(0, -1);
    const data = program === 'tee' ? await readFile(join(rec, `${n}.tee.data`), 'utf8') : undefined;
    calls.push({ program: program!, args, ...(data !== undefined ? { data } : {}) });
  }
  return calls;
}

async function runAll(commands: string[], label: string): Promise<Call[]> {
  const calls: Call[] = [];
  for (const [i, command] of commands.entries()) calls.push(...(await run(command, join(dir, 'rec', label, String(i)))));
  assert.deepEqual(await readdir(join(dir, 'work')), [], 'a command wrote into its working folder: something was injected');
  return calls;
}

const HOSTILE_BASES = [
  "http://evil.example/'; touch pwned; echo '",
  'http://evil.example/$(touch pwned)',
  'http://evil.example/`touch pwned`',
  'http://evil.example/ > pwned',
  'http://evil.example/\nEOF\ntouch pwned\n',
  'http://evil.example/\\c; touch pwned',
];

describe('install commands quote every value for sh', () => {
  const jammy = findDistribution('jammy')!;
  const rocky = findDistribution('rocky9')!;

  it('plain values: the APT commands reach curl, tee and apt-get as given', async () => {
    const out = installInstructions('https://repo.example.org', jammy, { name: 'hello', version: '1:2.0+dfsg-1~bpo1', arch: 'amd64' }, 'alice');
    const calls = await runAll(out.commands, 'plain-deb');
    assert.deepEqual(calls.map((c) => c.program), ['curl', 'tee', 'tee', 'apt-get', 'apt-get']);
    assert.deepEqual(calls[0]!.args, ['-fsSL', 'https://repo.example.org/repo/keys/tollgate.gpg']);
    assert.deepEqual(calls[1]!.args, ['/usr/share/keyrings/tollgate.gpg']);
    assert.equal(calls[1]!.data, 'KEYDATA');
    assert.deepEqual(calls[2]!.args, ['/etc/apt/sources.list.d/tollgate-jammy.list']);
    assert.equal(calls[2]!.data, `${out.source_line}\n`);
    assert.deepEqual(calls[4]!.args, ['install', 'hello=1:2.0+dfsg-1~bpo1']);
  });

  it('plain values: the RPM .repo file reaches tee byte for byte', async () => {
    const out = installInstructions('https://repo.example.org', rocky, { name: 'hello', version: '2.1+git20240101~rc1-3.el9', arch: 'x86_64' }, 'alice');
    const calls = await runAll(out.commands, 'plain-rpm');
    assert.deepEqual(calls.map((c) => c.program), ['tee', 'dnf']);
    assert.deepEqual(calls[0]!.args, ['/etc/yum.repos.d/tollgate-rocky9.repo']);
    assert.equal(calls[0]!.data, out.repo_file);
    assert.deepEqual(calls[1]!.args, ['install', 'hello-2.1+git20240101~rc1-3.el9.x86_64']);
  });

  for (const [i, base] of HOSTILE_BASES.entries()) {
    it(`a hostile base URL stays one argument: ${JSON.stringify(base)}`, async () => {
      const deb = installInstructions(base, jammy, { name: 'hello', version: '1.0', arch: 'amd64' }, 'alice');
      const debCalls = await runAll(deb.commands, `hostile-deb-${i}`);
      assert.deepEqual(debCalls[0]!.args, ['-fsSL', `${base}/repo/keys/tollgate.gpg`]);
      assert.equal(debCalls[2]!.data, `${deb.source_line}\n`);
      const rpm = installInstructions(base, rocky, { name: 'hello', version: '1.0-1', arch: 'x86_64' }, 'alice');
      const rpmCalls = await runAll(rpm.commands, `hostile-rpm-${i}`);
      assert.deepEqual(rpmCalls.map((c) => c.program), ['tee', 'dnf']);
      assert.equal(rpmCalls[0]!.data, rpm.repo_file);
    });
  }

  it('hostile package names, versions and distribution names stay one argument', async () => {
    const odd: Distribution = { ...jammy, codename: "x'; touch pwned; '" };
    const out = installInstructions('https://repo.example.org', odd, { name: "a'b", version: '$(touch pwned)', arch: 'amd64' }, 'alice');
    const calls = await runAll(out.commands, 'hostile-names');
    assert.deepEqual(calls[2]!.args, ["/etc/apt/sources.list.d/tollgate-x'; touch pwned; '.list"]);
    assert.deepEqual(calls.at(-1)!.args, ['install', "a'b=$(touch pwned)"]);
    const oddRpm: Distribution = { ...rocky, codename: 'r`touch pwned`' };
    const rpm = installInstructions('https://repo.example.org', oddRpm, { name: 'p;q', version: '1.0-1', arch: 'x86_64' }, 'alice');
    const rpmCalls = await runAll(rpm.commands, 'hostile-rpm-names');
    assert.deepEqual(rpmCalls[0]!.args, ['/etc/yum.repos.d/tollgate-r`touch pwned`.repo']);
    assert.deepEqual(rpmCalls[1]!.args, ['install', 'p;q-1.0-1.x86_64']);
  });
});
