/** Antivirus adapter: the AntivirusScanner interface and its clamd implementation. */
export type { AntivirusScanner, AntivirusVersion, ScanResult } from './scanner.js';
export { ClamdScanner, createClamdScanner, type ClamdOptions, type ClamdTarget } from './clamd.js';
export { parseScanReply, parseVersionReply } from './protocol.js';
