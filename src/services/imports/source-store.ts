/** Import sources and their sync state. Sources are listed whole: the API answers a plain array, not a page envelope. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../adapters/db/index.js';
import {
  deleteImportSource, findImportSource, findSyncState, forgetVerifiedIndex, importSourceNameTaken, insertImportSource, listImportSources,
  updateImportSource, type ImportSourceRow, type NewImportSourceRow, type SyncStateRow,
} from '../../adapters/db/import-sources.table.js';
import { keyFingerprints } from '../../adapters/signing/upstream-verify.js';
import { DomainError } from '../../domain/errors.js';
import { defineSource, type SourceDefinition, type SourceInput } from '../../domain/imports/sources.js';
import { isoUtc } from '../../domain/time.js';
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import type { Actor } from '../actor.js';

export interface StoredSource extends SourceDefinition {
  id: string;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The API view of a source: the key is answered by its fingerprints, not repeated in full. */
export interface SourceView {
  id: string;
  name: string;
  type: string;
  url: string | null;
  suite: string | null;
  components: string[];
  architectures: string[];
  baseurl: string | null;
  distribution: string;
  allow_unsigned: boolean;
  key_fingerprints: string[];
  created_by: string | null;
  created_at: string;
  updated_at: string;
  sync: SyncStateView;
}

export interface SyncStateView {
  status: string;
  count: number;
  last_sync: string | null;
  last_success: string | null;
  last_error: string | null;
}

export const notFoundSource = (id: string) => new DomainError('not_found', 'source_not_found', `Import source ${id} not found`);

/** What a source change is audited with: where it goes and whom it trusts, never the key itself. */
async function describeSource(def: StoredSource): Promise<string> {
  const where = def.type === 'apt' ? `url=${def.url}; suite=${def.suite}; components=${def.components.join(',')}; architectures=${def.architectures.join(',')}` : `baseurl=${def.baseurl}`;
  const trust = def.key ? `key=${(await keyFingerprints(def.key)).join(',')}` : `key=none; allow_unsigned=${def.allowUnsigned}`;
  return `name=${def.name}; type=${def.type}; distribution=${def.distribution}; ${where}; ${trust}`;
}

export class SourceStore {
  constructor(
    private readonly db: Db,
    private readonly audit: Pick<AuditLog, 'record'>,
  ) {}

  /** Every change to a source is audited: a source decides which upstream and key packages are trusted from. */
  private async record(actor: Actor, verb: 'created' | 'updated' | 'deleted', source: StoredSource, note = ''): Promise<void> {
    await this.audit.record({ action: 'IMPORT_SOURCE_CHANGE', user: actor.username, result: 'SUCCESS', detail: `${verb} ${source.id}; ${await describeSource(source)}${note}`, ip: actor.ip });
  }

  async list(): Promise<StoredSource[]> {
    return (await listImportSources(this.db)).map(fromRow);
  }

  async get(id: string): Promise<StoredSource> {
    const row = await findImportSource(this.db, id);
    if (!row) throw notFoundSource(id);
    return fromRow(row);
  }

  async state(id: string): Promise<SyncStateRow> {
    const row = await findSyncState(this.db, id);
    return row ?? { source_id: id, status: 'never', generation: 0, index_digest: null, etag: null, last_modified: null, last_sync_at: null, last_success_at: null, last_error: null, count: 0 };
  }

  async create(input: SourceInput, actor: Actor): Promise<StoredSource> {
    const def = defineSource(input);
    await checkKey(def);
    const now = isoUtc();
    const id = randomUUID();
    await this.db.transaction().execute(async (trx) => {
      await this.assertNameFree(trx, def.name, null);
      await insertImportSource(trx, { id, ...toRow(def), created_by: actor.username, created_at: now, updated_at: now }, { source_id: id, status: 'never', generation: 0, count: 0 });
    }).catch(rethrowDuplicate(def.name));
    const created = await this.get(id);
    await this.record(actor, 'created', created);
    return created;
  }

