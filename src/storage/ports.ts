import type { Admission, RequestPrice } from "../domain/budget-admission.js";
import type { AuditEntryRow } from "./audit-repo.js";
import type { BudgetReservationTable, Db, Executor, GuardrailTable, SpendLedgerTable } from "./schema.js";
import type { CounterKey } from "./spend-repo.js";

/**
 * The seam between the service and its two databases: only where SQLite and PostgreSQL really
 * differ (how a transaction runs, how instances hear of each other's changes, how the request path's
 * spend is written, which writes can go as one statement). Everything else is the shared Kysely
 * repositories beside this file. Each adapter (sqlite/, postgres/) implements these; open.ts picks
 * one from the database address. Nothing here imports an adapter, so no adapter imports another.
 */

export type Transact = <T>(work: (tx: Executor) => Promise<T>) => Promise<T>;

/** What one committed management change may invalidate in other instances' caches. */
export interface ChangeNotice {
  /** The change can revoke a key (key, member or workspace deletion). */
  keys?: boolean;
}

/**
 * What several instances on one database need to agree; absent on SQLite, where one process owns
 * the file and its transactions already run one at a time.
 */
export interface Coordination {
  /** Serializes transactions that name the same thing, until the calling transaction ends. */
  lock(tx: Executor, name: string): Promise<void>;
  /** Announces a change to every instance once the transaction commits. */
  publish(tx: Executor, notice: ChangeNotice): Promise<void>;
}

/** Where a new guardrail goes: the organization's default workspace, or one it names. */
export interface WorkspaceGuard {
  kind: "default" | "named";
  organizationId: string;
  /** The workspace the row was built for; the write happens only if it is still the right one. */
  workspaceId: string;
}

/**
 * Guardrail writes that carry their audit entry and change notice in one statement (PostgreSQL,
 * where each statement of a transaction is a round trip). Each writes nothing and answers false
 * when its precondition no longer holds; the caller then takes the general, transactional path.
 */
export interface AtomicWrites {
  /** Inserts a guardrail, if the workspace guard holds. */
  insertGuardrail(
    row: GuardrailTable,
    audit: AuditEntryRow,
    guard: WorkspaceGuard,
    notice: ChangeNotice,
  ): Promise<boolean>;
  /** Writes a guardrail's new version, if the stored one is still the version read. */
  updateGuardrail(
    row: GuardrailTable,
    expected: { version: number; updatedAt: string | null },
    audit: AuditEntryRow,
    notice: ChangeNotice,
  ): Promise<boolean>;
}

/** A request's hold on its budget counters. */
export interface HeldReservation {
  id: string;
  counters: CounterKey[];
  amount: number;
}

/** What a request asks of its budgets: its price, the output it wants, the least answer worth sending. */
export interface AdmissionAsk {
  price: RequestPrice;
  wanted: number;
  minimal: number;
}

/**
 * The spend writes of the request path, each all or nothing. The reference implementation is
 * kyselySpendStore (spend-store.ts): it runs on either database and reads as the rule. Each adapter
 * has a faster one that must answer as it does: SQLite's holds reservations in the memory of the one
 * process that owns the file and writes only settlements (sqlite/spend-store.ts), PostgreSQL's sends the writes of a batch in one call of a
 * PL/pgSQL function (postgres/spend-store.ts). test/storage/spend-contract.test.ts holds them to it.
 */
export interface SpendStore {
  /** Reserves on every counter (each under its limit) and records the reservation; -1 when done, else the index of the counter that had nothing left. */
  reserve(
    organizationId: string,
    counters: { key: CounterKey; limit: number }[],
    amount: number,
    row: BudgetReservationTable,
  ): Promise<number>;
  /**
   * Sizes the request's reservation by the rule of budget-admission.ts on the counters as they are
   * now, reserves it on every counter (each within its limit) and records the reservation with that
   * amount; or reserves nothing and says which counter refuses and why.
   */
  admit(
    organizationId: string,
    counters: { key: CounterKey; limit: number }[],
    ask: AdmissionAsk,
    row: BudgetReservationTable,
  ): Promise<Admission>;
  /**
   * Settles (or, with no reservation, just records) a request's cost and writes its ledger row and
   * its daily rollup (under each of `guardrailIds`, the guardrails that governed it, too).
   */
  settle(
    reservation: HeldReservation | null,
    cost: number,
    ledger: SpendLedgerTable,
    guardrailIds?: readonly string[],
  ): Promise<void>;
  /** Gives a reservation back; nothing when it was already settled or released. */
  release(reservation: HeldReservation): Promise<void>;
  /**
   * Moves a reservation's expiry to `expiresAt`, for a request still in flight past its first one
   * (a long stream): the expiry sweep must not give back what it still holds. Nothing when it was
   * already settled, released or swept.
   */
  renew(reservation: HeldReservation, expiresAt: string): Promise<void>;
  /**
   * What this process holds in memory on each counter, in the order asked: on SQLite, where one
   * process owns the file, reservations are held there and never written. Absent where every
   * reservation is in the database (PostgreSQL: instances share it).
   */
  held?(organizationId: string, counters: CounterKey[]): number[];
  /** The holds kept in memory whose expiry is at or before `nowIso`, earliest first (the expiry sweep). */
  expiredHolds?(nowIso: string, limit: number): BudgetReservationTable[];
}

export interface ChangeListenerHandlers {
  /** A committed change announced by any instance (this one included). */
  onChange(notice: ChangeNotice): void;
  /** Whether notifications are being received; while not, cached data cannot be trusted. */
  onState(listening: boolean): void;
  onError(err: unknown): void;
}

export interface ChangeListener {
  close(): Promise<void>;
}

export interface DatabaseHandle {
  db: Db;
  kind: "sqlite" | "postgres";
  /** Runs a change in a transaction (on SQLite, with group commit). */
  transact: Transact;
  /** The spend writes of the request path (a synchronous fast path on SQLite). */
  spendStore: SpendStore;
  coordination?: Coordination;
  /** One-statement guardrail writes, where they save round trips (PostgreSQL). */
  atomicWrites?: AtomicWrites;
  /** Runs a start-up step (bootstrap) while no other instance runs one. */
  withStartupLock<T>(work: () => Promise<T>): Promise<T>;
  /** Receives other instances' change notices (PostgreSQL); absent where there are none. */
  listenForChanges?(handlers: ChangeListenerHandlers): Promise<ChangeListener>;
  /** Answers when the database does (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface PostgresOptions {
  /** Most connections one instance holds (GUARDRAILS_PG_POOL_MAX). */
  poolMax: number;
  /** How long to wait for a connection, at start and from the pool (GUARDRAILS_PG_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  /** Longest time one statement may run before PostgreSQL cancels it (GUARDRAILS_PG_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number;
}

export interface DatabaseOptions {
  /** SQLite `synchronous` setting: "normal" survives a killed process, "full" also a power loss. */
  sqliteSynchronous: "normal" | "full";
  /** Pool and time-out settings on PostgreSQL; defaults in DEFAULT_POSTGRES_OPTIONS. */
  postgres?: PostgresOptions;
  /**
   * The server: on SQLite, holds the file for this process alone (sqlite/server-lock.ts; a second
   * server is refused) and gives back what reservations an earlier process left in it. The command
   * line leaves it unset and works beside a running server.
   */
  server?: boolean;
}

export const DEFAULT_POSTGRES_OPTIONS: PostgresOptions = {
  poolMax: 10,
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 30_000,
};
