import { createHash, hash, randomBytes } from "node:crypto";
import { invalidRequest, notFound } from "../domain/errors.js";
import type { ResetInterval } from "../domain/guardrail.js";
import {
  applyKeyLimit,
  type KeyLimit,
  type KeyLimitInput,
  NO_KEY_LIMIT,
  presentKeyLimit,
} from "../domain/key-limit.js";
import { MICROS_PER_USD } from "../domain/money.js";
import { counterSubject } from "../domain/policy.js";
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
import { loadKeyPolicies } from "./effective-policy.js";
import { NO_USAGE, readSubjectsSpend, type SubjectSpend, type SubjectUsage } from "./read-subject-spend.js";
import { seedBudgetCounter } from "./seed-budget-counter.js";
import { resolveTargetWorkspace } from "./workspaces.js";

const SECRET_PREFIX = { management: "sk-gr-mgmt-", inference: "sk-gr-v1-" } as const;

/** SHA-256 (hex) of a secret: the only form in which a key is stored (docs/behaviour.md#key-secrets). */
export function hashSecret(secret: string): string {
  // Every request hashes its key: the one-shot digest costs a quarter of a Hash object's. It came
  // with Node 20.12; the engines field allows 20.10, which gets the object.
  if (typeof hash === "function") return hash("sha256", secret, "hex");
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
    limit_micros: null,
    limit_reset: null,
    include_byok_in_limit: 0,
  };
}

/**
 * Creates a management key with its audit entry, in the caller's transaction
 * (docs/behaviour.md#audit-log). `actor` is who made it: `cli` for the command line, `system` for
 * the service's own start-up.
 */
