import { createHash, randomBytes } from "node:crypto";
import { invalidRequest, notFound } from "../domain/errors.js";
import { deleteKeyAssignments } from "../storage/assignment-repo.js";
import {
  deleteKey,
  findOrganizationKey,
  insertKey,
  type KeyRecord,
  listInferenceKeys,
  updateKeyRow,
} from "../storage/key-repo.js";
import { findMember } from "../storage/member-repo.js";
import type { Executor } from "../storage/schema.js";
import { inTransaction, isoNow, type Principal, recordAudit, rowLock, type ServiceDeps } from "./context.js";
import { type KeyUsage, NO_USAGE, readKeyUsage } from "./key-usage.js";
import { resolveTargetWorkspace } from "./workspaces.js";

const SECRET_PREFIX = { management: "sk-gr-mgmt-", inference: "sk-gr-v1-" } as const;

/** SHA-256 (hex) of a secret: the only form in which a key is stored (docs/behaviour.md#key-secrets). */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** 256 random bits, base64url; the prefix tells the two kinds apart at a glance. */
export function generateSecret(kind: KeyRecord["kind"]): string {
  return SECRET_PREFIX[kind] + randomBytes(32).toString("base64url");
}

/** A recognizable, harmless rendering of a secret: its prefix, three characters, and the last three. */
export function labelOf(secret: string): string {
  const prefix = Object.values(SECRET_PREFIX).find((p) => secret.startsWith(p)) ?? "";
  return `${secret.slice(0, prefix.length + 3)}...${secret.slice(-3)}`;
}

export interface CreatedKey {
  record: KeyRecord;
  secret: string;
}

function newKeyRecord(
  deps: ServiceDeps,
  secret: string,
  fields: Pick<KeyRecord, "organization_id" | "workspace_id" | "kind" | "name" | "member_user_id">,
): KeyRecord {
  return {
    ...fields,
    hash: hashSecret(secret),
    label: labelOf(secret),
    disabled: 0,
    created_at: isoNow(deps),
    updated_at: null,
  };
}

export async function createManagementKey(
  deps: ServiceDeps,
  db: Executor,
  organizationId: string,
  name: string,
  secret: string = generateSecret("management"),
): Promise<CreatedKey> {
  const record = newKeyRecord(deps, secret, {
    organization_id: organizationId,
    workspace_id: null,
    kind: "management",
    name,
    member_user_id: null,
  });
  await insertKey(db, record);
  return { record, secret };
}

export interface CreateKeyInput extends KeyLimitInput {
  name: string;
  workspace_id?: string;
  member_user_id?: string;
  /** The reference SDK's name for the owning member. */
  creator_user_id?: string | null;
  expires_at?: null;
}

/** The key's own budget as the reference SDK sends it; only the values meaning "none" are served yet. */
export interface KeyLimitInput {
  limit?: number | null;
  limit_reset?: string | null;
  include_byok_in_limit?: boolean;
}

/**
 * A key's own spending limit is not enforced yet, so a request that sets one is refused rather than
 * stored and ignored: a limit the gateway does not apply must not look applied (docs/api.md#keys).
 */
function refuseKeyLimits(input: KeyLimitInput): void {
  const issues = [];
  const message = "key limits are not supported yet; use a guardrail's limit_usd";
  if (input.limit !== undefined && input.limit !== null) issues.push({ path: "/limit", message });
  if (input.limit_reset !== undefined && input.limit_reset !== null)
    issues.push({ path: "/limit_reset", message });
  if (input.include_byok_in_limit === true) issues.push({ path: "/include_byok_in_limit", message });
  if (issues.length > 0) throw invalidRequest(issues, { reason: "key_limits_not_supported" });
}

/** The owning member, named by either field; both must agree when both are sent. */
function ownerOf(input: CreateKeyInput): string | undefined {
  const creator = input.creator_user_id ?? undefined;
  if (creator !== undefined && input.member_user_id !== undefined && creator !== input.member_user_id) {
    throw invalidRequest([{ path: "/creator_user_id", message: "names another member than member_user_id" }]);
  }
  return input.member_user_id ?? creator;
}

/**
 * Creates an inference key in a workspace (the organization's default when none is named), owned
 * by a member of that workspace when one is named.
 */
export async function createInferenceKey(
  deps: ServiceDeps,
  db: Executor,
  principal: Principal,
  input: CreateKeyInput,
): Promise<CreatedKey> {
  refuseKeyLimits(input);
  const owner = ownerOf(input);
  const workspace = await resolveTargetWorkspace(
    db,
    principal,
    input.workspace_id,
    rowLock(deps, "key share"),
  );
  if (owner !== undefined) {
    const member = await findMember(db, principal.organizationId, owner, rowLock(deps, "key share"));
    if (!member) throw invalidRequest([{ path: "/member_user_id", message: "no such member" }]);
    if (!member.workspace_ids.includes(workspace.id)) {
      throw invalidRequest([
        { path: "/member_user_id", message: "the member does not belong to the key's workspace" },
      ]);
    }
  }
  const secret = generateSecret("inference");
  const record = newKeyRecord(deps, secret, {
    organization_id: principal.organizationId,
    workspace_id: workspace.id,
    kind: "inference",
    name: input.name,
    member_user_id: owner ?? null,
  });
  await insertKey(db, record);
  await recordAudit(deps, db, principal, {
    action: "key.create",
    resource_type: "key",
    resource_id: record.hash,
    before: null,
    after: auditedKey(record),
  });
  return { record, secret };
}

