/**
 * `OnePerKey`: one task per key at a time, and once more after it however
 * often it was asked meanwhile. The reference host's re-reads (one per
 * resource) and lists (one per kind) run through it, so that a server that
 * floods notifications gets a request at a time, not one each.
 *
 * @module
 */

/**
 * Runs one task per key at a time. Asked again while it runs, it runs once
 * more after, however often it was asked: a flood of notifications costs
 * two runs, the last begun after the last notification. A task never
 * rejects (it says its own failure).
 */
export class OnePerKey<K> {
  #running = new Map<K, Promise<void>>();
  #again = new Set<K>();

  run(key: K, task: () => Promise<void>) {
    if (this.#running.has(key)) return void this.#again.add(key);
    const runs = (async () => {
      do {
        this.#again.delete(key);
        await task();
      } while (this.#again.has(key));
      this.#running.delete(key);
    })();
    this.#running.set(key, runs);
  }

  /** Once every run under way, and the one more asked of it, has ended. */
  async settled() {
    await Promise.all(this.#running.values());
  }
}
