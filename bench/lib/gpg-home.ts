/** A throwaway GnuPG home with one RSA-4096 signing key, for the peer tools (aptly) the benches run. */
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Creates `home` afresh with a new key; returns the environment naming it and the key's fingerprint. */
export async function throwawayGpgHome(home: string): Promise<{ env: NodeJS.ProcessEnv; keyId: string }> {
  await rm(home, { recursive: true, force: true });
  await mkdir(home, { recursive: true, mode: 0o700 });
  const env = { ...process.env, GNUPGHOME: home };
  await run('gpg', ['--batch', '--passphrase', '', '--quick-gen-key', 'Bench <bench@example.org>', 'rsa4096', 'sign', 'never'], { env });
  const listing = (await run('gpg', ['--batch', '--with-colons', '--list-secret-keys'], { env })).stdout;
  return { env, keyId: /^fpr:+([0-9A-F]{40}):/m.exec(listing)![1]! };
}
