/**
 * bench/apt-append: where one publish append's time goes (the serial path of tiny uploads).
 *
 *   npx tsx bench/apt-append.ts [--packages 2000] [--appends 60] [--batch 4] [--rest 0] [--key rsa|ed25519] [--no-sync] [--no-spares]
 *
 * Publishes `--packages` synthetic stanzas in full, then `--appends` appends of `--batch` stanzas
 * each through the APT publisher itself (no service, no database), fsync on, and prints the median
 * and p90 of each stage the publisher times (compress = the appended index variants compressed
 * and hashed, sign = signing Release while those variants are written, with when each side was
 * done, write = Release/InRelease/Release.gpg), the mean cycle (appends back to back, by-hash
 * pruning included: it runs after an append answers, before the next starts), the process's CPU time per
 * append, and the system calls per append when run under `strace -c -f`. `--rest <ms>` waits that
 * long after each append's clean-up before the next one (uploads arriving one at a time, not in a
 * burst), once the spare copies made after the previous append are ready; the mean cycle then
 * leaves the pauses out. `--no-spares`: every append copies the files it extends itself.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { appendAptDistribution, aptPublishingSettled, publishAptDistribution, type AptPublishOptions, type AptPublishResult } from '../src/adapters/storage/apt-publisher.js';
import { OpenPgpSigner } from '../src/adapters/signing/openpgp-signer.js';
import { SpareCopies } from '../src/adapters/storage/spare-copies.js';
import { textTable } from './lib/table.js';
import { numberArg as arg } from './lib/args.js';

const packages = arg('packages', 2000);
const appends = arg('appends', 60);
const batch = arg('batch', 4);
const rest = arg('rest', 0);
const keyType = process.argv.includes('--key') ? process.argv[process.argv.indexOf('--key') + 1]! : 'rsa';
const sync = !process.argv.includes('--no-sync');

function stanza(i: number): string {
  const name = `pkg${String(i).padStart(6, '0')}`;
  return [
    `Package: ${name}`, 'Version: 1.5.0+ds1-1+b4', 'Architecture: amd64', 'Maintainer: Bench <bench@example.org>',
    'Installed-Size: 120', 'Depends: libc6 (>= 2.34), libssl3 (>= 3.0.0)', 'Section: utils', 'Priority: optional',
    `Filename: pool/main/p/${name}/${name}_1.5.0+ds1-1+b4_amd64.deb`, 'Size: 2048',
    `MD5sum: ${i.toString(16).padStart(32, '0')}`, `SHA1: ${i.toString(16).padStart(40, '0')}`,
    `SHA256: ${i.toString(16).padStart(64, '0')}`, `Description: synthetic package ${i}`, ' for the append bench.',
  ].join('\n');
}

const { privateKey } = await openpgp.generateKey(
  keyType === 'ed25519'
    ? { type: 'ecc', curve: 'ed25519Legacy' as never, userIDs: [{ name: 'Bench', email: 'bench@example.org' }], format: 'armored' }
    : { type: 'rsa', rsaBits: 4096, userIDs: [{ name: 'Bench', email: 'bench@example.org' }], format: 'armored' },
);
const signer = await OpenPgpSigner.fromArmored(privateKey, '');
const root = await mkdtemp(join(tmpdir(), 'apt-append-'));
const spares = process.argv.includes('--no-spares') ? undefined : new SpareCopies();
const base: AptPublishOptions = { repoRoot: root, codename: 'bench', signer, origin: 'Bench', label: 'Bench', sync, ...(spares ? { spares } : {}) };
const entry = (i: number) => ({ component: 'main', arch: 'amd64', stanza: stanza(i), contents: `usr/bin/pkg${i}\t\t\tutils/pkg${i}\n` });

let result: AptPublishResult = await publishAptDistribution({ ...base, entries: Array.from({ length: packages }, (_, i) => entry(i)) });
const samples: { compress: number; sign: number; signed: number; filesWritten: number; write: number; total: number; cpu: number }[] = [];
await aptPublishingSettled(root, 'bench');
const started = performance.now();
for (let k = 0; k < appends; k += 1) {
  if (rest > 0) {
    await aptPublishingSettled(root, 'bench');
    await spares?.settled();
    await new Promise((resolve) => setTimeout(resolve, rest));
  }
  const first = packages + k * batch;
  const cpu = process.cpuUsage();
  const next = await appendAptDistribution({ ...base, maxAppends: appends + 1, entries: Array.from({ length: batch }, (_, i) => entry(first + i)), previous: result.state });
  const used = process.cpuUsage(cpu);
  if (!next) throw new Error('append refused');
  result = next;
  samples.push({ ...next.timings, cpu: (used.user + used.system) / 1000 });
}
// Each append answers before its by-hash pruning, which the next one waits for: the cycle counts both.
await aptPublishingSettled(root, 'bench');
await spares?.settled();
const cycle = (performance.now() - started - rest * appends) / appends;
await rm(root, { recursive: true, force: true });

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const row = (label: string, pick: (s: (typeof samples)[number]) => number) => {
  const values = samples.map(pick);
  return [label, quantile(values, 0.5).toFixed(1), quantile(values, 0.9).toFixed(1)];
};
console.log(`${appends} appends of ${batch} stanzas to ${packages} packages, ${keyType} key, fsync ${sync ? 'on' : 'off'}, spare copies ${spares ? 'on' : 'off'}${rest ? `, ${rest} ms apart` : ''}`);
console.log(textTable([['stage (ms)', 'median', 'p90'], row('index variants compressed, hashed', (s) => s.compress), row('sign, variants written meanwhile', (s) => s.sign), row('  of which: signature made after', (s) => s.signed), row('  of which: index files on disk after', (s) => s.filesWritten), row('Release files', (s) => s.write), row('total (until answered)', (s) => s.total), ['mean cycle (with pruning)', cycle.toFixed(1), ''], row('process CPU (all threads)', (s) => s.cpu)]));
