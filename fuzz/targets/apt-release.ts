/** APT Release files (the text InRelease signs): parseRelease; every SHA256 line it keeps is well-formed. */
import { PackageFormatError } from '../../src/domain/errors.js';
import { parseRelease } from '../../src/domain/imports/apt-release.js';
import { expectOnly, invariant, syncTarget } from '../lib/harness.js';

export const fuzz = syncTarget((data) => {
  try {
    const release = parseRelease(data.toString('utf8'));
    for (const [path, file] of release.sha256) {
      invariant(path !== '' && /^[0-9a-f]{64}$/.test(file.sha256) && Number.isSafeInteger(file.size), () => `kept ${JSON.stringify([path, file])}`);
    }
  } catch (error) {
    expectOnly(error, PackageFormatError);
  }
});
