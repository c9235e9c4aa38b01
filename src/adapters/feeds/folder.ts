/**
 * The folder downloaded vulnerability feeds are kept in (DATA_DIR/vulndb): one file per feed,
 * kept after loading so the next sync can send a conditional request for it.
 */
import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface FeedFolder {
  /** Create the folder when it does not exist yet. */
  ensure(): Promise<void>;
  /** Where a feed's download lives: the same file for the same kind and name, whatever the URL. */
  pathOf(feed: { kind: string; name: string }): string;
  /** Whether a feed's previous download is still there. */
  has(path: string): Promise<boolean>;
}

export function feedFolder(dir: string): FeedFolder {
  return {
    ensure: async () => {
      await mkdir(dir, { recursive: true });
    },
    pathOf: (feed) => {
      // Hashed: a feed name comes from the settings and must not shape a path.
      const key = createHash('sha256').update(`${feed.kind}\u0000${feed.name}`).digest('hex').slice(0, 24);
      return join(dir, `${feed.kind}-${key}.feed`);
    },
    has: async (path) => {
      try {
        await stat(path);
        return true;
      } catch {
        return false;
      }
    },
  };
}
