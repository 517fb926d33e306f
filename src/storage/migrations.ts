import { readFileSync } from "node:fs";
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";

/**
 * The migration history, in code so it ships with the build. Written with Kysely's schema builder,
 * which speaks both SQLite and PostgreSQL: one history per database, the same in intent. PostgreSQL's
 * PL/pgSQL functions are files of their own in postgres/ (SQL is easier to read as SQL).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types, which change over time.
type AnyDb = Kysely<any>;

export type Dialect = "sqlite" | "postgres";

/**
 * A PL/pgSQL script of postgres/, read when its migration runs: beside the compiled module in dist/
 * (the build copies it there) as beside the source under tsx.
 */
function postgresScript(name: string): string {
  return readFileSync(new URL(`./postgres/${name}`, import.meta.url), "utf8");
}

const migrationsFor = (dialect: Dialect): Record<string, Migration> => ({
  "0001_initial": {
    async up(db: AnyDb) {
      await db.schema
        .createTable("organizations")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("default_workspace_id", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("workspaces")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("is_default", "integer", (c) => c.notNull())
        .addColumn("default_guardrail_id", "text", (c) => c.notNull().unique())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("workspaces_org")
        .on("workspaces")
        .columns(["organization_id", "created_at"])
        .execute();
      await db.schema
        .createTable("keys")
        .addColumn("hash", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("workspace_id", "text")
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("label", "text", (c) => c.notNull())
        .addColumn("disabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("keys_org").on("keys").columns(["organization_id", "created_at"]).execute();
      await db.schema
        .createTable("guardrails")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("description", "text")
        .addColumn("allowed_data_regions", "text")
        .addColumn("allowed_models", "text")
        .addColumn("allowed_providers", "text")
        .addColumn("ignored_models", "text")
        .addColumn("ignored_providers", "text")
        .addColumn("content_filter_builtins", "text")
        .addColumn("content_filters", "text")
        .addColumn("enable_free_model_publication", "integer", (c) => c.notNull())
        .addColumn("enable_free_model_training", "integer", (c) => c.notNull())
        .addColumn("enable_paid_model_training", "integer", (c) => c.notNull())
        .addColumn("enforce_zdr", "text", (c) => c.notNull())
        .addColumn("include_byok_in_budgets", "integer", (c) => c.notNull())
        .addColumn("limit_micros", "bigint")
        .addColumn("reset_interval", "text")
        .addColumn("is_workspace_default", "integer", (c) => c.notNull())
        .addColumn("version", "integer", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text")
        .execute();
      await db.schema
        .createIndex("guardrails_org_ws")
        .on("guardrails")
        .columns(["organization_id", "workspace_id", "created_at"])
        .execute();
      await db.schema
        .createTable("idempotency_keys")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("request_hash", "text", (c) => c.notNull())
        .addColumn("response", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("idempotency_keys_pk", ["organization_id", "key_hash"])
        .execute();
      await db.schema
        .createIndex("idempotency_created")
        .on("idempotency_keys")
        .column("created_at")
        .execute();
    },
  },
  "0002_members_assignments_audit": {
    async up(db: AnyDb) {
      await db.schema
        .createTable("members")
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("name", "text")
        .addColumn("email", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text")
        .addPrimaryKeyConstraint("members_pk", ["organization_id", "user_id"])
        .execute();
      await db.schema
        .createTable("member_workspaces")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("member_workspaces_pk", ["organization_id", "user_id", "workspace_id"])
        .execute();
      await db.schema.alterTable("keys").addColumn("member_user_id", "text").execute();
      await db.schema
        .createTable("key_assignments")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull().unique())
        .addColumn("guardrail_id", "text", (c) => c.notNull())
        .addColumn("assigned_by", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("key_assignments_guardrail")
        .on("key_assignments")
        .columns(["organization_id", "guardrail_id", "created_at"])
        .execute();
      await db.schema
        .createTable("member_assignments")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("guardrail_id", "text", (c) => c.notNull())
        .addColumn("assigned_by", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addUniqueConstraint("member_assignments_one_per_workspace", [
          "organization_id",
          "user_id",
          "workspace_id",
        ])
        .execute();
      await db.schema
        .createIndex("member_assignments_guardrail")
        .on("member_assignments")
        .columns(["organization_id", "guardrail_id", "created_at"])
        .execute();
      await db.schema
        .createTable("audit_log")
        // The sequence orders entries (timestamps can tie) without a read before every write.
        // Each database spells it its own way: SQLite's rowid alias, PostgreSQL's identity column.
        .addColumn("seq", dialect === "postgres" ? "bigint" : "integer", (c) =>
          dialect === "postgres"
            ? c.primaryKey().generatedByDefaultAsIdentity()
            : c.primaryKey().autoIncrement(),
        )
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("actor_key_hash", "text", (c) => c.notNull())
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("resource_type", "text", (c) => c.notNull())
        .addColumn("resource_id", "text", (c) => c.notNull())
        .addColumn("before", "text")
        .addColumn("after", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      // One index: every write pays for each. Filtering by resource walks the organization's
      // entries newest first and stops at the page size, which suits an audit trail's reads.
      await db.schema
        .createIndex("audit_log_org_seq")
        .on("audit_log")
        .columns(["organization_id", "seq"])
        .execute();
    },
  },
  "0003_spend": {
    async up(db: AnyDb) {
      // One row per budget counter: a guardrail's budget for one subject (a key, or a member in a
      // workspace) in one calendar window. Settled spend and open reservations are kept apart, and
      // a reservation is admitted by one conditional UPDATE, so concurrent requests cannot both
      // take the last of a budget (docs/behaviour.md#budget-reservations).
      await db.schema
        .createTable("budget_usage")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("guardrail_id", "text", (c) => c.notNull())
        .addColumn("scope", "text", (c) => c.notNull())
        .addColumn("subject", "text", (c) => c.notNull())
        .addColumn("reset_interval", "text", (c) => c.notNull())
        .addColumn("window_start", "text", (c) => c.notNull())
        .addColumn("spent_micros", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("reserved_micros", "bigint", (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint("budget_usage_pk", [
          "guardrail_id",
          "scope",
          "subject",
          "reset_interval",
          "window_start",
        ])
        .execute();
      // A request in flight holds a reservation; one left behind by a crash is released when it expires.
      await db.schema
        .createTable("budget_reservations")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("counters", "text", (c) => c.notNull())
        .addColumn("amount_micros", "bigint", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("budget_reservations_expiry")
        .on("budget_reservations")
        .column("expires_at")
        .execute();
      // Every forwarded request's cost, for the record (never any message text).
      await db.schema
        .createTable("spend_ledger")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("request_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("member_user_id", "text")
        .addColumn("model", "text", (c) => c.notNull())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("byok", "integer", (c) => c.notNull())
        .addColumn("prompt_tokens", "integer", (c) => c.notNull())
        .addColumn("completion_tokens", "integer", (c) => c.notNull())
        .addColumn("cost_micros", "bigint", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("spend_ledger_org")
        .on("spend_ledger")
        .columns(["organization_id", "created_at"])
        .execute();
    },
  },
  "0004_spend_batch": {
    async up(db: AnyDb) {
      // PostgreSQL only: the gateway's spend writes of a batch in one call (postgres/spend-store.ts).
      // SQLite runs them in-process, where a statement costs no round trip.
      if (dialect === "postgres") await sql.raw(postgresScript("0004_spend_batch.sql")).execute(db);
    },
  },
  "0005_sized_admission_and_rollup": {
    async up(db: AnyDb) {
      // Spend per UTC day and what it was spent on, kept beside the ledger in the same transaction
      // as each ledger row: the usage report reads a few rows per key, model and day instead of
      // every request of the month. A row with guardrail_id '' counts each request once; a row per
      // guardrail that governed it answers "by guardrail" (a request counts under each).
      await db.schema
        .createTable("spend_rollup")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("day", "text", (c) => c.notNull())
        .addColumn("guardrail_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("member_user_id", "text", (c) => c.notNull())
        .addColumn("model", "text", (c) => c.notNull())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("byok", "integer", (c) => c.notNull())
        .addColumn("requests", "bigint", (c) => c.notNull())
        .addColumn("prompt_tokens", "bigint", (c) => c.notNull())
        .addColumn("completion_tokens", "bigint", (c) => c.notNull())
        .addColumn("cost_micros", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("spend_rollup_pk", [
          "organization_id",
          "day",
          "guardrail_id",
          "key_hash",
          "model",
          "provider",
          "byok",
        ])
        .execute();
      // What was spent before the rollup existed, once per request (which guardrails governed it
      // was not recorded).
      await sql`insert into spend_rollup
        select organization_id, substr(created_at, 1, 10), '', key_hash, workspace_id,
               coalesce(member_user_id, ''), model, provider, byok, count(*), sum(prompt_tokens),
               sum(completion_tokens), sum(cost_micros)
          from spend_ledger
         group by organization_id, substr(created_at, 1, 10), key_hash, workspace_id,
               coalesce(member_user_id, ''), model, provider, byok`.execute(db);
      // PostgreSQL only, like 0004: the batch gains the sized admission (budget-admission.ts).
      if (dialect === "postgres") await sql.raw(postgresScript("0005_sized_admission.sql")).execute(db);
    },
  },
  "0006_sdk_fields": {
    async up(db: AnyDb) {
      // The fields the reference SDK reads on keys and workspaces (docs/api.md#the-reference-sdk).
      await db.schema.alterTable("keys").addColumn("updated_at", "text").execute();
      await db.schema.alterTable("workspaces").addColumn("slug", "text").execute();
      await db.schema.alterTable("workspaces").addColumn("description", "text").execute();
      await db.schema.alterTable("workspaces").addColumn("updated_at", "text").execute();
      // A workspace made before slugs existed is addressed by its id, which is unique already.
      await db.updateTable("workspaces").set({ slug: sql`id` }).where("slug", "is", null).execute();
      await db.schema
        .createIndex("workspaces_org_slug")
        .unique()
        .on("workspaces")
        .columns(["organization_id", "slug"])
        .execute();
      // A key's usage sums its ledger rows by window.
      await db.schema
        .createIndex("spend_ledger_key")
        .on("spend_ledger")
        .columns(["key_hash", "created_at"])
        .execute();
    },
  },
  "0007_budget_alerts": {
    async up(db: AnyDb) {
      await db.schema.alterTable("guardrails").addColumn("alert_thresholds", "text").execute();
      // One row per budget counter, window and threshold: the primary key is what makes an alert
      // fire once, however many instances settle spend on that counter or restart meanwhile.
      await db.schema
        .createTable("budget_alerts")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("guardrail_id", "text", (c) => c.notNull())
        .addColumn("scope", "text", (c) => c.notNull())
        .addColumn("subject", "text", (c) => c.notNull())
        .addColumn("reset_interval", "text", (c) => c.notNull())
        .addColumn("window_start", "text", (c) => c.notNull())
        .addColumn("threshold_percent", "integer", (c) => c.notNull())
        .addColumn("limit_micros", "bigint", (c) => c.notNull())
        .addColumn("spent_micros", "bigint", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("budget_alerts_pk", [
          "guardrail_id",
          "scope",
          "subject",
          "reset_interval",
          "window_start",
          "threshold_percent",
        ])
        .execute();
    },
  },
  "0008_console_sessions": {
    async up(db: AnyDb) {
      // The console's sign-in: only a digest of each session token is kept, so a copy of the
      // database opens no session. key_hash is the management key it was exchanged for; the
      // session lives only while that key does.
      await db.schema
        .createTable("console_sessions")
        .addColumn("token_hash", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("console_sessions_expiry")
        .on("console_sessions")
        .column("expires_at")
        .execute();
    },
  },
  "0009_key_limits_workspace_budgets": {
    async up(db: AnyDb) {
      // A key's own limit (docs/api.md#keys): null micro-dollars is no limit, a null reset a lifetime one.
      await db.schema.alterTable("keys").addColumn("limit_micros", "bigint").execute();
      await db.schema.alterTable("keys").addColumn("limit_reset", "text").execute();
      await db.schema
        .alterTable("keys")
        .addColumn("include_byok_in_limit", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      // At most one budget per workspace and interval: setting one again replaces it.
      await db.schema
        .createTable("workspace_budgets")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("reset_interval", "text", (c) => c.notNull())
        .addColumn("limit_micros", "bigint", (c) => c.notNull())
        .addColumn("include_byok_in_budgets", "integer", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addUniqueConstraint("workspace_budgets_interval", ["workspace_id", "reset_interval"])
        .execute();
    },
  },
  "0010_usage_from_the_rollup": {
    async up(db: AnyDb) {
      // A key's or a member's usage is summed from the daily rollup, whose rows of one subject these
      // indexes find without reading the organization's other rows. A rollup row is inserted once a
      // day per key, model and provider and otherwise only its sums change, so they cost requests
      // almost nothing.
      await db.schema
        .createIndex("spend_rollup_key")
        .on("spend_rollup")
        .columns(["organization_id", "key_hash", "day"])
        .execute();
      await db.schema
        .createIndex("spend_rollup_member")
        .on("spend_rollup")
        .columns(["organization_id", "member_user_id", "day"])
        .execute();
      // Nothing reads the ledger by organization or key any more (it is the record each rollup row
      // can be rebuilt from), and every settlement wrote both indexes: on SQLite two of the seven
      // pages its commit wrote.
      await db.schema.dropIndex("spend_ledger_key").execute();
      await db.schema.dropIndex("spend_ledger_org").execute();
    },
  },
  "0011_spend_by_api": {
    async up(db: AnyDb) {
      // The API each forwarded request was made on (docs/behaviour.md#usage-by-api). Everything
      // recorded before was a chat completion or an embeddings request; the embeddings surface came
      // with no column of its own, so its older rows are counted as chat too.
      await db.schema
        .alterTable("spend_ledger")
        .addColumn("api", "text", (c) => c.notNull().defaultTo("chat"))
        .execute();
      // The API joins the rollup's primary key, which neither database can change in place on
      // SQLite: the table is built again beside the old one, filled, and put in its place.
      await db.schema
        .createTable("spend_rollup_next")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("day", "text", (c) => c.notNull())
        .addColumn("guardrail_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("member_user_id", "text", (c) => c.notNull())
        .addColumn("model", "text", (c) => c.notNull())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("byok", "integer", (c) => c.notNull())
        .addColumn("requests", "bigint", (c) => c.notNull())
        .addColumn("prompt_tokens", "bigint", (c) => c.notNull())
        .addColumn("completion_tokens", "bigint", (c) => c.notNull())
        .addColumn("cost_micros", "bigint", (c) => c.notNull())
        .addColumn("api", "text", (c) => c.notNull().defaultTo("chat"))
        // Named apart from the old table's key: PostgreSQL names constraints per schema.
        .addPrimaryKeyConstraint("spend_rollup_api_pk", [
          "organization_id",
          "day",
          "guardrail_id",
          "key_hash",
          "model",
          "provider",
          "byok",
          "api",
        ])
        .execute();
      await sql`insert into spend_rollup_next
        select organization_id, day, guardrail_id, key_hash, workspace_id, member_user_id, model,
               provider, byok, requests, prompt_tokens, completion_tokens, cost_micros, 'chat'
          from spend_rollup`.execute(db);
      await db.schema.dropTable("spend_rollup").execute();
      await db.schema.alterTable("spend_rollup_next").renameTo("spend_rollup").execute();
      await db.schema
        .createIndex("spend_rollup_key")
        .on("spend_rollup")
        .columns(["organization_id", "key_hash", "day"])
        .execute();
      await db.schema
        .createIndex("spend_rollup_member")
        .on("spend_rollup")
        .columns(["organization_id", "member_user_id", "day"])
        .execute();
      // PostgreSQL only, like 0004: the batch writes the API into both tables.
      if (dialect === "postgres") await sql.raw(postgresScript("0011_spend_by_api.sql")).execute(db);
    },
  },
  "0012_spend_by_session": {
    async up(db: AnyDb) {
      // The agent session a request belonged to, when its client named one (X-Claude-Code-Session-Id,
      // docs/behaviour.md#usage-by-session). Null in the ledger for a request that named none, and
      // for every row written before.
      await db.schema.alterTable("spend_ledger").addColumn("session_id", "text").execute();
      // The session joins the rollup's primary key: built again beside the old one, as in 0011.
      // '' there for no session, since a key column cannot be null.
      await db.schema
        .createTable("spend_rollup_next")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("day", "text", (c) => c.notNull())
        .addColumn("guardrail_id", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("workspace_id", "text", (c) => c.notNull())
        .addColumn("member_user_id", "text", (c) => c.notNull())
        .addColumn("model", "text", (c) => c.notNull())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("byok", "integer", (c) => c.notNull())
        .addColumn("requests", "bigint", (c) => c.notNull())
        .addColumn("prompt_tokens", "bigint", (c) => c.notNull())
        .addColumn("completion_tokens", "bigint", (c) => c.notNull())
        .addColumn("cost_micros", "bigint", (c) => c.notNull())
        .addColumn("api", "text", (c) => c.notNull().defaultTo("chat"))
        .addColumn("session_id", "text", (c) => c.notNull().defaultTo(""))
        .addPrimaryKeyConstraint("spend_rollup_session_pk", [
          "organization_id",
          "day",
          "guardrail_id",
          "key_hash",
          "model",
          "provider",
          "byok",
          "api",
          "session_id",
        ])
        .execute();
      await sql`insert into spend_rollup_next
        select organization_id, day, guardrail_id, key_hash, workspace_id, member_user_id, model,
               provider, byok, requests, prompt_tokens, completion_tokens, cost_micros, api, ''
          from spend_rollup`.execute(db);
      await db.schema.dropTable("spend_rollup").execute();
      await db.schema.alterTable("spend_rollup_next").renameTo("spend_rollup").execute();
      await db.schema
        .createIndex("spend_rollup_key")
        .on("spend_rollup")
        .columns(["organization_id", "key_hash", "day"])
        .execute();
      await db.schema
        .createIndex("spend_rollup_member")
        .on("spend_rollup")
        .columns(["organization_id", "member_user_id", "day"])
        .execute();
      // PostgreSQL only, like 0011: the batch's rollup writes the session.
      if (dialect === "postgres") await sql.raw(postgresScript("0012_spend_by_session.sql")).execute(db);
    },
  },
});

export async function migrateToLatest(db: AnyDb, dialect: Dialect): Promise<void> {
  await migrate(db, dialect);
}

/**
 * Runs the history up to and including the migration named `last`: a database as the version that
 * ended there left it, for the tests that upgrade one (test/storage/).
 */
export async function migrateUpTo(db: AnyDb, dialect: Dialect, last: string): Promise<void> {
  await migrate(db, dialect, last);
}

async function migrate(db: AnyDb, dialect: Dialect, last?: string): Promise<void> {
  const provider: MigrationProvider = {
    async getMigrations() {
      return migrationsFor(dialect);
    },
  };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await (last === undefined
    ? migrator.migrateToLatest()
    : migrator.migrateTo(last));
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName);
    throw new Error(`database migration failed: ${reason}`);
  }
}
