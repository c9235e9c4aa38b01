import { chmodSync, writeFileSync } from 'node:fs';

/**
 * Writes a secret to a file only its owner may read (0600). The mode is set again after writing
 * because writeFile applies it only when it creates the file: an existing file keeps its mode.
 */
export function writeSecretFile(file: string, content: string): void {
  writeFileSync(file, content, { mode: 0o600 });
  chmodSync(file, 0o600);
}
