/** A Go 1.18+ build info blob as the linker writes it (inline strings between 16-byte sentinels), for test binaries. */
export function goBuildInfoBlob(goVersion: string, lines: string[]): Buffer {
  const varint = (n: number) => {
    const out: number[] = [];
    while (n >= 0x80) { out.push((n & 0x7f) | 0x80); n >>>= 7; }
    out.push(n);
    return Buffer.from(out);
  };
  const sentinel = Buffer.alloc(16, 0x30);
  const info = Buffer.concat([sentinel, Buffer.from(`${lines.join('\n')}\n`), sentinel]);
  info[info.length - 17] = 0x0a;
  const header = Buffer.alloc(32);
  Buffer.from('\xff Go buildinf:', 'latin1').copy(header);
  header[14] = 8;
  header[15] = 2;
  return Buffer.concat([header, varint(goVersion.length), Buffer.from(goVersion), varint(info.length), info]);
}

/** Something shaped like a Go executable: an ELF magic, padding, the build info, more padding. */
export function fakeGoBinary(goVersion: string, lines: string[]): Buffer {
  return Buffer.concat([Buffer.from('\x7fELF', 'latin1'), Buffer.alloc(8188), goBuildInfoBlob(goVersion, lines), Buffer.alloc(4096)]);
}
