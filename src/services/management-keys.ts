import { AppError, notFound } from "../domain/errors.js";
import {
  findOrganizationKey,
  type KeyRecord,
  listActiveManagementKeys,
  lockActiveManagementKeys,
  revokeKeyRow,
} from "../storage/key-repo.js";
import type { Executor } from "../storage/schema.js";
import { deleteKeySessions } from "../storage/session-repo.js";
import { inTransaction, isoNow, type Principal, recordAudit, rowLock, type ServiceDeps } from "./context.js";
import { type CreatedKey, createManagementKey } from "./keys.js";

/**
 * A management key as listed (docs/api.md#management-keys): what identifies it, never its secret.
 * `current` marks the key the caller signed in with (the CLI is no key, so none is current there).
 */
export function presentManagementKey(k: KeyRecord, callerKeyHash?: string) {
  return {
    hash: k.hash,
    name: k.name,
    label: k.label,
    created_at: k.created_at,
    current: k.hash === callerKeyHash,
  };
}

/** The audit log's record of a management key: what identifies it, no secret. */
function auditedManagementKey(k: KeyRecord): Record<string, unknown> {
  return { hash: k.hash, name: k.name, label: k.label, created_at: k.created_at };
}

/** The organization's management keys that still authenticate, oldest first. */
export async function listManagementKeys(
  deps: ServiceDeps,
  principal: Principal,
  page: { offset: number; limit: number },
): Promise<{ items: KeyRecord[]; total: number }> {
  return listActiveManagementKeys(deps.db, principal.organizationId, page);
}

/** The reason a refusal to revoke the last management key carries in `metadata.reason`. */
export const LAST_MANAGEMENT_KEY = "last_management_key";

/**
 * Revokes one of the organization's active management keys inside `tx`, after locking all of them:
 * 404 when `hash` is none of them (another organization's, an inference key, already revoked), 409
 * `last_management_key` when it is the only one (docs/behaviour.md#management-key-revocation).
 * Its console sessions end in the same transaction.
 */
async function revokeIn(
  deps: ServiceDeps,
  tx: Executor,
  principal: Principal,
  hash: string,
  allowLast: boolean,
): Promise<KeyRecord> {
  const active = await lockActiveManagementKeys(tx, principal.organizationId, rowLock(deps, "update"));
  if (!active.includes(hash)) throw notFound();
  const key = await findOrganizationKey(tx, principal.organizationId, hash);
  if (key?.kind !== "management") throw notFound();
  if (active.length <= 1 && !allowLast) {
    throw new AppError("conflict", {
      reason: LAST_MANAGEMENT_KEY,
      hint: "This is the organization's only active management key. Make another first (guardrails keys create --management), or replace it in one step with guardrails keys rotate <hash>.",
    });
  }
  await revokeKeyRow(tx, principal.organizationId, hash, isoNow(deps));
  const sessions = await deleteKeySessions(tx, hash);
  await recordAudit(deps, tx, principal, {
    action: "management_key.revoke",
    resource_type: "management_key",
    resource_id: hash,
    before: auditedManagementKey(key),
    after: { revoked: true, console_sessions_ended: sessions },
  });
  return key;
}

/**
 * Revokes a management key of the caller's organization (docs/behaviour.md#management-key-revocation).
 * The change revokes cached authentications, here and (on PostgreSQL) on every instance, so the
 * key's next request is 401; its console sessions are deleted, so their next call is 401 too.
 */
export async function revokeManagementKey(
  deps: ServiceDeps,
  principal: Principal,
  hash: string,
): Promise<KeyRecord> {
  return inTransaction(deps, (tx) => revokeIn(deps, tx, principal, hash, false), { revokesKeys: true });
}

/**
 * Makes a management key of the caller's organization, with its audit entry, in one transaction
 * (the command line's `keys create --management`).
 */
export async function issueManagementKey(
  deps: ServiceDeps,
  principal: Principal,
  name: string,
): Promise<CreatedKey> {
  return inTransaction(deps, async (tx) => {
    // The key's audit entry is written by createManagementKey, in this transaction.
    return createManagementKey(deps, tx, principal.organizationId, name, principal.keyHash);
  });
}

/**
 * Replaces a management key by a new one of the same name in one transaction
 * (docs/behaviour.md#management-key-rotation): the old key stops working as the new one starts, so
 * the organization's only key can be replaced too.
 */
export async function rotateManagementKey(
  deps: ServiceDeps,
  principal: Principal,
  hash: string,
): Promise<{ created: CreatedKey; revoked: KeyRecord }> {
  return inTransaction(
    deps,
    async (tx) => {
      const revoked = await revokeIn(deps, tx, principal, hash, true);
      const created = await createManagementKey(
        deps,
        tx,
        principal.organizationId,
        revoked.name,
        principal.keyHash,
      );
      // Beside the new key's own key.create entry: which key it replaces.
      await recordAudit(deps, tx, principal, {
        action: "management_key.rotate",
        resource_type: "management_key",
        resource_id: created.record.hash,
        before: null,
        after: { ...auditedManagementKey(created.record), replaces: revoked.hash },
      });
      return { created, revoked };
    },
    { revokesKeys: true },
  );
}
