import type { Command } from 'commander';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { runs, seg } from '../runtime.js';

export function registerSbomCommand(program: Command): void {
  program
    .command('sbom')
    .description('Software bill of materials of one version (NAME VERSION) or of a whole distribution (--dist), CycloneDX 1.5 or SPDX 2.3 JSON')
    .argument('[name]')
    .argument('[version]')
    .option('-d, --dist <codename>', 'the whole distribution (or, with NAME VERSION, the distribution to take the version from)')
    .option('--arch <arch>')
    .option('-f, --format <format>', 'cyclonedx | spdx', 'cyclonedx')
    .option('-o, --output <file>', 'write to this file (atomically) instead of stdout')
    .action(runs(async (rt, name: string | undefined, version: string | undefined, opts: { dist?: string; arch?: string; format: string; output?: string }) => {
      if (opts.format !== 'cyclonedx' && opts.format !== 'spdx') throw new UsageError('--format must be cyclonedx or spdx');
      if (name && !version) throw new UsageError('give NAME and VERSION, or --dist alone');
      if (!name && !opts.dist) throw new UsageError('give NAME VERSION, or --dist CODENAME for the whole distribution');
      const client = await rt.client();
      const body = name
        ? await client.stream(`/sbom/${seg(name)}/${seg(version!)}`, { format: opts.format, arch: opts.arch, distribution: opts.dist })
        : await client.stream('/sbom/export', { format: opts.format, distribution: opts.dist });
      if (!opts.output) {
        await pipeline(body, process.stdout);
        return EXIT.ok;
      }
      // Written beside the target and renamed, so a failed download never leaves half a document.
      const temp = `${opts.output}.${process.pid}.part`;
      try {
        await pipeline(body, createWriteStream(temp));
        await rename(temp, opts.output);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
      rt.out.note(`SBOM written to ${opts.output}`);
      return EXIT.ok;
    }));
}
