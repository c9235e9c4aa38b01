/**
 * Antivirus engine status and signature update (`/security/avengine/status` and `/update`). The
 * update runs the operator's CLAMAV_UPDATE_COMMAND (e.g. `freshclam`), then asks clamd to RELOAD.
 * The time of the last successful update is recorded for the metric tollgate_clamav_last_update;
 * without one, the signature database's own date is used.
 */
import { spawn } from 'node:child_process';
import type { AntivirusScanner, AntivirusVersion } from '../../adapters/clamav/index.js';
import { findLastSignatureUpdate, recordSignatureUpdate } from '../../adapters/db/avengine.table.js';
import type { Db } from '../../adapters/db/index.js';
import { DomainError } from '../../domain/errors.js';
import { isoUtc } from '../../domain/time.js';

const UPDATE_TIMEOUT_MS = 10 * 60 * 1000;
const OUTPUT_LIMIT = 4000;

/** Answer of GET /security/avengine/status. */
export interface AvEngineStatus {
  engine: 'clamav';
  configured: boolean;
  ok: boolean;
  version: string | null;
  signature_version: string | null;
  signature_date: string | null;
  last_update: string | null;
  update_command_configured: boolean;
  detail?: string;
}

/** Answer of POST /security/avengine/update. */
export interface AvEngineUpdate {
  engine: 'clamav';
  updated: true;
  exit_code: number;
  output: string;
  version_before: string | null;
  version_after: string | null;
  signature_version: string | null;
  last_update: string;
}

/** Run a shell command from the configuration; resolves with its exit code and bounded output. */
function runCommand(command: string, timeoutMs: number): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (d: Buffer) => {
      output = (output + d.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: 127, output: err.message });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), output: output.trim() });
    });
  });
}

export class AvEngine {
  private updating: Promise<AvEngineUpdate> | null = null;

  constructor(
    private readonly db: Db,
    private readonly scanner: AntivirusScanner | null,
    private readonly updateCommand: string | null,
  ) {}

  /** When the signatures were last updated through this service, else the database's date. */
  async lastUpdate(version?: AntivirusVersion | null): Promise<string | null> {
    const last = await findLastSignatureUpdate(this.db);
    if (last) return last;
    const date = version?.signatureDate ? Date.parse(version.signatureDate) : Number.NaN;
    return Number.isNaN(date) ? null : isoUtc(new Date(date));
  }

  /** Unix time of the last update, for the metric (null when unknown). */
  async lastUpdateUnix(): Promise<number | null> {
    let version: AntivirusVersion | null = null;
    if (this.scanner && (await this.scanner.ping())) version = await this.scanner.version().catch(() => null);
    const last = await this.lastUpdate(version);
    return last ? Math.floor(Date.parse(last) / 1000) : null;
  }

  async status(): Promise<AvEngineStatus> {
    const base = { engine: 'clamav' as const, update_command_configured: this.updateCommand !== null };
    if (!this.scanner) {
      return { ...base, configured: false, ok: false, version: null, signature_version: null, signature_date: null, last_update: await this.lastUpdate(null), detail: 'antivirus not configured (CLAMAV_SOCKET or CLAMAV_HOST)' };
    }
    if (!(await this.scanner.ping())) {
      return { ...base, configured: true, ok: false, version: null, signature_version: null, signature_date: null, last_update: await this.lastUpdate(null), detail: 'clamd does not answer' };
    }
    const v = await this.scanner.version();
    return { ...base, configured: true, ok: true, version: v.engine, signature_version: v.signatures, signature_date: v.signatureDate, last_update: await this.lastUpdate(v) };
  }

  /** Run the update command, then RELOAD. Concurrent calls share one run. */
  update(): Promise<AvEngineUpdate> {
    if (!this.scanner) throw new DomainError('invalid', 'antivirus_not_configured', 'antivirus not configured (CLAMAV_SOCKET or CLAMAV_HOST)');
    if (!this.updateCommand) throw new DomainError('invalid', 'update_command_not_configured', 'no signature update command configured (CLAMAV_UPDATE_COMMAND, e.g. freshclam)');
    if (!this.updating) {
      this.updating = this.runUpdate(this.scanner, this.updateCommand).finally(() => {
        this.updating = null;
      });
    }
    return this.updating;
  }

  private async runUpdate(scanner: AntivirusScanner, command: string): Promise<AvEngineUpdate> {
    const before = await scanner.version().catch(() => null);
    const result = await runCommand(command, UPDATE_TIMEOUT_MS);
    if (result.code !== 0) {
      throw new DomainError('unavailable', 'update_failed', `signature update command exited with ${result.code}: ${result.output.slice(-500)}`, { exit_code: result.code });
    }
    await scanner.reload();
    const after = await scanner.version().catch(() => null);
    const now = isoUtc();
    await recordSignatureUpdate(this.db, now);
    return {
      engine: 'clamav',
      updated: true,
      exit_code: result.code,
      output: result.output,
      version_before: before?.raw ?? null,
      version_after: after?.raw ?? null,
      signature_version: after?.signatures ?? null,
      last_update: now,
    };
  }
}
