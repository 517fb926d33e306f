import type { Catalog } from "../domain/catalog.js";
import type { Guardrail } from "../domain/guardrail.js";
import { newId } from "../domain/ids.js";
import type { AppliedGuardrail, EffectivePolicy } from "../domain/policy.js";
import { type AuditEntryRow, insertAuditEntry } from "../storage/audit-repo.js";
import type { KeyRecord } from "../storage/key-repo.js";
import type {
  AtomicWrites,
  ChangeNotice,
  Coordination,
  DatabaseHandle,
  SpendStore,
} from "../storage/ports.js";
import type { RowLock } from "../storage/row-lock.js";
import type { Db, Executor } from "../storage/schema.js";
import { kyselySpendStore } from "../storage/spend-store.js";
import { GenerationCache } from "./generation-cache.js";

/**
 * Counts committed management changes. Caches of derived data (the effective policy of a key) keep
 * the generation they were computed at and are valid only while it is unchanged, so a change is seen
 * by the very next request.
 */
export class ChangeFeed {
  /** Any committed management change. */
  generation = 0;
  /** Changes that can revoke a key (key, member or workspace deletion): authentication depends only on these. */
  keysGeneration = 0;
  /**
   * False while changes made by other instances may go unseen (their notices are not arriving):
   * then nothing cached is served. Always true with one process on SQLite.
   */
  trusted = true;
  bump(options: ChangeNotice = {}): void {
    this.generation++;
    if (options.keys) this.keysGeneration++;
  }
  /** Notices stopped or resumed arriving; either way, what was cached before may be stale. */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.bump({ keys: true });
  }
}

// The spend store's request types, for callers outside the services (the gateway) that use `spend`.
export type { AdmissionAsk, HeldReservation } from "../storage/ports.js";

/** What every service verb needs; built once in main.ts (or by a test) and passed down. */
export interface ServiceDeps {
  db: Db;
  /** Runs a change in one transaction (the storage adapter decides how, e.g. group commit). */
  transact: <T>(work: (tx: Executor) => Promise<T>) => Promise<T>;
  catalog: Catalog;
  /** The spend writes of the request path (reservations, settlement, ledger). */
  spend: SpendStore;
  /** Present when several instances share the database (PostgreSQL). */
  coordination?: Coordination;
  /** One-statement guardrail writes, where the database offers them (PostgreSQL). */
  atomic?: AtomicWrites;
  /** The clock is a dependency so tests can move time; domain code receives time as an argument. */
  now: () => Date;
  changes: ChangeFeed;
  /** Warm caches of the hot path, valid while the change generation is unchanged. */
  caches: {
    principals: GenerationCache<Principal | null>;
    /**
     * Key hashes that matched no enabled key, kept apart from `principals` so that a client spraying
     * unknown keys flushes only this cache, and each unknown key costs one database read at most.
     */
    unknownKeys: GenerationCache<true>;
    keyPolicies: GenerationCache<KeyPolicy | null>;
    /**
     * Each organization's default workspace as last read. Only a guess for the one-statement
     * create, which checks it in the same statement and falls back to the general path if wrong.
     */
    defaultWorkspaces: Map<string, string>;
    /**
     * Guardrails as this instance last wrote them, by `organization/id`. Only a guess for the
     * one-statement update, which writes over it only while the stored version is still that one.
     */
    writtenGuardrails: Map<string, Guardrail>;
  };
}

