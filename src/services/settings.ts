import type { Static } from 'typebox';
import type { Db } from '../adapters/db/index.js';
import { listSettingRows, upsertSetting } from '../adapters/db/settings.table.js';
import type { AuditLog } from '../adapters/audit/audit-log.js';
import type { SecretBox } from '../adapters/crypto/secret-box.js';
import { DomainError } from '../domain/errors.js';
import type { AllowedDirs } from '../domain/settings-rules.js';
import {
  SECRET_MASK, SETTINGS, SETTING_KEYS, isSecretSetting, normaliseSetting, secretsClearedBy, settingProblems, type SettingKey, type SettingProblem,
} from '../domain/settings.js';

export type SettingValue<K extends SettingKey> = Static<(typeof SETTINGS)[K]['schema']>;
export type SettingsSnapshot = { [K in SettingKey]: SettingValue<K> };

const CACHE_MS = 2000;

/** What an update did: every key whose stored value changed, and the secrets cleared by the destination rule. */
export interface SettingsChange {
  changed: SettingKey[];
  cleared: SettingKey[];
}

/** Who changes settings, for the audit entry. */
export interface SettingsActor {
  username: string;
  ip?: string | null;
}

export interface SettingsOptions {
  /** Folders that file paths and file:// URLs in settings must stay inside (FEEDS_DIR, CA_BUNDLE_DIR). */
  dirs: AllowedDirs;
  /** Where SETTINGS_CHANGE entries go; every caller of update() gets the same entry. */
  audit?: Pick<AuditLog, 'record'>;
  /** Checks that need an adapter (parsing OpenPGP keys), run on a patch that passed the declared rules. */
  verify?: (patch: Partial<Record<SettingKey, unknown>>) => Promise<SettingProblem[]>;
}

/**
 * Runtime settings stored in the database. Values are read through a short cache so hot paths
 * (rate limits on every request) do not query each time; a change made by this process is seen
 * at once, one made by another replica within CACHE_MS.
 */
export class SettingsService {
  private cache: { at: number; values: SettingsSnapshot } | null = null;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly options: SettingsOptions,
  ) {}

  async all(): Promise<SettingsSnapshot> {
    if (this.cache && Date.now() - this.cache.at < CACHE_MS) return this.cache.values;
    const values = Object.fromEntries(SETTING_KEYS.map((k) => [k, structuredClone(SETTINGS[k].default)])) as Record<string, unknown>;
    for (const row of await listSettingRows(this.db)) {
      if (!(row.key in SETTINGS)) continue;
      const key = row.key as SettingKey;
      const stored = JSON.parse(row.value) as unknown;
      values[key] = isSecretSetting(key) && typeof stored === 'string' ? this.box.open(stored) : stored;
    }
    const snapshot = values as SettingsSnapshot;
    this.cache = { at: Date.now(), values: snapshot };
    return snapshot;
  }

  async get<K extends SettingKey>(key: K): Promise<SettingValue<K>> {
    return (await this.all())[key];
  }

  /** The settings as answered to clients: secrets replaced by the mask (or null when unset). */
  async masked(): Promise<Record<string, unknown>> {
    const all = await this.all();
    return Object.fromEntries(
      SETTING_KEYS.map((k) => [k, isSecretSetting(k) ? (all[k] ? SECRET_MASK : null) : all[k]]),
    );
  }

  /**
   * Applies a schema-validated patch: refuses values that break a declared rule (422), clears
   * the secrets whose destination changes (a stored credential is never sent to a host it was
   * not entered for), stores the rest, and records SETTINGS_CHANGE naming the changed keys and the cleared secrets, never a
   * value. Sending the mask back for a secret leaves it unchanged, so a client can PATCH what
   * it GOT.
   */
  async update(patch: Partial<Record<SettingKey, unknown>>, actor: SettingsActor | string): Promise<SettingsChange> {
    let problems = settingProblems(patch, this.options.dirs);
    if (problems.length === 0 && this.options.verify) problems = await this.options.verify(patch);
    if (problems.length > 0) {
      const errors = problems.map((p) => ({ loc: ['body', ...p.loc], msg: p.msg }));
      throw new DomainError('invalid', 'validation_error', `${errors[0]!.loc.join('.')}: ${errors[0]!.msg}`, { errors });
    }
    const by = typeof actor === 'string' ? { username: actor } : actor;
    const current = await this.all();
    const cleared = secretsClearedBy(patch, current);
    const next: Partial<Record<SettingKey, unknown>> = { ...patch };
    for (const secret of cleared) next[secret] = null;
    const changed: SettingKey[] = [];
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      for (const key of Object.keys(next) as SettingKey[]) {
        const value = normaliseSetting(key, next[key]);
        if (isSecretSetting(key) && value === SECRET_MASK) continue;
        if (JSON.stringify(current[key]) === JSON.stringify(value)) continue;
        const stored = isSecretSetting(key) && typeof value === 'string' ? this.box.seal(value) : value;
        await upsertSetting(trx, { key, value: JSON.stringify(stored), updated_at: now, updated_by: by.username });
        changed.push(key);
      }
    });
    this.cache = null;
    if (changed.length > 0 && this.options.audit) {
      const clearedNote = cleared.length > 0 ? `; secrets cleared (destination changed): ${cleared.join(', ')}` : '';
      await this.options.audit.record({
        action: 'SETTINGS_CHANGE', user: by.username, result: 'SUCCESS', detail: `changed: ${changed.join(', ')}${clearedNote}`, ip: by.ip ?? null,
      });
    }
    return { changed, cleared };
  }
}
