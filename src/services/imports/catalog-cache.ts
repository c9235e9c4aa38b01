/** The catalog look-ups kept between resolutions (CatalogQuery). */
import type { CatalogPackage } from '../../domain/imports/resolve.js';
import type { LoadedName } from '../../domain/imports/resolve-formats.js';

type Provided = LoadedName['providers'][number];

/** What a source's catalog answers for one name: packages of that name, and those providing it. */
export interface NameAnswer {
  byName: CatalogPackage[];
  providers: Provided[];
}

/** The cached look-ups of one source's current generation. */
export interface SourceAnswers {
  generation: number;
  names: Map<string, NameAnswer>;
  packages: Map<number, CatalogPackage>;
  counted: number;
}

/** Names and packages kept in all: a few of the largest closures' worth (kde-full looks up ~1,300 names). */
const CACHED_ENTRIES = 20_000;

/**
 * Catalog look-ups kept from one resolution to the next: a generation never changes once
 * committed, so what it answered stays true until its source moves to another generation (that
 * source's answers are then dropped). The packages are shared between resolutions, read-only.
 * Bounded: emptied whenever it holds more than CACHED_ENTRIES names and packages.
 */
export class CatalogCache {
  private readonly sources = new Map<string, SourceAnswers>();
  private entries = 0;

  source(sourceId: string, generation: number): SourceAnswers {
    let answers = this.sources.get(sourceId);
    if (!answers || answers.generation !== generation) {
      if (answers) this.entries -= answers.counted;
      answers = { generation, names: new Map(), packages: new Map(), counted: 0 };
      this.sources.set(sourceId, answers);
    }
    return answers;
  }

  /** Counts what `answers` gained since last counted; empties the cache past its bound. */
  grew(answers: SourceAnswers): void {
    const now = answers.names.size + answers.packages.size;
    this.entries += now - answers.counted;
    answers.counted = now;
    if (this.entries > CACHED_ENTRIES) {
      this.sources.clear();
      this.entries = 0;
    }
  }
}
