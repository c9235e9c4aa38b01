/** Types of fuzz/targets.mjs, for the test that runs every target. */
export interface FuzzTarget {
  description: string;
  sync: boolean;
  maxLen?: number;
  instrument?: string[];
}
export declare const TARGETS: Record<string, FuzzTarget>;
