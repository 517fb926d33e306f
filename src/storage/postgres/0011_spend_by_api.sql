-- The batch of 0005 with the API of each settled request (docs/behaviour.md#usage-by-api) in the
-- ledger row and in its rollup rows, whose key now has the API. A ledger entry that names no API
-- comes from an instance still running the version before this migration (one instance is upgraded
-- first, docs/deployment.md): it was a chat completion, as every row that version wrote.
create or replace function guardrails_roll_up(l jsonb, guardrail_ids jsonb) returns void
language plpgsql as $fn$
declare
  g text;
begin
  for g in select '' union all select value from jsonb_array_elements_text(guardrail_ids) loop
    insert into spend_rollup as r (organization_id, day, guardrail_id, key_hash, workspace_id,
      member_user_id, model, provider, byok, requests, prompt_tokens, completion_tokens, cost_micros, api)
    values (
      l->>'organization_id', substr(l->>'created_at', 1, 10), g, l->>'key_hash', l->>'workspace_id',
      coalesce(l->>'member_user_id', ''), l->>'model', l->>'provider', (l->>'byok')::integer, 1,
      (l->>'prompt_tokens')::bigint, (l->>'completion_tokens')::bigint, (l->>'cost_micros')::bigint,
      coalesce(l->>'api', 'chat'))
    on conflict (organization_id, day, guardrail_id, key_hash, model, provider, byok, api) do update set
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
      -- jsonb_populate_record writes null for a missing member, which the column refuses.
      if not (op->'ledger' ? 'api') then
        op := jsonb_set(op, '{ledger,api}', '"chat"');
      end if;
      outcomes := outcomes || to_jsonb((guardrails_spend_batch(jsonb_build_array(op)))[1]);
      perform guardrails_roll_up(op->'ledger', coalesce(op->'guardrail_ids', '[]'::jsonb));
    else
      outcomes := outcomes || to_jsonb((guardrails_spend_batch(jsonb_build_array(op)))[1]);
    end if;
  end loop;
  return outcomes;
end
$fn$;
