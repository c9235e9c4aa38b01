/**
 * .rpm files as uploaded: readRpmPackage (lead, both headers, every package field) with the
 * production limits, then the whole payload through iterateRpmPayload (decompression and cpio),
 * reading every file's content as the antivirus step does.
 */
import { PackageFormatError } from '../../src/domain/errors.js';
import { iterateRpmPayload } from '../../src/domain/rpm/payload.js';
import { readRpmPackage } from '../../src/domain/rpm/reader.js';
import { asyncTarget, expectOnly, invariant, scratchFile } from '../lib/harness.js';

const file = scratchFile('input.rpm');

export const fuzz = asyncTarget(async (data) => {
  file.write(data);
  try {
    const pkg = await readRpmPackage(file.path);
    invariant(pkg.name !== '' && pkg.version !== '', () => 'accepted a package without name or version');
    invariant(pkg.payloadOffset <= data.length, () => `payload offset ${pkg.payloadOffset} past the end of ${data.length} bytes`);
    for await (const { entry, content } of iterateRpmPayload(file.path, pkg)) {
      let size = 0;
      for await (const chunk of content) size += chunk.length;
      invariant(size === entry.size, () => `cpio entry ${entry.name}: read ${size} of ${entry.size} bytes`);
    }
  } catch (error) {
    expectOnly(error, PackageFormatError);
  }
});
