/**
 * Hosts the harness cannot run here, described from their source, and the
 * requests about resource subscriptions in each client's tracker.
 *
 * @module
 */

/** One file and lines at one commit, and what the code there does. */
export interface SourceCitation {
  /** `owner/name` on GitHub. */
  repository: string;
  /** The full 40-hex commit read. */
  commit: string;
  path: string;
  /** `129` or `100-150`. */
  lines: string;
  /** What the code there does, in plain words. */
  says: string;
}

/** A host the harness cannot run here, described from its source. */
export interface CitedHost {
  kind: "cited";
  id: string;
  displayName: string;
  /** "code editor", "VS Code extension", "desktop app", "agent CLI", … */
  what: string;
  /** The version at that commit, when the repository says it. */
  version: string | null;
  subscribes: "yes" | "no" | "listen (2026-07-28) only";
  /** What it does on `notifications/resources/updated`. */
  onUpdated: string;
  /** Why the harness does not run it here. */
  whyNotRun: string;
  citations: SourceCitation[];
}

/** A request in a client's tracker about resource subscriptions. */
export interface UpstreamRequest {
  /** `https://github.com/owner/name/issues/N` (or `/pull/N`). */
  url: string;
  title: string;
  state: "open" | "closed";
  /** The day the state was read, `YYYY-MM-DD`. */
  checkedOn: string;
}

export const CITED_HOSTS: CitedHost[] = [];

/** By client or host id. */
export const UPSTREAM_REQUESTS: Record<string, UpstreamRequest[]> = {};
