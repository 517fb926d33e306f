-- Runs a batch of spend writes (reserve, settle, release) in order, with the same statements and
-- outcomes as spend-store.ts runs them one by one, and answers one number per write: for a reserve
-- -1 when admitted, else the index of the counter that had nothing left; 0 for the others. One call
-- is one round trip, however many writes it carries: the counter row a budget's requests all update
-- is locked from the first write of a batch to its commit, so a batch that waited on a round trip per
-- statement held that lock for milliseconds while every other batch queued behind it.
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
        -- Nothing left on counter `taken`: what was added to the earlier ones is taken back.
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
