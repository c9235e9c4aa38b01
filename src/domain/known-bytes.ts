/** A file's size and its first bytes, already in memory (an upload keeps them as it is received). */
export interface KnownBytes {
  size: number;
  head: Buffer;
}

/** The file's first `bytes` bytes (all of it when shorter) if `known` holds them; null otherwise (read the file). */
export function knownPrefix(known: KnownBytes | null | undefined, bytes: number): Buffer | null {
  if (!known) return null;
  const length = Math.min(known.size, bytes);
  return known.head.length >= length ? known.head.subarray(0, length) : null;
}
