'use strict';
/**
 * Loads Jazzer.js's prebuilt libFuzzer addon on hosts older than the machine it was built on.
 *
 * The linux-x64 prebuild of @jazzer.js/fuzzer 4 is linked against glibc 2.38 and libstdc++ 13,
 * while Debian 12 ships glibc 2.36 and libstdc++ 12. It needs three symbols the older libraries
 * lack: `__isoc23_strtol` and `__isoc23_strtoul` (C23 spellings of strtol/strtoul, identical but
 * for accepting a "0b" prefix) and `std::ios_base_library_init()` (a symbol GCC 13 only
 * references to pin the library version; nothing calls it). When loading the addon fails for that
 * reason, a copy is made with those references redirected to `strtol`/`strtoul` and the two version
 * requirements marked weak (glibc then only warns about them), and that copy is loaded instead.
 * Nothing under node_modules is modified.
 */
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');

const SHT_DYNSYM = 11;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;
const VER_FLG_WEAK = 0x2;
const REDIRECTED = new Map([
  ['__isoc23_strtol', 'strtol'],
  ['__isoc23_strtoul', 'strtoul'],
  ['__isoc23_strtoll', 'strtoll'],
  ['__isoc23_strtoull', 'strtoull'],
]);
const WEAKENED = new Set(['GLIBC_2.38', 'GLIBCXX_3.4.32']);

function cString(buf, at) {
  const end = buf.indexOf(0, at);
  return buf.toString('latin1', at, end);
}

/** Returns a patched copy of the ELF64 little-endian shared object `elf`. */
function patchElf(input) {
  const elf = Buffer.from(input);
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) throw new Error('not an ELF64 LE object');
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const sections = [];
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize;
    sections.push({
      type: elf.readUInt32LE(at + 4),
      offset: Number(elf.readBigUInt64LE(at + 0x18)),
      size: Number(elf.readBigUInt64LE(at + 0x20)),
      link: elf.readUInt32LE(at + 0x28),
      info: elf.readUInt32LE(at + 0x2c),
    });
  }
  const dynsym = sections.find((s) => s.type === SHT_DYNSYM);
  const versym = sections.find((s) => s.type === SHT_GNU_VERSYM);
  const verneed = sections.find((s) => s.type === SHT_GNU_VERNEED);
  if (!dynsym || !versym || !verneed) throw new Error('no dynamic symbol version sections');
  const dynstr = sections[dynsym.link].offset;

  // Version requirements: weaken the ones the host lacks, find the index of libc's GLIBC_2.2.5.
  let baseVersion = null;
  let need = verneed.offset;
  for (let n = 0; n < verneed.info; n++) {
    const file = cString(elf, dynstr + elf.readUInt32LE(need + 4));
    let aux = need + elf.readUInt32LE(need + 8);
    for (let k = 0; k < elf.readUInt16LE(need + 2); k++) {
      const name = cString(elf, dynstr + elf.readUInt32LE(aux + 8));
      if (WEAKENED.has(name)) elf.writeUInt16LE(elf.readUInt16LE(aux + 4) | VER_FLG_WEAK, aux + 4);
      if (file === 'libc.so.6' && name === 'GLIBC_2.2.5') baseVersion = elf.readUInt16LE(aux + 6);
      aux += elf.readUInt32LE(aux + 12);
    }
    need += elf.readUInt32LE(need + 12);
  }
  if (baseVersion === null) throw new Error('no GLIBC_2.2.5 requirement to redirect to');

  // Symbols: C23 strtol family -> the classic functions, at glibc's base version.
  const count = dynsym.size / 24;
  for (let i = 0; i < count; i++) {
    const nameAt = dynstr + elf.readUInt32LE(dynsym.offset + i * 24);
    const replacement = REDIRECTED.get(cString(elf, nameAt));
    if (replacement === undefined) continue;
    elf.write(`${replacement}\0`, nameAt, 'latin1');
    elf.writeUInt16LE(baseVersion, versym.offset + i * 2);
  }
  return elf;
}

function cachePath(original) {
  const stat = fs.statSync(original);
  const dir = path.join(__dirname, '..', '..', 'node_modules', '.cache', 'tollgate-fuzz');
  return path.join(dir, `${path.basename(original, '.node')}-${stat.size}-${Math.floor(stat.mtimeMs)}.node`);
}

const loadNative = Module._extensions['.node'];
Module._extensions['.node'] = function load(module, filename) {
  try {
    return loadNative(module, filename);
  } catch (error) {
    const versionProblem = /version `(GLIBC|GLIBCXX)_[0-9.]+' not found/.test(String(error && error.message));
    if (!versionProblem || !/@jazzer\.js[\\/]fuzzer/.test(filename)) throw error;
    const patched = cachePath(filename);
    if (!fs.existsSync(patched)) {
      fs.mkdirSync(path.dirname(patched), { recursive: true });
      const temporary = `${patched}.${process.pid}`;
      fs.writeFileSync(temporary, patchElf(fs.readFileSync(filename)));
      fs.renameSync(temporary, patched);
    }
    return loadNative(module, patched);
  }
};

module.exports = { patchElf };
