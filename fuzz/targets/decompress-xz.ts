/**
 * The bounded xz decoder: the whole input in one write (decompressToBuffer), then again in
 * chunks through the stream with a slow consumer; both must agree, and never pass the limits.
 */
import { PackageFormatError } from '../../src/domain/errors.js';
import { decompressionCheck } from '../lib/decompress.js';
import { asyncTarget, expectOnly } from '../lib/harness.js';

export const fuzz = asyncTarget(async (data) => {
  try {
    await decompressionCheck('xz', data);
  } catch (error) {
    expectOnly(error, PackageFormatError);
  }
});
