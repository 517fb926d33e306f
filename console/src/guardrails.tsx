import { useEffect, useState } from "preact/hooks";
import { api, type BuiltinFilter, describe, type Guardrail, issuesByField, type Page } from "./api.js";
import { go } from "./route.js";

const PAGE_SIZE = 25;
const BUILTINS = [
  "email",
  "phone",
  "ssn",
  "credit-card",
  "ip-address",
  "secrets",
  "person-name",
  "address",
  "regex-prompt-injection",
];
const ACTIONS = ["block", "redact", "flag"] as const;

export function GuardrailList() {
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<Page<Guardrail> | undefined>();
  const [error, setError] = useState("");
  const load = () =>
    api<Page<Guardrail>>("GET", `/guardrails?offset=${offset}&limit=${PAGE_SIZE}`).then(setPage, (e) =>
      setError(describe(e)),
    );
  useEffect(() => {
    load();
  }, [offset]);
  const remove = async (g: Guardrail) => {
    if (!confirm(`Delete the guardrail “${g.name}”? Keys it governs lose its rules.`)) return;
    try {
      await api("DELETE", `/guardrails/${g.id}`);
      await load();
    } catch (e) {
      setError(describe(e));
    }
  };
  return (
    <section>
      <h1>Guardrails</h1>
      <p>
        <a class="button" href="#/guardrails/new">
          New guardrail
        </a>
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!page && !error && <p class="loading">Loading…</p>}
      {page && page.data.length === 0 && <p class="empty">No guardrails yet.</p>}
      {page && page.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Filters</th>
              <th scope="col">Budget</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.data.map((g) => (
              <tr key={g.id}>
                <td>
                  <a href={`#/guardrails/${g.id}`}>{g.name}</a>
                </td>
                <td>
                  {[
                    ...(g.content_filter_builtins ?? []).map((f) => `${f.slug} (${f.action})`),
                    ...(g.content_filters ?? []).map((f) => `/${f.pattern}/ (${f.action})`),
                  ].join(", ") || "none"}
                </td>
                <td>{g.limit_usd === null ? "none" : `$${g.limit_usd} ${g.reset_interval}`}</td>
                <td>
                  <button type="button" class="danger" onClick={() => remove(g)}>
                    Delete<span class="sr-only"> {g.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page && <Pager offset={offset} total={page.total_count} onMove={setOffset} />}
    </section>
  );
}

export function Pager(props: { offset: number; total: number; onMove: (offset: number) => void }) {
  if (props.total <= PAGE_SIZE) return null;
  const last = Math.min(props.offset + PAGE_SIZE, props.total);
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        disabled={props.offset === 0}
        onClick={() => props.onMove(Math.max(0, props.offset - PAGE_SIZE))}
      >
        Previous
      </button>
      <span>
        {props.offset + 1}–{last} of {props.total}
      </span>
      <button
        type="button"
        disabled={last >= props.total}
        onClick={() => props.onMove(props.offset + PAGE_SIZE)}
      >
        Next
      </button>
    </nav>
  );
}

interface Draft {
  name: string;
  description: string;
  allowed_models: string;
  limit_usd: string;
  reset_interval: string;
  builtins: Record<string, BuiltinFilter["action"] | "">;
  pattern: string;
  pattern_action: BuiltinFilter["action"];
}

const EMPTY: Draft = {
  name: "",
  description: "",
  allowed_models: "",
  limit_usd: "",
  reset_interval: "",
  builtins: {},
  pattern: "",
  pattern_action: "block",
};

function draftOf(g: Guardrail): Draft {
  const builtins: Draft["builtins"] = {};
  for (const f of g.content_filter_builtins ?? []) builtins[f.slug] = f.action;
  const custom = g.content_filters?.[0];
  return {
    name: g.name,
    description: g.description ?? "",
    allowed_models: (g.allowed_models ?? []).join(", "),
    limit_usd: g.limit_usd === null ? "" : String(g.limit_usd),
    reset_interval: g.reset_interval ?? "",
    builtins,
    pattern: custom?.pattern ?? "",
    pattern_action: custom?.action ?? "block",
  };
}

/** The body as the API takes it: empty fields are "none", numbers stay as typed so the API judges them. */
function bodyOf(d: Draft): Record<string, unknown> {
  const models = d.allowed_models
    .split(",")
    .map((m) => m.trim())
    .filter(Boolean);
  const builtins = Object.entries(d.builtins)
    .filter(([, action]) => action !== "")
    .map(([slug, action]) => ({ slug, action }));
  return {
    name: d.name,
    description: d.description || null,
    allowed_models: models.length > 0 ? models : null,
    limit_usd: d.limit_usd.trim() === "" ? null : Number(d.limit_usd),
    reset_interval: d.reset_interval || null,
    content_filter_builtins: builtins.length > 0 ? builtins : null,
    content_filters: d.pattern ? [{ pattern: d.pattern, action: d.pattern_action }] : null,
  };
}

function FieldErrors({ id, messages }: { id: string; messages: string[] | undefined }) {
  if (!messages?.length) return null;
  return (
    <p class="field-error" id={`${id}-error`}>
      {messages.join("; ")}
    </p>
  );
}

export function GuardrailForm({ id }: { id?: string }) {
  const [draft, setDraft] = useState<Draft | undefined>(id ? undefined : EMPTY);
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (id)
      api<{ data: Guardrail }>("GET", `/guardrails/${id}`).then((r) => setDraft(draftOf(r.data)), setFailure);
  }, [id]);
  if (!draft) return failure ? <p class="error">{describe(failure)}</p> : <p class="loading">Loading…</p>;
  const { fields, other } = issuesByField(failure);
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const invalid = (name: string) =>
    fields[name] ? { "aria-invalid": true, "aria-describedby": `${name}-error` } : {};
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setFailure(undefined);
    try {
      if (id) await api("PATCH", `/guardrails/${id}`, bodyOf(draft));
      else await api("POST", "/guardrails", bodyOf(draft));
      go("/guardrails");
    } catch (err) {
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  const summary = failure && Object.keys(fields).length === 0 ? describe(failure) : other.join("; ");
  return (
    <section>
      <h1>{id ? "Edit guardrail" : "New guardrail"}</h1>
      <form onSubmit={save} noValidate>
        <label for="name">Name</label>
        <input
          id="name"
          value={draft.name}
          onInput={(e) => set({ name: e.currentTarget.value })}
          {...invalid("name")}
        />
        <FieldErrors id="name" messages={fields.name} />

        <label for="description">Description</label>
        <input
          id="description"
          value={draft.description}
          onInput={(e) => set({ description: e.currentTarget.value })}
          {...invalid("description")}
        />
        <FieldErrors id="description" messages={fields.description} />

        <label for="allowed_models">Allowed models (comma-separated; empty allows all)</label>
        <input
          id="allowed_models"
          value={draft.allowed_models}
          onInput={(e) => set({ allowed_models: e.currentTarget.value })}
          {...invalid("allowed_models")}
        />
        <FieldErrors id="allowed_models" messages={fields.allowed_models} />

        <fieldset>
          <legend>Budget</legend>
          <label for="limit_usd">Limit (USD)</label>
          <input
            id="limit_usd"
            inputMode="decimal"
            value={draft.limit_usd}
            onInput={(e) => set({ limit_usd: e.currentTarget.value })}
            {...invalid("limit_usd")}
          />
          <FieldErrors id="limit_usd" messages={fields.limit_usd} />
          <label for="reset_interval">Resets</label>
          <select
            id="reset_interval"
            value={draft.reset_interval}
            onChange={(e) => set({ reset_interval: e.currentTarget.value })}
            {...invalid("reset_interval")}
          >
            <option value="">never (no budget)</option>
            <option value="daily">daily</option>
            <option value="weekly">weekly</option>
            <option value="monthly">monthly</option>
          </select>
          <FieldErrors id="reset_interval" messages={fields.reset_interval} />
        </fieldset>

        <fieldset>
          <legend>Builtin filters</legend>
          {BUILTINS.map((slug) => (
            <div class="row" key={slug}>
              <label for={`builtin-${slug}`}>{slug}</label>
              <select
                id={`builtin-${slug}`}
                value={draft.builtins[slug] ?? ""}
                onChange={(e) =>
                  set({
                    builtins: {
                      ...draft.builtins,
                      [slug]: e.currentTarget.value as BuiltinFilter["action"] | "",
                    },
                  })
                }
              >
                <option value="">off</option>
                {ACTIONS.map((a) => (
                  <option value={a} key={a}>
                    {a}
                  </option>
                ))}
              </select>
            </div>
          ))}
          <FieldErrors id="content_filter_builtins" messages={fields.content_filter_builtins} />
        </fieldset>

        <fieldset>
          <legend>Custom pattern (RE2)</legend>
          <label for="pattern">Pattern</label>
          <input
            id="pattern"
            value={draft.pattern}
            onInput={(e) => set({ pattern: e.currentTarget.value })}
            {...invalid("content_filters")}
          />
          <label for="pattern_action">Action</label>
          <select
            id="pattern_action"
            value={draft.pattern_action}
            onChange={(e) => set({ pattern_action: e.currentTarget.value as BuiltinFilter["action"] })}
          >
            {ACTIONS.map((a) => (
              <option value={a} key={a}>
                {a}
              </option>
            ))}
          </select>
          <FieldErrors id="content_filters" messages={fields.content_filters} />
        </fieldset>

        {summary && (
          <p class="error" role="alert">
            {summary}
          </p>
        )}
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? "Saving…" : "Save"}
          </button>
          <a href="#/guardrails">Cancel</a>
        </div>
      </form>
    </section>
  );
}
