/**
 * Server-sent events and JSON answers for the scripted model's wire formats.
 *
 * @module
 */

/** One SSE frame: an optional `event:` name and a JSON (or raw) `data:`. */
export interface SseFrame {
  event?: string;
  data: unknown;
}

/** Encodes frames as one SSE body; a string `data` goes out as is. */
export function sseBody(frames: SseFrame[]): string {
  return frames.map(({ event, data }) =>
    `${event === undefined ? "" : `event: ${event}\n`}data: ${
      typeof data === "string" ? data : JSON.stringify(data)
    }\n\n`
  ).join("");
}

/** A complete SSE response. The frames are small, so they go out at once. */
export function sseResponse(frames: SseFrame[]): Response {
  return new Response(sseBody(frames), {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
    },
  });
}

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** A rough token count, so clients that budget context see plausible usage. */
export function roughTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? "").length / 4));
}

/** Parses SSE text back into frames (for tests and for reading transcripts). */
export function parseSse(body: string): SseFrame[] {
  return body.split(/\r?\n\r?\n/).filter((block) => block.trim() !== "").map(
    (block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      const raw = data.join("\n");
      let parsed: unknown = raw;
      try {
        parsed = JSON.parse(raw);
      } catch {
        // Markers such as `[DONE]` stay strings.
      }
      return event === undefined ? { data: parsed } : { event, data: parsed };
    },
  );
}
