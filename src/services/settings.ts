import type { Static } from 'typebox';
import type { Db } from '../adapters/db/index.js';
import type { SecretBox } from '../adapters/crypto/secret-box.js';
import { SECRET_MASK, SETTINGS, SETTING_KEYS, isSecretSetting, type SettingKey } from '../domain/settings.js';

export type SettingValue<K extends SettingKey> = Static<(typeof SETTINGS)[K]['schema']>;
export type SettingsSnapshot = { [K in SettingKey]: SettingValue<K> };

const CACHE_MS = 2000;

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
  ) {}

  async all(): Promise<SettingsSnapshot> {
    if (this.cache && Date.now() - this.cache.at < CACHE_MS) return this.cache.values;
    const values = Object.fromEntries(SETTING_KEYS.map((k) => [k, structuredClone(SETTINGS[k].default)])) as Record<string, unknown>;
    for (const row of await this.db.selectFrom('settings').selectAll().execute()) {
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
   * Applies a validated patch and returns the keys that changed. Sending the mask back for a
   * secret leaves it unchanged, so a client can PATCH what it GOT.
   */
  async update(patch: Partial<Record<SettingKey, unknown>>, by: string): Promise<SettingKey[]> {
    const current = await this.all();
    const changed: SettingKey[] = [];
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      for (const key of Object.keys(patch) as SettingKey[]) {
        const value = patch[key];
        if (isSecretSetting(key) && value === SECRET_MASK) continue;
        if (JSON.stringify(current[key]) === JSON.stringify(value)) continue;
        const stored = isSecretSetting(key) && typeof value === 'string' ? this.box.seal(value) : value;
        const row = { key, value: JSON.stringify(stored), updated_at: now, updated_by: by };
        await trx
          .insertInto('settings')
          .values(row)
          .onConflict((oc) => oc.column('key').doUpdateSet({ value: row.value, updated_at: now, updated_by: by }))
          .execute();
        changed.push(key);
      }
    });
    this.cache = null;
    return changed;
  }
}
