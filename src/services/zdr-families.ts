import { renameStoredFlags } from "../domain/zdr-families.js";
import { insertAuditEntry } from "../storage/audit-repo.js";
import { listStoredZdrFlags, replaceZdrFlags } from "../storage/zdr-flag-repo.js";
import { auditRow, inTransaction, type ServiceDeps } from "./context.js";

/** The audit log's actor for changes the configuration makes at start. */
const CONFIG_ACTOR = "config";

/**
 * Brings every stored guardrail's ZDR flags to the configuration's family ids before the service
 * answers, moving flags stored under a family's former ids (docs/configuration.md#the-catalog-file).
 * Refuses to start when a flag that is set names a family the configuration does not know: serving
 * would read it as unset and let through what the guardrail refuses. Idempotent, and safe when
 * several instances start at once (each write is conditional on the version it read).
 */
export async function renameZdrFamilies(deps: ServiceDeps): Promise<number> {
  const families = deps.catalog.families;
  let renamed = 0;
  const orphans: string[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    let raced = false;
    const rows = await listStoredZdrFlags(deps.db);
    orphans.length = 0;
    for (const row of rows) {
      const next = renameStoredFlags(row.enforce_zdr, families);
      for (const id of next.orphaned) orphans.push(`guardrail ${row.id}: enforce_zdr_${id}`);
      if (!next.changed) continue;
      const written = await inTransaction(deps, async (tx) => {
        if (!(await replaceZdrFlags(tx, row, next.flags))) return false;
        await insertAuditEntry(
          tx,
          auditRow(
            deps,
            {
              organizationId: row.organization_id,
              keyHash: CONFIG_ACTOR,
              kind: "management",
              workspaceId: null,
            },
            {
              action: "guardrail.rename_zdr_families",
              resource_type: "guardrail",
              resource_id: row.id,
              before: prefixed(row.enforce_zdr),
              after: prefixed(next.flags),
            },
          ),
        );
        return true;
      });
      if (written) renamed++;
      else raced = true;
    }
    if (!raced) break;
  }
  if (orphans.length > 0) {
    throw new Error(
      `GUARDRAILS_CONFIG: stored guardrails set ZDR flags of families the configuration does not name (${orphans
        .slice(0, 5)
        .join(
          "; ",
        )}); list each old id under "formerly" of the family it now belongs to (docs/configuration.md)`,
    );
  }
  return renamed;
}

function prefixed(flags: Record<string, boolean>): Record<string, boolean> {
  return Object.fromEntries(Object.entries(flags).map(([id, on]) => [`enforce_zdr_${id}`, on]));
}
