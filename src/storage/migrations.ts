import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";

/**
 * The migration history, in code so it ships with the build. Written with Kysely's schema builder,
 * which speaks both SQLite and PostgreSQL: one history per database, the same in intent.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types, which change over time.
type AnyDb = Kysely<any>;

export type Dialect = "sqlite" | "postgres";

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
      // take the last of a budget (pitfalls: budgets overspent under concurrency).
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
      // PostgreSQL only: the gateway's spend writes of a batch in one call (postgres-spend.ts).
      // SQLite runs them in-process, where a statement costs no round trip.
      if (dialect === "postgres") await sql.raw(SPEND_BATCH_FUNCTION).execute(db);
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
      if (dialect === "postgres") await sql.raw(ADMIT_BATCH_FUNCTION).execute(db);
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
});

/**
 * Runs a batch of spend writes (reserve, settle, release) in order, with the same statements and
 * outcomes as spend-store.ts runs them one by one, and answers one number per write: for a reserve
 * -1 when admitted, else the index of the counter that had nothing left; 0 for the others. One call
 * is one round trip, however many writes it carries: the counter row a budget's requests all update
 * is locked from the first write of a batch to its commit, so a batch that waited on a round trip per
 * statement held that lock for milliseconds while every other batch queued behind it.
 */
const SPEND_BATCH_FUNCTION = `
-- PL/pgSQL rather than SQL: its statement's plan is kept for the session instead of made per call.
create or replace function guardrails_settle_counter(k jsonb, reserved bigint, actual bigint) returns void
language plpgsql as $fn$
begin
  update budget_usage set
    reserved_micros = case when reserved_micros > reserved then reserved_micros - reserved else 0 end,
    spent_micros = spent_micros + actual
  where guardrail_id = k->>'guardrail_id' and scope = k->>'scope' and subject = k->>'subject'
    and reset_interval = k->>'reset_interval' and window_start = k->>'window_start';
end
$fn$;

create or replace function guardrails_spend_batch(ops jsonb) returns integer[]
language plpgsql as $fn$
declare
  op jsonb;
  c jsonb;
  k jsonb;
  outcomes integer[] := '{}';
  amount bigint;
  taken integer;
  changed integer;
begin
  -- Every counter of the batch that exists already, locked first and in one order (its key): two
  -- batches that touch the same counters in other orders (two keys of one member, say) then wait for
  -- each other instead of each holding a counter the other needs, which PostgreSQL would end after
  -- a second with a deadlock error.
  perform 1 from budget_usage u
   where (u.guardrail_id, u.scope, u.subject, u.reset_interval, u.window_start) in (
     select t.ck->>'guardrail_id', t.ck->>'scope', t.ck->>'subject', t.ck->>'reset_interval', t.ck->>'window_start'
       from (select case when o->>'kind' = 'reserve' then e->'key' else e end as ck
               from jsonb_array_elements(ops) o,
                    jsonb_array_elements(case
                      when o->>'kind' = 'reserve' then o->'counters'
                      when jsonb_typeof(o->'reservation') = 'object' then o->'reservation'->'counters'
                      else '[]'::jsonb end) e) t)
   order by u.guardrail_id, u.scope, u.subject, u.reset_interval, u.window_start
   for update;
  for op in select value from jsonb_array_elements(ops) loop
    case op->>'kind'
    when 'reserve' then
      amount := (op->>'amount')::bigint;
      taken := 0;
      for c in select value from jsonb_array_elements(op->'counters') loop
        -- A new counter is inserted unconditionally, so a limit with nothing to give is refused here.
        exit when (c->>'limit')::numeric <= 0;
        k := c->'key';
        insert into budget_usage as u
          (organization_id, guardrail_id, scope, subject, reset_interval, window_start, spent_micros, reserved_micros)
        values (op->>'organization_id', k->>'guardrail_id', k->>'scope', k->>'subject',
                k->>'reset_interval', k->>'window_start', 0, amount)
        on conflict (guardrail_id, scope, subject, reset_interval, window_start)
        do update set reserved_micros = u.reserved_micros + excluded.reserved_micros
        where u.spent_micros + u.reserved_micros < (c->>'limit')::numeric;
        get diagnostics changed = row_count;
        exit when changed <> 1;
        taken := taken + 1;
      end loop;
      if taken = jsonb_array_length(op->'counters') then
        insert into budget_reservations
          select * from jsonb_populate_record(null::budget_reservations, op->'row');
        outcomes := outcomes || -1;
      else
        -- Nothing left on counter \`taken\`: what was added to the earlier ones is taken back.
        for i in 0 .. taken - 1 loop
          perform guardrails_settle_counter(op->'counters'->i->'key', amount, 0);
        end loop;
        outcomes := outcomes || taken;
      end if;
    when 'settle' then
      if op->'reservation' <> 'null'::jsonb then
        -- A reservation the expiry sweep already released is not taken back twice.
        delete from budget_reservations where id = op->'reservation'->>'id';
        get diagnostics changed = row_count;
        amount := case when changed = 1 then (op->'reservation'->>'amount')::bigint else 0 end;
        for k in select value from jsonb_array_elements(op->'reservation'->'counters') loop
          perform guardrails_settle_counter(k, amount, (op->>'cost')::bigint);
        end loop;
      end if;
      insert into spend_ledger select * from jsonb_populate_record(null::spend_ledger, op->'ledger');
      outcomes := outcomes || 0;
    when 'release' then
      delete from budget_reservations where id = op->'reservation'->>'id';
      get diagnostics changed = row_count;
      if changed = 1 then
        for k in select value from jsonb_array_elements(op->'reservation'->'counters') loop
          perform guardrails_settle_counter(k, (op->'reservation'->>'amount')::bigint, 0);
        end loop;
      end if;
      outcomes := outcomes || 0;
    end case;
  end loop;
  return outcomes;
end
$fn$;
`;

