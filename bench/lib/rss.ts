/**
 * Peak resident memory of this process. `process.resourceUsage().maxRSS` is the kernel's
 * high-water mark (exact, but over the whole process lifetime); the sampler gives the peak over a
 * window, at the cost of missing spikes shorter than its interval or hidden in synchronous work.
 */

/** The kernel's peak RSS of this process so far, in bytes. */
export function processPeakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/** Samples `process.memoryUsage.rss()` every `intervalMs` until stopped. */
export class RssSampler {
  private peakBytes = 0;
  private timer: NodeJS.Timeout | undefined;

  /** Starts (or restarts) sampling; the first sample is taken immediately. */
  start(intervalMs = 10): this {
    this.stop();
    this.peakBytes = process.memoryUsage.rss();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
    return this;
  }

  /** Takes one sample now (call it after synchronous phases the timer cannot interrupt). */
  sample(): void {
    this.peakBytes = Math.max(this.peakBytes, process.memoryUsage.rss());
  }

  /** Stops sampling and returns the peak seen, in bytes. */
  stop(): number {
    if (this.timer) {
      this.sample();
      clearInterval(this.timer);
      this.timer = undefined;
    }
    return this.peakBytes;
  }
}
