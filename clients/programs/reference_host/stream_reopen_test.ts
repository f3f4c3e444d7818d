/**
 * Tests for `Reopen` (`stream_reopen.ts`): its waits, as it says them, for
 * streams that end soon after they opened, and after one that lived long;
 * none under `--no-reopen` or once the host is ending; `onReopened` once a
 * stream it opened again is open, never after a first open.
 *
 * @module
 */

import assert from "node:assert/strict";
import { REOPEN_MAX_MS, REOPEN_RESET_MS } from "./host_bounds.ts";
import { Reopen } from "./stream_reopen.ts";

/** The host's lines while `run` runs, instead of on stderr. */
function linesOf(run: () => void): string[] {
  const lines: string[] = [];
  const error = console.error;
  console.error = (line: string) => lines.push(line);
  try {
    run();
  } finally {
    console.error = error;
  }
  return lines;
}

/** The wait a line says, in ms. */
const waitIn = (line: string) =>
  Number(line.match(/: opened again in (\d+) ms$/)?.[1]);

Deno.test("Reopen: 1 s, doubled for each short stream in a row, at most 60 s, each cut by up to a quarter; back to 1 s after a stream that lived 60 s", () => {
  const reopen = new Reopen(true);
  const waits = linesOf(() => {
    for (let stream = 0; stream < 8; stream++) {
      reopen.opened();
      reopen.after("the GET stream ended", () => {})?.();
    }
  }).map(waitIn);
  const ceilings = [
    1000,
    2000,
    4000,
    8000,
    16000,
    32000,
    REOPEN_MAX_MS,
    REOPEN_MAX_MS,
  ];
  assert.equal(waits.length, ceilings.length);
  waits.forEach((wait, n) => {
    assert.ok(
      wait <= ceilings[n] && wait >= ceilings[n] * 0.75,
      `${n}: ${wait}`,
    );
  });
  const now = Date.now;
  Date.now = () => now() + REOPEN_RESET_MS;
  try {
    const [line] = linesOf(() =>
      reopen.after("the listen ended", () => {})?.()
    );
    assert.match(
      line,
      /^\[host\] the listen ended after \d+ ms: opened again in \d+ ms$/,
    );
    assert.ok(waitIn(line) >= 750 && waitIn(line) <= 1000, line);
  } finally {
    Date.now = now;
  }
});

Deno.test("Reopen: it opens the stream again once the wait is over, and never under --no-reopen or once stopped", async () => {
  const opened = Promise.withResolvers<void>();
  linesOf(() => new Reopen(true).after("the listen ended", opened.resolve));
  await opened.promise;
  let cancel: (() => void) | undefined;
  const lines = linesOf(() => {
    cancel = new Reopen(false).after("the GET stream ended", () => {});
  });
  assert.equal(cancel, undefined);
  assert.match(
    lines[0],
    /^\[host\] the GET stream ended after \d+ ms: not opened again \(--no-reopen\)$/,
  );
  const stopped = new Reopen(true);
  stopped.stop();
  assert.deepEqual(
    linesOf(() => {
      cancel = stopped.after("the GET stream ended", () => {});
    }),
    [],
  );
  assert.equal(cancel, undefined);
});

Deno.test("Reopen: onReopened runs once a stream it opened again is open, once, and never after a first open or once stopped", async () => {
  const reopen = new Reopen(true);
  let reopened = 0;
  reopen.onReopened = () => reopened++;
  reopen.opened();
  reopen.established();
  assert.equal(reopened, 0);
  const opened = Promise.withResolvers<void>();
  linesOf(() => reopen.after("the listen ended", opened.resolve));
  await opened.promise;
  assert.equal(reopened, 0);
  reopen.established();
  reopen.established();
  assert.equal(reopened, 1);
  const again = Promise.withResolvers<void>();
  linesOf(() => reopen.after("the listen ended", again.resolve));
  await again.promise;
  reopen.stop();
  reopen.established();
  assert.equal(reopened, 1);
});