export function createServiceDeps(parts: {
  db: Db;
  catalog: Catalog;
  now?: () => Date;
  transact?: ServiceDeps["transact"];
  spend?: SpendStore;
  coordination?: Coordination;
  atomic?: AtomicWrites;
}): ServiceDeps {
  const changes = new ChangeFeed();
  const db = parts.db;
  const transact: ServiceDeps["transact"] = parts.transact ?? ((work) => db.transaction().execute(work));
  return {
    db,
    transact,
    spend: parts.spend ?? kyselySpendStore(transact),
    catalog: parts.catalog,
    ...(parts.coordination ? { coordination: parts.coordination } : {}),
    ...(parts.atomic ? { atomic: parts.atomic } : {}),
    now: parts.now ?? (() => new Date()),
    changes,
    caches: {
      principals: new GenerationCache(() => (changes.trusted ? changes.keysGeneration : undefined)),
      unknownKeys: new GenerationCache(() => (changes.trusted ? changes.keysGeneration : undefined)),
      keyPolicies: new GenerationCache(() => (changes.trusted ? changes.generation : undefined)),
      defaultWorkspaces: new Map(),
      writtenGuardrails: new Map(),
    },
  };
}

/** The service's dependencies over an open database, with whatever that database offers. */
export function serviceDepsFor(database: DatabaseHandle, catalog: Catalog, now?: () => Date): ServiceDeps {
  return createServiceDeps({
    db: database.db,
    transact: database.transact,
    spend: database.spendStore,
    catalog,
    ...(database.coordination ? { coordination: database.coordination } : {}),
    ...(database.atomicWrites ? { atomic: database.atomicWrites } : {}),
    ...(now ? { now } : {}),
  });
}

/**
 * An inference key with the guardrails that apply to it and their combined policy (resolved by
 * effective-policy.ts; here because the key-policy cache holds it).
 */
export interface KeyPolicy {
  key: KeyRecord;
  applied: AppliedGuardrail[];
  policy: EffectivePolicy;
}

/** The authenticated caller of a request. */
export interface Principal {
  organizationId: string;
  keyHash: string;
  kind: "management" | "inference";
  workspaceId: string | null;
  memberUserId?: string | null;
}

/**
 * The row lock a transaction takes on a row it relies on until it commits (storage/row-lock.ts):
 * `lock` on PostgreSQL, where transactions run side by side; none on SQLite, where they run one at
 * a time.
 */
export function rowLock<L extends RowLock>(deps: ServiceDeps, lock: L): L | undefined {
  return deps.coordination ? lock : undefined;
}

export function isoNow(deps: ServiceDeps): string {
  return deps.now().toISOString();
}

/**
 * Runs a management change in one transaction and announces it once committed: bumping only after
 * the commit means no cache can be filled from the old data under the new generation. Other
 * instances hear of it through a notice sent in the same transaction, so it reaches them only if
 * the change commits.
 */
export async function inTransaction<T>(
  deps: ServiceDeps,
  work: (tx: Executor) => Promise<T>,
  options: { revokesKeys?: boolean } = {},
): Promise<T> {
  const notice: ChangeNotice = { keys: options.revokesKeys === true };
  const coordination = deps.coordination;
  const result = await deps.transact(
    coordination
      ? async (tx) => {
          const value = await work(tx);
          await coordination.publish(tx, notice);
          return value;
        }
      : work,
  );
  deps.changes.bump(notice);
  return result;
}

export interface AuditChange {
  action: string;
  resource_type: string;
  resource_id: string;
  before: unknown;
  after: unknown;
}

/**
 * Records a management change in the caller's transaction: if the entry cannot be written, the
 * change does not happen either (docs/behaviour.md#audit-log).
 */
export async function recordAudit(
  deps: ServiceDeps,
  tx: Executor,
  principal: Principal,
  change: AuditChange,
): Promise<void> {
  await insertAuditEntry(tx, auditRow(deps, principal, change));
}

/** The audit log row of a change. */
export function auditRow(deps: ServiceDeps, principal: Principal, change: AuditChange): AuditEntryRow {
  return {
    id: newId(),
    organization_id: principal.organizationId,
    actor_key_hash: principal.keyHash,
    action: change.action,
    resource_type: change.resource_type,
    resource_id: change.resource_id,
    before: change.before === null || change.before === undefined ? null : JSON.stringify(change.before),
    after: change.after === null || change.after === undefined ? null : JSON.stringify(change.after),
    created_at: isoNow(deps),
  };
}
