import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';

/**
 * A read stream of a file the caller already holds the path of (an upload's temp file, a pooled
 * file from `PackageFiles.storedPath`): services stream such files through here, never `node:fs`.
 */
export const openLocalFile = (path: string): Readable => createReadStream(path);
