import { createHash, randomBytes } from "node:crypto";
import { AppError, notFound } from "../domain/errors.js";
import {
  deleteKey,
  findOrganizationKey,
  insertKey,
  type KeyRecord,
  listInferenceKeys,
} from "../storage/key-repo.js";
import type { Executor } from "../storage/schema.js";
import { isoNow, type Principal, type ServiceDeps } from "./context.js";
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

export async function createManagementKey(
  deps: ServiceDeps,
  db: Executor,
  organizationId: string,
  name: string,
  secret: string = generateSecret("management"),
): Promise<CreatedKey> {
  const record: KeyRecord = {
    hash: hashSecret(secret),
    organization_id: organizationId,
    workspace_id: null,
    kind: "management",
    name,
    label: labelOf(secret),
    disabled: 0,
    created_at: isoNow(deps),
  };
  await insertKey(db, record);
  return { record, secret };
}

export interface CreateKeyInput {
  name: string;
  workspace_id?: string;
}

/** Creates an inference key in a workspace (the organization's default when none is named). */
export async function createInferenceKey(
  deps: ServiceDeps,
  db: Executor,
  principal: Principal,
  input: CreateKeyInput,
): Promise<CreatedKey> {
  const workspace = await resolveTargetWorkspace(db, principal, input.workspace_id);
  const secret = generateSecret("inference");
  const record: KeyRecord = {
    hash: hashSecret(secret),
    organization_id: principal.organizationId,
    workspace_id: workspace.id,
    kind: "inference",
    name: input.name,
    label: labelOf(secret),
    disabled: 0,
    created_at: isoNow(deps),
  };
  await insertKey(db, record);
  return { record, secret };
}

export function presentKey(k: KeyRecord): Record<string, unknown> {
  return {
    hash: k.hash,
    name: k.name,
    label: k.label,
    workspace_id: k.workspace_id,
    disabled: k.disabled === 1,
    created_at: k.created_at,
  };
}

export async function listKeys(
  deps: ServiceDeps,
  principal: Principal,
  page: { offset: number; limit: number; workspaceId?: string },
) {
  return listInferenceKeys(deps.db, principal.organizationId, page);
}

export async function getKey(deps: ServiceDeps, principal: Principal, hash: string): Promise<KeyRecord> {
  const key = await findOrganizationKey(deps.db, principal.organizationId, hash);
  if (key?.kind !== "inference") throw notFound();
  return key;
}

export async function removeKey(deps: ServiceDeps, principal: Principal, hash: string): Promise<void> {
  await deps.db.transaction().execute(async (tx) => {
    const key = await findOrganizationKey(tx, principal.organizationId, hash);
    // Management keys are not managed over HTTP: a caller could lock everyone out.
    if (key?.kind !== "inference") throw notFound();
    if (!(await deleteKey(tx, principal.organizationId, hash))) throw new AppError("not_found");
  });
}
