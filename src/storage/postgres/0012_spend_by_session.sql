-- The rollup of 0011 with the session of each settled request (docs/behaviour.md#usage-by-session)
-- in its rollup rows, whose key now has the session ('' for none). The ledger row takes its
-- session_id from the batch's JSON as it is (null when absent, as an instance still running the
-- version before this migration writes it).
create or replace function guardrails_roll_up(l jsonb, guardrail_ids jsonb) returns void
language plpgsql as $fn$
declare
  g text;
begin
  for g in select '' union all select value from jsonb_array_elements_text(guardrail_ids) loop
    insert into spend_rollup as r (organization_id, day, guardrail_id, key_hash, workspace_id,
      member_user_id, model, provider, byok, requests, prompt_tokens, completion_tokens, cost_micros, api,
      session_id)
    values (
      l->>'organization_id', substr(l->>'created_at', 1, 10), g, l->>'key_hash', l->>'workspace_id',
      coalesce(l->>'member_user_id', ''), l->>'model', l->>'provider', (l->>'byok')::integer, 1,
      (l->>'prompt_tokens')::bigint, (l->>'completion_tokens')::bigint, (l->>'cost_micros')::bigint,
      coalesce(l->>'api', 'chat'), coalesce(l->>'session_id', ''))
    on conflict (organization_id, day, guardrail_id, key_hash, model, provider, byok, api, session_id)
    do update set
      requests = r.requests + 1,
      prompt_tokens = r.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = r.completion_tokens + excluded.completion_tokens,
      cost_micros = r.cost_micros + excluded.cost_micros;
  end loop;
end
$fn$;
