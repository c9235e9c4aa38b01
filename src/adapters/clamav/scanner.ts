import type { Readable } from 'node:stream';

/** Versions reported by the antivirus engine; the signature fields are null with a custom database. */
export interface AntivirusVersion {
  /** Engine version, e.g. `1.4.6`. */
  engine: string;
  /** Signature database version, e.g. `27000`, or null when the daemon does not report one. */
  signatures: string | null;
  /** Signature database build time as ISO 8601 when parseable, else the daemon's text; null when absent. */
  signatureDate: string | null;
  /** The daemon's reply as received, e.g. `ClamAV 1.4.6/27000/Mon Nov 17 09:35:00 2025`. */
  raw: string;
}

/** Outcome of scanning one stream. */
export type ScanResult = { clean: true } | { clean: false; signature: string };

/**
 * An antivirus engine. Every method throws DomainError('unavailable', 'antivirus_unavailable')
 * when the engine is configured but cannot be reached or does not answer in time.
 */
export interface AntivirusScanner {
  /** True when the engine answers; never throws. */
  ping(): Promise<boolean>;
  /** Engine and signature database versions. */
  version(): Promise<AntivirusVersion>;
  /** Scans the bytes of `stream` (consumed; destroyed on failure). `name` is only used in messages. */
  scanStream(stream: Readable, name?: string): Promise<ScanResult>;
  /** Asks the engine to reload its signature database (after an update). */
  reload(): Promise<void>;
}
