import type { Catalog } from "../domain/catalog.js";
import type { Db } from "../storage/schema.js";

/** What every service verb needs; built once in main.ts (or by a test) and passed down. */
export interface ServiceDeps {
  db: Db;
  catalog: Catalog;
  /** The clock is a dependency so tests can move time; domain code receives time as an argument. */
  now: () => Date;
}

/** The authenticated caller of a request. */
export interface Principal {
  organizationId: string;
  keyHash: string;
  kind: "management" | "inference";
  workspaceId: string | null;
}

export function isoNow(deps: ServiceDeps): string {
  return deps.now().toISOString();
}
