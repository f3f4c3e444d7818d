/**
 * Every client, in the order the matrix lists them, and the selection a
 * run covers (`[name...]`, `--only`).
 *
 * @module
 */

import { LIBRARY_CLIENTS } from "./libraries.ts";
import { type AnyClient, type Group, groupsOf } from "./types.ts";
import { BROWSER_CLIENTS } from "./hosts.ts";
import { CLIENTS, UNSUPPORTED_CLIENTS } from "./agents.ts";
import { COMMAND_CLIENTS } from "./commands.ts";

/** Every client, agents first, libraries last, in the order the matrix lists them. */
export const ALL_CLIENTS: AnyClient[] = [
  ...CLIENTS,
  ...UNSUPPORTED_CLIENTS,
  ...COMMAND_CLIENTS,
  ...BROWSER_CLIENTS,
  ...LIBRARY_CLIENTS,
];

/**
 * The clients a run covers: those named (all when none is), within the
 * `--only` groups (all when none is given).
 */
export function selectClients(
  ids: string[],
  groups: Group[] = [],
): AnyClient[] {
  return ALL_CLIENTS.filter((client) =>
    (ids.length === 0 || ids.includes(client.id)) &&
    (groups.length === 0 ||
      groupsOf(client).some((group) => groups.includes(group)))
  );
}
