import type { ZdrFamily } from "./catalog.js";

export interface FlagRename {
  /** The flags as they should be stored under the configuration's ids. */
  flags: Record<string, boolean>;
  /** Whether anything differs from what is stored. */
  changed: boolean;
  /** Ids set to true that the configuration neither names nor lists as a former id. */
  orphaned: string[];
}

/**
 * Moves a guardrail's stored ZDR flags from the families' former ids to their current ones. A flag
 * stored under both ids (written by instances on two configurations) is kept if either was set: a
 * rename must never loosen a policy. A `true` under an id the configuration does not know is
 * reported, not dropped, because reading it as false would silently allow what it refused.
 */
export function renameStoredFlags(
  stored: Readonly<Record<string, boolean>>,
  families: readonly ZdrFamily[],
): FlagRename {
  const flags: Record<string, boolean> = { ...stored };
  let changed = false;
  const known = new Set<string>(["other"]);
  for (const family of families) {
    known.add(family.id);
    for (const old of family.formerly ?? []) {
      if (!(old in flags)) continue;
      flags[family.id] = flags[family.id] === true || flags[old] === true;
      delete flags[old];
      changed = true;
    }
  }
  const orphaned = Object.keys(flags).filter((id) => !known.has(id) && flags[id] === true);
  return { flags, changed, orphaned };
}
