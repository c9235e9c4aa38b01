/**
 * bench/profile-stages: where an upload's time goes, from a CPU profile of the service.
 *
 *   SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npx tsx bench/apt-upload.ts --tsx
 *   node bench/profile-stages.mjs /tmp/prof/<the largest>.cpuprofile [stage prefix]
 *
 * Only the samples between the first and last one inside the upload route count (start-up and
 * the bench's peer half are left out). Each sample goes to the stage of the deepest frame that
 * matches one (async code loses its callers, so the deepest known frame is the best witness);
 * given a stage prefix, that stage's hottest functions are listed too.
 */
import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const stages = [
  ['signing (OpenPGP)', /openpgp/],
  ['audit trail', /audit-log|audit\.table|adapters\/audit/],
  ['index publish (Packages, Contents, Release, by-hash)', /apt-index-files|apt-publisher|apt-contents|publishing\/publisher|distributions\.table|repo\/apt\//],
  ['format step (read the .deb)', /pipeline\/format|domain\/deb\/|formats\/deb/],
  ['provenance step', /pipeline\/provenance/],
  ['antivirus step', /pipeline\/antivirus|clamav/],
  ['CVE step', /pipeline\/cve|security\//],
  ['dependency step', /pipeline\/dependencies|pipeline\/signature/],
  ['store (row, file into the pool)', /admission|packages\.table|fs-package-files|source-files|local-file/],
  ['receive (multipart, hashing, temp file)', /routes\/upload|hash-stream|multipart|busboy/],
  ['upload service (answer, listeners)', /services\/upload|pipeline\/runner|security-index|notifications/],
  ['HTTP, auth, serialisation', /fastify|auth-hook|services\/auth|jwt|fast-json|avvio|find-my-way|light-my-request/],
  ['module loading / start-up', /node:internal\/modules|register-.*cjs|tsx\//],
  ['database (other)', /kysely|better-sqlite3|adapters\/db/],
];
// Only the window between the first and last sample inside the upload route (start-up and the
// bench's aptly half are left out).
const inUpload = (id) => { for (let cur = id; cur !== undefined; cur = parent.get(cur)) if (/routes\/upload/.test(byId.get(cur).callFrame.url)) return true; return false; };
const times = []; let t0 = 0;
for (let i = 0; i < p.samples.length; i++) { t0 += p.timeDeltas[i] ?? 0; times.push(t0); }
let first = -1, last = -1;
for (let i = 0; i < p.samples.length; i++) if (inUpload(p.samples[i])) { if (first < 0) first = i; last = i; }
if (first < 0) {
  // The bundled service (`--main`, the default since 2026-11-28) names one file for every frame.
  console.error('no sample inside the upload route: profile the sources (the bench with --tsx), not the bundled service');
  process.exit(1);
}
console.log(`upload window ${((times[last] - times[first]) / 1e6).toFixed(2)} s`);
const dt = new Map();
for (let i = first; i <= last; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const out = new Map();
const otherSelf = new Map();
let total = 0;
for (const [id, t] of dt) {
  total += t;
  const leaf = byId.get(id).callFrame.functionName;
  let stage = null;
  if (leaf === '(idle)' || leaf === '(garbage collector)' || leaf === '(program)') stage = leaf;
  for (let cur = id; !stage && cur !== undefined; cur = parent.get(cur)) {
    const url = byId.get(cur).callFrame.url;
    for (const [name, re] of stages) if (re.test(url)) { stage = name; break; }
  }
  stage ??= 'other (Node internals, fs, streams, timers)';
  out.set(stage, (out.get(stage) ?? 0) + t);
  if (process.argv[3] && stage.startsWith(process.argv[3])) {
    const f = byId.get(id).callFrame; const k = `${f.functionName}@${f.url.replace(/.*\//, '')}:${f.lineNumber}`;
    otherSelf.set(k, (otherSelf.get(k) ?? 0) + t);
  }
}
const busy = total - (out.get('(idle)') ?? 0);
console.log(`total ${(total / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s`);
for (const [k, v] of [...out].sort((a, b) => b[1] - a[1])) console.log(`${(v / 1e3).toFixed(0).padStart(7)} ms ${(100 * v / busy).toFixed(1).padStart(5)}% of busy  ${k}`);

if (process.argv[3]) for (const [k, v] of [...otherSelf].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`   ${(v / 1e3).toFixed(0).padStart(6)} ms  ${k}`);
