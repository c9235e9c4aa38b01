/**
 * The fuzz targets: one per parser entry point. `sync` targets run in Jazzer.js's synchronous
 * mode (faster); readers of files and streams are asynchronous. `instrument` adds coverage
 * feedback from a dependency written in JavaScript (fzstd decodes zstd in JS; gzip and xz are
 * native code, invisible to the instrumentation).
 */
export const TARGETS = {
  'deb-reader': { description: '.deb files: ar, control.tar and data.tar (gzip/xz/zstd), control, names, relations', sync: false, maxLen: 65536 },
  'rpm-reader': { description: '.rpm files: lead, signature and main headers, package fields, then the payload (cpio, gzip/xz/zstd)', sync: false, maxLen: 65536 },
  'rpm-cpio': { description: 'newc cpio archives as in an RPM payload, fed in chunks', sync: false },
  'decompress-gzip': { description: 'bounded gzip decoder (whole and chunked, against zlib)', sync: false },
  'decompress-xz': { description: 'bounded xz decoder (liblzma), whole and chunked', sync: false },
  'decompress-zstd': { description: 'bounded zstd decoder (frame guard + fzstd), whole and chunked', sync: false, instrument: ['node_modules/fzstd'] },
  'deb-control': { description: 'deb822 paragraphs: parse, serialise, parse again', sync: true },
  'deb-relations': { description: 'Depends & co.: parseRelations, parseProvides, the resolver\'s fast reading against it', sync: true },
  'rpm-relations': { description: 'rich dependencies, EVR splitting, range overlap', sync: true },
  'version-dpkg': { description: 'dpkg version order on triples: antisymmetry, transitivity, and dpkg\'s own algorithm (C semantics)', sync: true },
  'version-rpm': { description: 'rpmvercmp on triples: antisymmetry, transitivity, and rpm\'s own algorithm (C semantics)', sync: true },
  'apt-release': { description: 'APT Release files', sync: true },
  'deb822-stream': { description: 'Packages indexes read as streams: the fast catalog reader against the paragraph parser, any chunking', sync: false },
  'repomd': { description: 'repomd.xml', sync: true },
  'primary-xml': { description: 'primary.xml streamed in chunks, against the document read whole', sync: true },
  'osv-feed': { description: 'OSV feeds: zip of records, JSON array or single record, plain or gzipped', sync: false },
  'epss-feed': { description: 'EPSS CSV, plain or gzipped', sync: false },
  'kev-feed': { description: 'CISA KEV catalogue JSON', sync: false },
};
