/** .deb files as uploaded: readDebPackage with the production limits, on a file holding the input. */
import { readDebPackage } from '../../src/domain/deb/reader.js';
import { PackageFormatError } from '../../src/domain/errors.js';
import { asyncTarget, expectOnly, invariant, scratchFile } from '../lib/harness.js';

const file = scratchFile('input.deb');

export const fuzz = asyncTarget(async (data) => {
  file.write(data);
  try {
    const pkg = await readDebPackage(file.path);
    invariant(pkg.name !== '' && pkg.version !== '' && pkg.arch !== '', () => 'accepted a package without name, version or architecture');
    for (const entry of pkg.files) {
      invariant(!entry.installPath.split('/').includes('..'), () => `accepted the path ${entry.path}`);
    }
  } catch (error) {
    expectOnly(error, PackageFormatError);
  }
});
