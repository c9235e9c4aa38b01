import { open } from 'node:fs/promises';
import { PackageFormatError } from '../../domain/errors.js';
import { rejectUpload, type PipelineStep, type StepResult, type UploadState } from '../../domain/pipeline/types.js';
import { handlerFor, sniffFormat } from '../formats/index.js';

const result = (status: StepResult['status'], message: string, value: string): StepResult => ({ name: 'format', status, message, value });

function reject(state: UploadState, code: string, message: string): StepResult {
  rejectUpload(state, code, message);
  return result('failed', message, 'invalid');
}

async function head(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(16);
    const { bytesRead } = await handle.read(buf, 0, 16, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Step 1: the file is a well-formed package of the distribution's format and architecture. */
export const formatStep: PipelineStep = {
  name: 'format',
  async run(state) {
    const format = sniffFormat(await head(state.path));
    if (!format) return reject(state, 'unknown_format', 'the file is neither a .deb (ar archive) nor an .rpm');
    if (format !== state.distribution.format) {
      return reject(state, 'wrong_format', `a .${format} package cannot go into ${state.distribution.codename} (a .${state.distribution.format} distribution)`);
    }
    try {
      state.pkg = await handlerFor(format).inspect(state.path);
    } catch (error) {
      if (error instanceof PackageFormatError) return reject(state, error.code, error.message);
      throw error;
    }
    const { arch } = state.pkg;
    if (!state.distribution.acceptedArchitectures.includes(arch)) {
      return reject(state, 'wrong_architecture', `architecture ${arch} is not accepted in ${state.distribution.codename} (${state.distribution.acceptedArchitectures.join(', ')})`);
    }
    return result('passed', `${state.pkg.name} ${state.pkg.version} (${arch}) is a valid .${format}`, 'valid');
  },
};
