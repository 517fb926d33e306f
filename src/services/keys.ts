import { createHash, randomBytes } from "node:crypto";
import { invalidRequest, notFound } from "../domain/errors.js";
import { deleteKeyAssignments } from "../storage/assignment-repo.js";
import {
  deleteKey,
  findOrganizationKey,
  insertKey,
  type KeyRecord,
  listInferenceKeys,
} from "../storage/key-repo.js";
import { findMember } from "../storage/member-repo.js";
import type { Executor } from "../storage/schema.js";
import { inTransaction, isoNow, type Principal, recordAudit, rowLock, type ServiceDeps } from "./context.js";
import { resolveTargetWorkspace } from "./workspaces.js";

const SECRET_PREFIX = { management: "sk-gr-mgmt-", inference: "sk-gr-v1-" } as const;

/** SHA-256 (hex) of a secret: the only form in which a key is stored (decisions §2). */
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

export interface CreateKeyInput {
  name: string;
  workspace_id?: string;
  member_user_id?: string;
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
  const workspace = await resolveTargetWorkspace(
    db,
    principal,
    input.workspace_id,
    rowLock(deps, "key share"),
  );
  if (input.member_user_id !== undefined) {
    const member = await findMember(
      db,
      principal.organizationId,
      input.member_user_id,
      rowLock(deps, "key share"),
    );
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
    member_user_id: input.member_user_id ?? null,
  });
  await insertKey(db, record);
  await recordAudit(deps, db, principal, {
    action: "key.create",
    resource_type: "key",
    resource_id: record.hash,
    before: null,
    after: presentKey(record),
  });
  return { record, secret };
}

export function presentKey(k: KeyRecord): Record<string, unknown> {
  return {
    hash: k.hash,
    name: k.name,
    label: k.label,
    workspace_id: k.workspace_id,
    member_user_id: k.member_user_id,
    disabled: k.disabled === 1,
    created_at: k.created_at,
  };
}

export async function listKeys(
  deps: ServiceDeps,
  principal: Principal,
  page: { offset: number; limit: number; workspaceId?: string },
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
        before: presentKey(key),
        after: null,
      });
    },
    { revokesKeys: true },
  );
}