  async update(id: string, input: SourceInput, actor: Actor): Promise<StoredSource> {
    const current = await this.get(id);
    const def = defineSource(input, current);
    if (input.key !== undefined) await checkKey(def);
    const trustChanged = def.key !== current.key || def.allowUnsigned !== current.allowUnsigned || def.url !== current.url
      || def.baseurl !== current.baseurl || def.suite !== current.suite;
    await this.db.transaction().execute(async (trx) => {
      await this.assertNameFree(trx, def.name, id);
      await updateImportSource(trx, id, { ...toRow(def), updated_at: isoUtc() });
      // A catalog vouched for by another key or location must be re-verified: the next sync
      // may not skip it as unchanged.
      if (trustChanged) await forgetVerifiedIndex(trx, id);
    }).catch(rethrowDuplicate(def.name));
    const updated = await this.get(id);
    await this.record(actor, 'updated', updated, trustChanged ? '; trust changed: the next sync verifies everything again' : '');
    return updated;
  }

  async delete(id: string, actor: Actor): Promise<void> {
    const source = await this.get(id);
    await this.db.transaction().execute((trx) => deleteImportSource(trx, id));
    await this.record(actor, 'deleted', source);
  }

  async view(source: StoredSource): Promise<SourceView> {
    const state = await this.state(source.id);
    return {
      id: source.id,
      name: source.name,
      type: source.type,
      url: source.url,
      suite: source.suite,
      components: source.components,
      architectures: source.architectures,
      baseurl: source.baseurl,
      distribution: source.distribution,
      allow_unsigned: source.allowUnsigned,
      key_fingerprints: source.key ? await keyFingerprints(source.key) : [],
      created_by: source.createdBy,
      created_at: source.createdAt,
      updated_at: source.updatedAt,
      sync: stateView(state),
    };
  }

  private async assertNameFree(trx: Db, name: string, self: string | null): Promise<void> {
    if (await importSourceNameTaken(trx, name, self)) throw new DomainError('conflict', 'source_exists', `An import source named ${name} exists`);
  }
}

export function stateView(state: SyncStateRow): SyncStateView {
  return { status: state.status, count: Number(state.count), last_sync: state.last_sync_at, last_success: state.last_success_at, last_error: state.last_error };
}

async function checkKey(def: SourceDefinition): Promise<void> {
  if (def.key === null) return;
  try {
    await keyFingerprints(def.key);
  } catch (error) {
    if (error instanceof DomainError) throw new DomainError('invalid', error.code, error.message, { errors: [{ loc: ['body', 'key'], msg: error.message }] });
    throw error;
  }
}

function rethrowDuplicate(name: string) {
  return (error: unknown): never => {
    if (error instanceof DomainError) throw error;
    // The unique index caught a racing creation with the same name.
    if (/unique|duplicate/i.test(String((error as Error).message))) throw new DomainError('conflict', 'source_exists', `An import source named ${name} exists`);
    throw error;
  };
}

function toRow(def: SourceDefinition): Omit<NewImportSourceRow, 'id' | 'created_by' | 'created_at' | 'updated_at'> {
  return {
    name: def.name, type: def.type, url: def.url, suite: def.suite,
    components: JSON.stringify(def.components), architectures: JSON.stringify(def.architectures),
    baseurl: def.baseurl, key: def.key, allow_unsigned: def.allowUnsigned ? 1 : 0, distribution: def.distribution,
  };
}

function fromRow(row: ImportSourceRow): StoredSource {
  return {
    id: row.id, name: row.name, type: row.type as StoredSource['type'], url: row.url, suite: row.suite,
    components: JSON.parse(row.components) as string[], architectures: JSON.parse(row.architectures) as string[],
    baseurl: row.baseurl, key: row.key, allowUnsigned: Number(row.allow_unsigned) === 1, distribution: row.distribution,
    createdBy: row.created_by, createdAt: row.created_at, updatedAt: row.updated_at,
  };
}
