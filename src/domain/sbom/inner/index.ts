/**
 * Cataloguing what a package's payload embeds. The caller walks the payload (data.tar or the RPM
 * cpio) and asks `classify` about each regular file: `whole` files (metadata, jars, lock files)
 * are handed over as bytes up to `maxBytes`, `stream` files (executables) chunk by chunk; the
 * collector turns them into components. Pure: no files, no archives.
 */
import { debCopyrightLicense } from '../license.js';
import type { InnerComponent, PackageInventory } from '../model.js';
import { parseCargoLock } from './cargo.js';
import { GoBuildInfoScanner, goComponents } from './golang.js';
import { jarComponents } from './java.js';
import { parsePackageJson, parsePackageLock } from './npm.js';
import { parsePythonMetadata } from './python.js';

export type FileKind = 'npm-package' | 'npm-lock' | 'python' | 'jar' | 'cargo-lock' | 'copyright' | 'executable';

export type Interest = { kind: FileKind; mode: 'whole'; maxBytes: number } | { kind: 'executable'; mode: 'stream' } | null;

const META = 1024 * 1024;
const JAR = 64 * 1024 * 1024;

/** Files worth reading, by install path (`/usr/lib/…`), mode and size. */
export function classify(path: string, mode: number, size: number, packageName: string): Interest {
  const base = path.slice(path.lastIndexOf('/') + 1);
  if (base === 'package.json' && (/\/node_modules\/(@[^/]+\/)?[^/]+\/package\.json$/.test(path) || /^\/usr\/(share|lib)\/nodejs\/(@[^/]+\/)?[^/]+\/package\.json$/.test(path))) {
    return size <= META ? { kind: 'npm-package', mode: 'whole', maxBytes: META } : null;
  }
  if (base === 'package-lock.json' || base === 'npm-shrinkwrap.json') return size <= 16 * META ? { kind: 'npm-lock', mode: 'whole', maxBytes: 16 * META } : null;
  if (/\.dist-info\/METADATA$/.test(path) || /\.egg-info\/PKG-INFO$/.test(path) || (/\.egg-info$/.test(path) && (mode & 0o170000) === 0o100000)) {
    return size <= META ? { kind: 'python', mode: 'whole', maxBytes: META } : null;
  }
  if (/\.(jar|war|ear)$/.test(base)) return size <= JAR ? { kind: 'jar', mode: 'whole', maxBytes: JAR } : null;
  if (base === 'Cargo.lock') return size <= 4 * META ? { kind: 'cargo-lock', mode: 'whole', maxBytes: 4 * META } : null;
  if (path === `/usr/share/doc/${packageName}/copyright`) return size <= META ? { kind: 'copyright', mode: 'whole', maxBytes: META } : null;
  // Go binaries: executables, and shared objects (c-shared Go libraries carry build info too).
  if ((mode & 0o111) !== 0 && size >= 4096) return { kind: 'executable', mode: 'stream' };
  return null;
}

/** Accumulates what the files say. */
export class InventoryCollector {
  private readonly components: InnerComponent[] = [];
  private copyrightLicense: string | null = null;

  whole(kind: FileKind, path: string, bytes: Buffer): void {
    const text = () => bytes.toString('utf8');
    switch (kind) {
      case 'npm-package': this.components.push(...parsePackageJson(text(), path)); break;
      case 'npm-lock': this.components.push(...parsePackageLock(text(), path)); break;
      case 'python': this.components.push(...parsePythonMetadata(text(), path)); break;
      case 'jar': this.components.push(...jarComponents(bytes, path)); break;
      case 'cargo-lock': this.components.push(...parseCargoLock(text(), path)); break;
      case 'copyright': this.copyrightLicense = debCopyrightLicense(text()); break;
      case 'executable': break;
    }
  }

  /** A scanner for one executable; call `finishExecutable` with it when the file ends. */
  executable(): GoBuildInfoScanner {
    return new GoBuildInfoScanner();
  }

  finishExecutable(path: string, scanner: GoBuildInfoScanner): void {
    const info = scanner.result();
    if (info) this.components.push(...goComponents(info, path));
  }

  result(error: string | null = null): PackageInventory {
    return { components: this.components, copyrightLicense: this.copyrightLicense, error };
  }
}