/**
 * A key as the reference SDK reads it (docs/api.md#keys). The key's own limit is not served yet, so
 * the limit fields carry the reference service's values for a key without one; `usage` comes from
 * the spend ledger (services/key-usage.ts).
 */
export function presentKey(k: KeyRecord, usage: KeyUsage = NO_USAGE) {
  return {
    hash: k.hash,
    name: k.name,
    label: k.label,
    workspace_id: k.workspace_id,
    member_user_id: k.member_user_id,
    creator_user_id: k.member_user_id,
    external_user: null,
    disabled: k.disabled === 1,
    created_at: k.created_at,
    updated_at: k.updated_at,
    expires_at: null,
    limit: null,
    limit_remaining: null,
    limit_reset: null,
    include_byok_in_limit: false,
    ...usage,
  };
}

/** The audit log's record of a key: what identifies and governs it, not its spend. */
function auditedKey(k: KeyRecord): Record<string, unknown> {
  return {
    hash: k.hash,
    name: k.name,
    label: k.label,
    workspace_id: k.workspace_id,
    member_user_id: k.member_user_id,
    disabled: k.disabled === 1,
    created_at: k.created_at,
    updated_at: k.updated_at,
  };
}

/** Keys with their usage, read in one statement. */
export async function presentKeys(
  deps: ServiceDeps,
  organizationId: string,
  keys: readonly KeyRecord[],
): Promise<ReturnType<typeof presentKey>[]> {
  const usage = await readKeyUsage(
    deps,
    organizationId,
    keys.map((k) => k.hash),
    deps.now(),
  );
  return keys.map((k) => presentKey(k, usage.get(k.hash)));
}

export async function listKeys(
  deps: ServiceDeps,
  principal: Principal,
  page: { offset: number; limit: number; workspaceId?: string; includeDisabled: boolean },
) {
  // A workspace that is not the caller's is refused as the guardrail list refuses it, not listed empty.
  if (page.workspaceId !== undefined) await resolveTargetWorkspace(deps.db, principal, page.workspaceId);
  return listInferenceKeys(deps.db, principal.organizationId, page);
}

export async function getKey(deps: ServiceDeps, principal: Principal, hash: string): Promise<KeyRecord> {
  const key = await findOrganizationKey(deps.db, principal.organizationId, hash);
  if (key?.kind !== "inference") throw notFound();
  return key;
}

/** Deletes an inference key and its guardrail assignment, in one transaction. */
export async function removeKey(deps: ServiceDeps, principal: Principal, hash: string): Promise<void> {
  await inTransaction(
    deps,
    async (tx) => {
      // Locked first: an assignment of it either commits before the deletes below or finds it gone.
      const key = await findOrganizationKey(tx, principal.organizationId, hash, rowLock(deps, "update"));
      // Management keys are not managed over HTTP: a caller could lock everyone out.
      if (key?.kind !== "inference") throw notFound();
      await deleteKeyAssignments(tx, principal.organizationId, { keyHashes: [hash] });
      await deleteKey(tx, principal.organizationId, hash);
      await recordAudit(deps, tx, principal, {
        action: "key.delete",
        resource_type: "key",
        resource_id: hash,
        before: auditedKey(key),
        after: null,
      });
    },
    { revokesKeys: true },
  );
}

export interface UpdateKeyInput extends KeyLimitInput {
  name?: string;
  disabled?: boolean;
}

/**
 * Renames, disables or enables an inference key. Disabling takes effect on the next request: the
 * change revokes cached authentications like a deletion does.
 */
export async function updateKey(
  deps: ServiceDeps,
  principal: Principal,
  hash: string,
  input: UpdateKeyInput,
): Promise<KeyRecord> {
  refuseKeyLimits(input);
  return inTransaction(
    deps,
    async (tx) => {
      const key = await findOrganizationKey(tx, principal.organizationId, hash, rowLock(deps, "update"));
      if (key?.kind !== "inference") throw notFound();
      const next: KeyRecord = {
        ...key,
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.disabled !== undefined ? { disabled: input.disabled ? 1 : 0 } : {}),
        updated_at: isoNow(deps),
      };
      await updateKeyRow(tx, next);
      const before = auditedKey(key);
      const after = auditedKey(next);
      const changed = Object.keys(after).filter((f) => f !== "updated_at" && before[f] !== after[f]);
      await recordAudit(deps, tx, principal, {
        action: "key.update",
        resource_type: "key",
        resource_id: hash,
        before: Object.fromEntries(changed.map((f) => [f, before[f]])),
        after: Object.fromEntries(changed.map((f) => [f, after[f]])),
      });
      return next;
    },
    { revokesKeys: input.disabled !== undefined },
  );
}