export async function createManagementKey(
  deps: ServiceDeps,
  db: Executor,
  organizationId: string,
  name: string,
  actor: string,
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
  const principal: Principal = { organizationId, keyHash: actor, kind: "management", workspaceId: null };
  await recordAudit(deps, db, principal, {
    action: "key.create",
    resource_type: "key",
    resource_id: record.hash,
    before: null,
    // The hash and label only, as for every key: the secret is never stored (docs/behaviour.md#key-secrets).
    after: { ...auditedKey(record), kind: "management" },
  });
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

/** The key's stored limit, in the domain's terms. */
export function keyLimitOf(k: KeyRecord): KeyLimit {
  return {
    limit_micros: k.limit_micros === null ? null : Number(k.limit_micros),
    limit_reset: k.limit_reset as ResetInterval | null,
    include_byok_in_limit: Number(k.include_byok_in_limit) === 1,
  };
}

const limitColumns = (l: KeyLimit) => ({
  limit_micros: l.limit_micros,
  limit_reset: l.limit_reset,
  include_byok_in_limit: l.include_byok_in_limit ? 1 : 0,
});

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
  // Validated before anything is read or written: bad input changes nothing.
  const limit = applyKeyLimit(NO_KEY_LIMIT, input);
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
  Object.assign(record, limitColumns(limit));
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
 * A key as the reference SDK reads it (docs/api.md#keys): its own limit with what is left of it in
 * the current window (`limit_remaining`, settled spend only), its usage per window, and every budget
 * layer that counts it (`budgets`). Without `spend` (a key just made, the CLI), no usage and no
 * budgets are shown.
 */
export function presentKey(k: KeyRecord, spend?: SubjectSpend) {
  const limit = keyLimitOf(k);
  const own = spend?.budgets.find((b) => b.layer === "key_limit");
  const spent = own ? Math.round(own.spent_usd * MICROS_PER_USD) : 0;
  const usage: SubjectUsage = spend
    ? {
        usage: spend.usage,
        usage_daily: spend.usage_daily,
        usage_weekly: spend.usage_weekly,
        usage_monthly: spend.usage_monthly,
        byok_usage: spend.byok_usage,
        byok_usage_daily: spend.byok_usage_daily,
        byok_usage_weekly: spend.byok_usage_weekly,
        byok_usage_monthly: spend.byok_usage_monthly,
      }
    : NO_USAGE;
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
    ...presentKeyLimit(limit, spent),
    ...usage,
    // Without a reading there is no list to show, rather than an empty one that would say "none".
    ...(spend ? { budgets: spend.budgets } : {}),
  };
}

/**
 * Keys' usage per window and the state of every budget layer that counts each (the guardrails', its
 * own limit, its workspace's), read with the same generic functions as a member's, in the order of
 * `keys` (in `db`: a transaction, when inside one). Each organization's keys are read together, in
 * chunks of KEYS_READ_TOGETHER: a fixed number of queries per chunk, not per key.
 */
export async function readKeysSpendOf(
  deps: ServiceDeps,
  keys: readonly KeyRecord[],
  db: Executor = deps.db,
): Promise<SubjectSpend[]> {
  const now = deps.now();
  const out = new Map<KeyRecord, SubjectSpend>();
  const byOrganization = new Map<string, KeyRecord[]>();
  for (const key of keys) {
    const list = byOrganization.get(key.organization_id);
    if (list) list.push(key);
    else byOrganization.set(key.organization_id, [key]);
  }
  for (const [organizationId, ofOrganization] of byOrganization) {
    for (let from = 0; from < ofOrganization.length; from += KEYS_READ_TOGETHER) {
      const chunk = ofOrganization.slice(from, from + KEYS_READ_TOGETHER);
      const policies = await loadKeyPolicies(deps, organizationId, chunk, db);
      const spends = await readSubjectsSpend(
        deps,
        organizationId,
        "key_hash",
        policies.map(({ key, policy }) => ({
          id: key.hash,
          budgets: policy.budgets.map((layer) => ({
            guardrail_id: layer.guardrail_id,
            layer: layer.layer,
            workspace_id: key.workspace_id,
            scope: layer.scope,
            subject: counterSubject(key, layer.scope),
            limit_micros: layer.limit_micros,
            reset_interval: layer.reset_interval,
          })),
        })),
        now,
        db,
      );
      chunk.forEach((key, i) => {
        const spend = spends[i];
        if (spend) out.set(key, spend);
      });
    }
  }
  return keys.map((key) => {
    const spend = out.get(key);
    if (!spend) throw new Error("every key asked for has its spend");
    return spend;
  });
}

/** How many keys are read with one set of queries (bounds the parameters of each). */
const KEYS_READ_TOGETHER = 100;

/** One key's usage and budgets: readKeysSpendOf for one key. */
export async function readKeySpend(
  deps: ServiceDeps,
  key: KeyRecord,
  db: Executor = deps.db,
): Promise<SubjectSpend> {
  const [spend] = await readKeysSpendOf(deps, [key], db);
  if (!spend) throw new Error("a key read is a key with spend");
  return spend;
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
    limit_micros: k.limit_micros === null ? null : Number(k.limit_micros),
    limit_reset: k.limit_reset,
    include_byok_in_limit: Number(k.include_byok_in_limit) === 1,
  };
}

/** Keys with their usage and budgets. */
export async function presentKeys(
  deps: ServiceDeps,
  keys: readonly KeyRecord[],
): Promise<ReturnType<typeof presentKey>[]> {
  const spends = await readKeysSpendOf(deps, keys);
  return keys.map((k, i) => presentKey(k, spends[i]));
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
  return inTransaction(
    deps,
    async (tx) => {
      const key = await findOrganizationKey(tx, principal.organizationId, hash, rowLock(deps, "update"));
      if (key?.kind !== "inference") throw notFound();
      const next: KeyRecord = {
        ...key,
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.disabled !== undefined ? { disabled: input.disabled ? 1 : 0 } : {}),
        ...limitColumns(applyKeyLimit(keyLimitOf(key), input)),
        updated_at: isoNow(deps),
      };
      await updateKeyRow(tx, next);
      const limit = keyLimitOf(next);
      if (limit.limit_micros !== null) {
        await seedBudgetCounter(
          tx,
          key.organization_id,
          { kind: "key", hash: key.hash },
          limit.limit_reset ?? "lifetime",
          limit.include_byok_in_limit,
          deps.now(),
        );
      }
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
