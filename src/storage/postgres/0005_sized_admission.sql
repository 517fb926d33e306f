-- The batch of 0004 with one more kind of write, `admit`: the reservation sized by the rule of
-- src/domain/budget-admission.ts, judged on the counters as locked now and written with a condition
-- that keeps every counter within its limit. Answers a JSON array: for an admit an object
-- (`admitted`, and `tokens`, `capped`, `amount_micros`, or `index`, `reason`, `tokens_that_fit`),
-- for the other writes what guardrails_spend_batch answers. The other writes are that function's,
-- one at a time, after this one has locked every counter of the batch in key order.
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
