/**
 * What the published tables are written from: a matrix row (the record of
 * one run as they show it), a catalog row, a summary cell, a library row.
 *
 * @module
 */

import type {
  CatalogKind,
  ClientReport,
  Era,
  VerdictSteps,
} from "../../main.ts";
import type { RunRecord } from "../runners/run_record.ts";
import type { NewToolSeen } from "../model/decide.ts";
import type { LibraryApi, LibraryDefinition } from "../catalog/libraries.ts";

/** What a row keeps of its run, under the run record's own names. */
type RunFields = Pick<
  RunRecord,
  | "clientId"
  | "npmPackage"
  | "version"
  | "mode"
  | "launchMode"
  | "trigger"
  | "route"
  | "longWait"
  | "progressCheck"
  | "ranAt"
  | "durationSeconds"
  | "outcome"
>;

/** The steps a row marks, under the names the lab's report gives them. */
export type StepFields = Omit<VerdictSteps, "contextUpdated">;

export interface MatrixRow extends RunFields, StepFields {
  /** The client's display name. */
  client: string;
  /** The lab's version, from its report (null when the lab never answered). */
  labVersion: string | null;
  /** The lab's identity for the client (`name/version`), when it connected. */
  labClient: string | null;
  era: Era | null;
  protocolVersion: string | null;
  /**
   * Level 7 as the scripted model saw it; null when it could not judge, or
   * when the lab sent no update at all.
   */
  contextUpdated: boolean | null;
  /**
   * Whether the host's own notice that the resource changed (oh-my-pi's
   * "[MCP notification] … updated") reached the model unasked; null when
   * no model drove the client.
   */
  hostNotice: boolean | null;
  /**
   * Seconds from the lab's update to the first model request that held
   * that notice; null when none did.
   */
  hostNoticeSeconds: number | null;
  /** The level the lab recorded (0–6), natively. */
  labLevel: number;
  /** The lab's record of the wait tool for this client (wait-tool route). */
  waitTool: ClientReport["waitTool"] | null;
  /** The level the lab recorded for the probe the client ran (shell-probe). */
  probeLevel: number | null;
  /** The lab's update delay in this run (long-wait and check rows). */
  delaySeconds?: number;
  /** The row's level: the lab's, or 7 when the context showed the update. */
  level: number;
  notes: string;
  /**
   * A world mode's row (`WORLD_MODES`) against the client's default row
   * under the same route and trigger (`withDefaultComparison`); absent on
   * other rows, on one whose client never ran (no install, no lab), and on
   * an inline-content row that never reached the lab.
   */
  versusDefault?: VersusDefault;
  /**
   * A catalog row's catalog ladder (mode `catalog`): the lab's levels per
   * kind, tools raised to 5 by the model's side; null when the lab kept no
   * catalog record of the client (it never reached the lab). Absent on
   * other rows.
   */
  catalog?: CatalogRow | null;
  /** Evidence file, relative to `results/`, with the trigger's anchor. */
  evidence: string;
  /**
   * What the evidence is: `run`, a run's own report, or `documentation`,
   * the client's documentation saying why it has nothing to run.
   */
  evidenceKind: "run" | "documentation";
}

/** A world mode's row against the client's default row. */
export interface VersusDefault {
  /** The default row's level; null when the matrix has no such row. */
  defaultLevel: number | null;
  /** What differs, in words: the level, steps lost or gained, the outcome. */
  differences: string[];
  /**
   * It broke in the mode's world: it did not complete where the default
   * row did, reached a lower level than the default's (or than the level
   * the mode allows, if lower: 3 with every watch refused), or lost a step
   * the mode does not cost (inline-content costs the re-read the text
   * stood in for; refused, the subscribe and what it would have brought).
   */
  broke: boolean;
}

/** A catalog row's ladder: each kind that changed, and the model's side. */
export interface CatalogRow {
  /** The lowest level among the kinds (0 to 5). */
  level: number;
  kinds: Partial<Record<CatalogKind, CatalogKindRow>>;
  /**
   * What the model's requests showed of the new tool; null when no model
   * drove the client.
   */
  newTool: NewToolSeen | null;
  /** How many updates the lab sent the client: the change comes with the first. */
  updatesSent: number;
}

/** One kind of a catalog row: the lab's level, the row's, and what stopped it. */
export interface CatalogKindRow {
  added: string;
  labLevel: number;
  /** The lab's level, or for tools 5 when the new tool reached the model. */
  level: number;
  /** What stopped it, in the lab's words or the model's side's; "" at the top. */
  missing: string;
}

/** One cell: the level reached, or null where none was measured. */
export interface SummaryCell {
  level: number | null;
  text: string;
  /** `catalog`: a level of the catalog ladder (0 to 5), not the resource's (0 to 7). */
  ladder?: "catalog";
}

export interface LibraryRow {
  id: string;
  npmPackage: string;
  version: string;
  /** The other packages its programs import, pinned. */
  dependencies: string[];
  subscribe: LibraryApi;
  update: LibraryApi;
  sdkClient: string;
  /**
   * The app's level natively in each era over HTTP, and over stdio (in the
   * era its stdio mode speaks), under both triggers.
   */
  app: { "2025": SummaryCell; "2026-07-28": SummaryCell; stdio: SummaryCell };
  /** The app's catalog ladder, launched as its first mode (mode catalog). */
  catalog: SummaryCell;
  /** Why an app cannot choose an era or stdio ("no API" in its cell). */
  gaps: LibraryDefinition["gaps"] & object;
  note?: string;
  /** The agent loop's API and its level per route; null without one. */
  agent: { api: string; native: SummaryCell; waitTool: SummaryCell } | null;
}