/**
 * The batch of 0004 with one more kind of write, `admit`: the reservation sized by the rule of
 * src/domain/budget-admission.ts, judged on the counters as locked now and written with a condition
 * that keeps every counter within its limit. Answers a JSON array: for an admit an object
 * (`admitted`, and `tokens`, `capped`, `amount_micros`, or `index`, `reason`, `tokens_that_fit`),
 * for the other writes what guardrails_spend_batch answers. The other writes are that function's,
 * one at a time, after this one has locked every counter of the batch in key order.
 */
const ADMIT_BATCH_FUNCTION = `
create or replace function guardrails_admit(op jsonb) returns jsonb
language plpgsql as $fn$
declare
  c jsonb;
  k jsonb;
  idx integer := 0;
  lim numeric;
  s numeric;
  r numeric;
  settled_room numeric;
  room numeric := null;
  prompt numeric := (op->'ask'->'price'->>'promptMicros')::numeric;
  per numeric := (op->'ask'->'price'->>'perOutputTokenMicros')::numeric;
  wanted numeric := (op->'ask'->>'wanted')::numeric;
  minimum numeric;
  tokens numeric;
  amount numeric;
  refusal text := null;
  changed integer;
begin
  minimum := ceil(prompt + least((op->'ask'->>'minimal')::numeric, wanted) * per);
  for c in select value from jsonb_array_elements(op->'counters') loop
    k := c->'key';
    lim := (c->>'limit')::numeric;
    select u.spent_micros, u.reserved_micros into s, r from budget_usage u
     where u.guardrail_id = k->>'guardrail_id' and u.scope = k->>'scope' and u.subject = k->>'subject'
       and u.reset_interval = k->>'reset_interval' and u.window_start = k->>'window_start';
    if not found then s := 0; r := 0; end if;
    settled_room := lim - s;
    if settled_room <= 0 then refusal := 'budget_exhausted';
    elsif settled_room < minimum then refusal := 'request_exceeds_budget';
    elsif settled_room - r < minimum then refusal := 'budget_reserved';
    end if;
    if refusal is not null then
      tokens := case when refusal = 'budget_exhausted' then 0
                     when per <= 0 then wanted
                     else greatest(0, least(wanted, floor((settled_room - prompt) / per))) end;
      return jsonb_build_object('admitted', false, 'index', idx, 'reason', refusal, 'tokens_that_fit', tokens);
    end if;
    room := least(coalesce(room, settled_room - r), settled_room - r);
    idx := idx + 1;
  end loop;
  amount := ceil(prompt + wanted * per);
  tokens := wanted;
  if room is not null and amount > room then
    tokens := least(wanted, floor((room - prompt) / per));
    amount := ceil(prompt + tokens * per);
  end if;
  idx := 0;
  for c in select value from jsonb_array_elements(op->'counters') loop
    k := c->'key';
    changed := 0;
    if amount <= (c->>'limit')::numeric then
      insert into budget_usage as u
        (organization_id, guardrail_id, scope, subject, reset_interval, window_start, spent_micros, reserved_micros)
      values (op->>'organization_id', k->>'guardrail_id', k->>'scope', k->>'subject',
              k->>'reset_interval', k->>'window_start', 0, amount)
      on conflict (guardrail_id, scope, subject, reset_interval, window_start)
      do update set reserved_micros = u.reserved_micros + excluded.reserved_micros
      where u.spent_micros + u.reserved_micros + excluded.reserved_micros <= (c->>'limit')::numeric;
      get diagnostics changed = row_count;
    end if;
    if changed <> 1 then
      -- Taken by a writer this batch's locks could not cover (a counter created meanwhile).
      for i in 0 .. idx - 1 loop
        perform guardrails_settle_counter(op->'counters'->i->'key', amount::bigint, 0);
      end loop;
      return jsonb_build_object('admitted', false, 'index', idx, 'reason', 'budget_reserved', 'tokens_that_fit', 0);
    end if;
    idx := idx + 1;
  end loop;
  insert into budget_reservations
    select * from jsonb_populate_record(null::budget_reservations,
      jsonb_set(op->'row', '{amount_micros}', to_jsonb(amount)));
  return jsonb_build_object('admitted', true, 'tokens', tokens, 'capped', tokens < wanted, 'amount_micros', amount);
end
$fn$;

create or replace function guardrails_roll_up(l jsonb, guardrail_ids jsonb) returns void
language plpgsql as $fn$
declare
  g text;
begin
  for g in select '' union all select value from jsonb_array_elements_text(guardrail_ids) loop
    insert into spend_rollup as r values (
      l->>'organization_id', substr(l->>'created_at', 1, 10), g, l->>'key_hash', l->>'workspace_id',
      coalesce(l->>'member_user_id', ''), l->>'model', l->>'provider', (l->>'byok')::integer, 1,
      (l->>'prompt_tokens')::bigint, (l->>'completion_tokens')::bigint, (l->>'cost_micros')::bigint)
    on conflict (organization_id, day, guardrail_id, key_hash, model, provider, byok) do update set
      requests = r.requests + 1,
      prompt_tokens = r.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = r.completion_tokens + excluded.completion_tokens,
      cost_micros = r.cost_micros + excluded.cost_micros;
  end loop;
end
$fn$;

create or replace function guardrails_spend_batch2(ops jsonb) returns jsonb
language plpgsql as $fn$
declare
  op jsonb;
  outcomes jsonb := '[]'::jsonb;
begin
  -- Every existing counter of the batch locked first, in key order, as in guardrails_spend_batch.
  perform 1 from budget_usage u
   where (u.guardrail_id, u.scope, u.subject, u.reset_interval, u.window_start) in (
     select t.ck->>'guardrail_id', t.ck->>'scope', t.ck->>'subject', t.ck->>'reset_interval', t.ck->>'window_start'
       from (select case when o->>'kind' in ('reserve', 'admit') then e->'key' else e end as ck
               from jsonb_array_elements(ops) o,
                    jsonb_array_elements(case
                      when o->>'kind' in ('reserve', 'admit') then o->'counters'
                      when jsonb_typeof(o->'reservation') = 'object' then o->'reservation'->'counters'
                      else '[]'::jsonb end) e) t)
   order by u.guardrail_id, u.scope, u.subject, u.reset_interval, u.window_start
   for update;
  for op in select value from jsonb_array_elements(ops) loop
    if op->>'kind' = 'admit' then
      outcomes := outcomes || jsonb_build_array(guardrails_admit(op));
    elsif op->>'kind' = 'settle' then
      outcomes := outcomes || to_jsonb((guardrails_spend_batch(jsonb_build_array(op)))[1]);
      perform guardrails_roll_up(op->'ledger', coalesce(op->'guardrail_ids', '[]'::jsonb));
    else
      outcomes := outcomes || to_jsonb((guardrails_spend_batch(jsonb_build_array(op)))[1]);
    end if;
  end loop;
  return outcomes;
end
$fn$;
`;

export async function migrateToLatest(db: AnyDb, dialect: Dialect): Promise<void> {
  const provider: MigrationProvider = {
    async getMigrations() {
      return migrationsFor(dialect);
    },
  };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName);
    throw new Error(`database migration failed: ${reason}`);
  }
}
