import { type AuditEntry, type AuditFilter, listAuditEntries } from "../storage/audit-repo.js";
import type { ServiceDeps } from "./context.js";

/** What reading the audit log needs: the database to read, nothing else. */
export type ReadAuditLogDeps = Pick<ServiceDeps, "db">;

export type { AuditEntry };

/** An organization's management changes, newest first, a page at a time, optionally filtered (by resource, actor, time). */
export async function readAuditLog(
  deps: ReadAuditLogDeps,
  organizationId: string,
  page: { offset: number; limit: number } & AuditFilter,
): Promise<{ items: AuditEntry[]; total: number }> {
  return listAuditEntries(deps.db, organizationId, page);
}
