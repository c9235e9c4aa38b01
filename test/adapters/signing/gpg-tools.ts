/** Test helpers around the real gpg/gpgv binaries, each run with a throwaway GNUPGHOME. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ToolResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[]): ToolResult {
  const home = mkdtempSync(join(tmpdir(), 'tollgate-gnupg-'));
  try {
    const r = spawnSync(cmd, ['--homedir', home, ...args], { encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** `gpgv --keyring <keyring> <files…>`: verify a clear-signed file, or a detached signature and its data. */
export function gpgv(keyring: string, ...files: string[]): ToolResult {
  return run('gpgv', ['--keyring', keyring, ...files]);
}

/** `gpg --list-packets` of a file (key or signature). */
export function listPackets(file: string): string {
  return run('gpg', ['--list-packets', file]).stdout;
}

/** `gpg --dearmor` an armored key into a binary keyring file. */
export function dearmor(armoredFile: string, output: string): ToolResult {
  return run('gpg', ['--batch', '--yes', '--output', output, '--dearmor', armoredFile]);
}
