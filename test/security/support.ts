/**
 * Shared pieces of the security tests: a local feed server (ETag / If-None-Match, like a real
 * feed host), OSV/EPSS/KEV fixture writers, a multipart upload helper and readers of the
 * published indexes under DATA_DIR/repo.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { basename, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/app.js';

export const VECTORS = {
  critical: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', // 9.8
  high: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N', // 7.5
  medium: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:L/I:L/A:N', // 5.4
  low: 'CVSS:3.1/AV:N/AC:H/PR:L/UI:R/S:U/C:L/I:N/A:N', // 2.6
} as const;

export interface AdvisorySpec {
  id: string;
  ecosystem: string;
  pkg: string;
  cves: string[];
  fixed?: string;
  introduced?: string;
  severity?: keyof typeof VECTORS;
  withdrawn?: boolean;
}

/** An OSV record as the distro feeds publish them. */
export function osvRecord(spec: AdvisorySpec): Record<string, unknown> {
  const events: Array<Record<string, string>> = [{ introduced: spec.introduced ?? '0' }];
  if (spec.fixed) events.push({ fixed: spec.fixed });
  return {
    id: spec.id,
    modified: '2024-06-01T00:00:00Z',
    published: '2024-05-01T00:00:00Z',
    aliases: spec.cves,
    summary: `${spec.pkg}: test advisory ${spec.id}`,
    ...(spec.withdrawn ? { withdrawn: '2024-06-02T00:00:00Z' } : {}),
    ...(spec.severity ? { severity: [{ type: 'CVSS_V3', score: VECTORS[spec.severity] }] } : {}),
    affected: [{ package: { ecosystem: spec.ecosystem, name: spec.pkg }, ranges: [{ type: 'ECOSYSTEM', events }] }],
  };
}

export async function writeOsvFeed(path: string, specs: AdvisorySpec[]): Promise<void> {
  await writeFile(path, JSON.stringify(specs.map(osvRecord)));
}

export async function writeEpss(path: string, scores: Record<string, number>): Promise<void> {
  const lines = ['#model_version:v2023.03.01,score_date:2024-06-01T00:00:00+0000', 'cve,epss,percentile', ...Object.entries(scores).map(([cve, e]) => `${cve},${e},${Math.min(1, e + 0.1).toFixed(5)}`)];
  await writeFile(path, gzipSync(`${lines.join('\n')}\n`));
}

export async function writeKev(path: string, cves: string[]): Promise<void> {
  await writeFile(path, JSON.stringify({
    title: 'CISA Catalog of Known Exploited Vulnerabilities',
    catalogVersion: '2024.06.01',
    dateReleased: '2024-06-01T15:00:00.0000Z',
    count: cves.length,
    vulnerabilities: cves.map((cve) => ({ cveID: cve, vendorProject: 'Test', product: 'test', vulnerabilityName: `${cve} test`, dateAdded: '2024-05-01', dueDate: '2024-05-22', knownRansomwareCampaignUse: 'Unknown' })),
  }));
}

export interface FeedServer {
  url(file: string): string;
  requests: Array<{ path: string; headers: IncomingHttpHeaders; status: number }>;
  close(): Promise<void>;
}

/** Serves the files of `dir` with a strong ETag and answers 304 to a matching If-None-Match. */
export async function startFeedServer(dir: string): Promise<FeedServer> {
  const requests: FeedServer['requests'] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const name = basename(decodeURIComponent((req.url ?? '/').split('?')[0]!));
      let body: Buffer;
      try {
        body = await readFile(join(dir, name));
      } catch {
        requests.push({ path: req.url ?? '', headers: req.headers, status: 404 });
        res.writeHead(404).end('not found');
        return;
      }
      const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
      if (req.headers['if-none-match'] === etag) {
        requests.push({ path: req.url ?? '', headers: req.headers, status: 304 });
        res.writeHead(304, { etag }).end();
        return;
      }
      requests.push({ path: req.url ?? '', headers: req.headers, status: 200 });
      res.writeHead(200, { etag, 'content-length': body.length, 'last-modified': new Date().toUTCString() }).end(body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return {
    url: (file) => `http://127.0.0.1:${address.port}/${file}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Multipart upload through POST /upload/ (the real route). */
export async function upload(app: TestApp, token: string, file: string, distribution: string) {
  const boundary = `----tollgate${Date.now().toString(16)}`;
  const data = await readFile(file);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="distribution"\r\n\r\n${distribution}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${basename(file)}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return app.app.inject({ method: 'POST', url: '/upload/', headers: { ...bearer(token), 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: body });
}

/** Package names listed in an RPM distribution's published primary.xml.gz. */
export async function rpmIndexNames(dataDir: string, codename: string): Promise<string[]> {
  const repodata = join(dataDir, 'repo', 'rpm', codename, 'x86_64', 'repodata');
  const repomd = await readFile(join(repodata, 'repomd.xml'), 'utf8');
  const href = /<data type="primary">[\s\S]*?<location href="repodata\/([^"]+)"/.exec(repomd)?.[1];
  if (!href) throw new Error('repomd.xml names no primary');
  const primary = gunzipSync(await readFile(join(repodata, href))).toString('utf8');
  return [...primary.matchAll(/<name>([^<]+)<\/name>/g)].map((m) => m[1]!).sort();
}

/** Package names listed in an APT distribution's published Packages file. */
export async function aptIndexNames(dataDir: string, codename: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(join(dataDir, 'repo', 'apt', 'dists', codename, 'main', 'binary-amd64', 'Packages'), 'utf8');
  } catch {
    return [];
  }
  return [...text.matchAll(/^Package: (.+)$/gm)].map((m) => m[1]!.trim()).sort();
}

/** Files under a directory, recursively (names only). */
export async function filesUnder(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
  } catch {
    return [];
  }
}

/** PATCH /settings as admin; throws unless 200. */
export async function patchSettings(app: TestApp, adminToken: string, patch: Record<string, unknown>): Promise<void> {
  const res = await app.app.inject({ method: 'PATCH', url: '/settings/', headers: bearer(adminToken), payload: patch });
  if (res.statusCode !== 200) throw new Error(`PATCH /settings: ${res.statusCode} ${res.body}`);
}
