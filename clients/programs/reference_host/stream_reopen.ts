/**
 * `Reopen`: when the reference host opens again a stream the server ended
 * (the 2025 GET stream, through the SDK's `reconnectionScheduler`; the
 * 2026-07-28 listen, through `Listen`): after a wait that doubles while
 * streams keep ending soon after they opened, and never under
 * `--no-reopen`, the control; once it is open again, `onReopened` (the
 * host reads what it watches again: an update sent in the gap was lost).
 *
 * @module
 */

import {
  DEFAULT_REOPEN_WAIT_SECONDS,
  REOPEN_JITTER,
  REOPEN_MAX_MS,
  REOPEN_RESET_MS,
  say,
} from "./host_bounds.ts";

/**
 * The host's one backoff for its one stream: `firstMs` (`--reopen-wait`), doubled
 * for each stream in a row that lived less than `REOPEN_RESET_MS`, at most
 * `REOPEN_MAX_MS`, each wait cut by up to `REOPEN_JITTER` at random. A
 * server that ends every stream after a second gets it again after about
 * 1, 2, 4 … 60 s; one that ends it after five minutes, after about 1 s.
 */
export class Reopen {
  /** Runs once a stream opened again is open, never after a first open. */
  onReopened: () => void = () => {};
  #openedAt = Date.now();
  #shortInARow = 0;
  #stopped = false;
  /** A stream `after` opened again has not said it is open yet. */
  #again = false;

  /**
   * `on` false (`--no-reopen`): a stream the server ended stays closed;
   * `firstMs`, the first wait (`--reopen-wait`).
   */
  constructor(
    private readonly on: boolean,
    readonly firstMs = DEFAULT_REOPEN_WAIT_SECONDS * 1000,
  ) {}

  /** A stream opens now (the first, or again). */
  opened() {
    this.#openedAt = Date.now();
  }

  /**
   * After a stream ended (`ended` says how), runs `open` once the wait is
   * over; returns what cancels it, as the SDK's scheduler takes, or
   * nothing when it will not run: under `--no-reopen`, or once the host is
   * ending.
   */
  after(ended: string, open: () => void): (() => void) | undefined {
    if (this.#stopped) return;
    const lived = Date.now() - this.#openedAt;
    if (!this.on) {
      say(`${ended} after ${lived} ms: not opened again (--no-reopen)`);
      return;
    }
    if (lived >= REOPEN_RESET_MS) this.#shortInARow = 0;
    const ceiling = Math.min(
      REOPEN_MAX_MS,
      this.firstMs * 2 ** this.#shortInARow++,
    );
    const wait = Math.round(ceiling * (1 - REOPEN_JITTER * Math.random()));
    say(`${ended} after ${lived} ms: opened again in ${wait} ms`);
    const timer = setTimeout(() => {
      if (this.#stopped) return;
      this.#again = true;
      this.opened();
      open();
    }, wait);
    return () => clearTimeout(timer);
  }

  /**
   * A stream is open now (a GET stream's response, a listen's
   * acknowledgement): after a re-open, `onReopened` runs, once.
   */
  established() {
    if (!this.#again || this.#stopped) return;
    this.#again = false;
    this.onReopened();
  }

  /** The host is ending: what ends from now on is not opened again. */
  stop() {
    this.#stopped = true;
  }
}
