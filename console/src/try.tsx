import { useEffect, useState } from "preact/hooks";
import { api, describe, type Key, listAll, type Model, models, REGIONS, servable, usd, when } from "./api.js";
import { ErrorText } from "./ui.js";

interface Decision {
  allowed: boolean;
  status: number;
  violations: { rule: string; status: number; message: string; metadata: unknown }[];
  guardrails: { layer: string; id: string; name: string }[];
  model: string | null;
  endpoints: { provider: string; region: string }[];
  detections: {
    filter: { type: string; slug?: string; pattern?: string };
    action: string;
    label: string;
    count: number;
  }[];
  /** The chat request's messages as they would be forwarded; null for an API without them. */
  messages: { role: string; content: unknown }[] | null;
  /** The whole request as it would be forwarded, in its API's shape. */
  request: Record<string, unknown>;
  budgets: { layer: string; scope: string; limit_usd: number; spend_usd: number; resets_at: string }[];
  worst_case_cost_usd: number;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((part) => (part && typeof part === "object" && "text" in part ? String(part.text) : ""))
      .join("");
  return JSON.stringify(content);
}

/**
 * An API a request can be tried on (docs/behaviour.md#console-try-api): the dry run's `api`, how the
 * dry run's request is made from the message typed, which catalog models it offers, and how the
 * text it would forward is shown.
 */
export interface TryApi {
  id: string;
  label: string;
  /** What the text typed is, in this API's request. */
  textLabel: string;
  /** The request's own fields for `message`; the model, key and region are added to them. */
  body(message: string): Record<string, unknown>;
  /** A model of another API would be a 400 (docs/gateway.md#provider-apis): only its own are offered. */
  offers(model: Model): boolean;
  /** The heading over the forwarded text, and that text read from the forwarded request. */
  forwardedLabel: string;
  forwarded(d: Decision): string;
}

/** The texts of an embeddings request's `input`, one a line; token ids as written. */
function inputLines(input: unknown): string {
  const items = Array.isArray(input) && typeof input[0] !== "number" ? input : [input];
  return items.map((item) => (typeof item === "string" ? item : JSON.stringify(item))).join("\n");
}

/** The APIs of Try a request, in the picker's order: one more API is one more entry. */
export const TRY_APIS: readonly TryApi[] = [
  {
    id: "chat",
    label: "Chat completions",
    textLabel: "Message",
    body: (message) => ({ messages: [{ role: "user", content: message }] }),
    offers: (m) => (m.api ?? "chat") === "chat",
    forwardedLabel: "The messages as they would be forwarded",
    forwarded: (d) => (d.messages ?? []).map((m) => `${m.role}: ${textOf(m.content)}`).join("\n"),
  },
  {
    id: "responses",
    label: "Responses",
    textLabel: "Input",
    body: (message) => ({ input: message }),
    // The Responses API serves the chat models (docs/gateway.md#responses).
    offers: (m) => (m.api ?? "chat") === "chat",
    forwardedLabel: "The input as it would be forwarded",
    forwarded: (d) => inputLines(d.request.input),
  },
  {
    id: "messages",
    label: "Anthropic Messages",
    textLabel: "Message",
    // max_tokens is required by the Messages API.
    body: (message) => ({ max_tokens: 1024, messages: [{ role: "user", content: message }] }),
    offers: (m) => (m.api ?? "chat") === "chat",
    forwardedLabel: "The messages as they would be forwarded",
    forwarded: (d) =>
      ((d.request.messages ?? []) as { role: string; content: unknown }[])
        .map((m) => `${m.role}: ${textOf(m.content)}`)
        .join("\n"),
  },
  {
    id: "embeddings",
    label: "Embeddings",
    textLabel: "Input to embed",
    body: (message) => ({ input: message }),
    offers: (m) => m.api === "embeddings",
    forwardedLabel: "The input as it would be forwarded",
    forwarded: (d) => inputLines(d.request.input),
  },
];

/** The dry run: what the gateway would decide for a key and a message, with nothing sent or spent. */
export function TryRequest() {
  const [keys, setKeys] = useState<Key[] | undefined>();
  const [all, setAll] = useState<Model[]>([]);
  const [apiId, setApiId] = useState(TRY_APIS[0]?.id ?? "chat");
  const [key, setKey] = useState("");
  const [region, setRegion] = useState("global");
  const [picked, setModel] = useState("");
  const [message, setMessage] = useState("");
  const [decision, setDecision] = useState<Decision | undefined>();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  /** The API of the decision shown, which the picker may have left since. */
  const [shownApi, setShownApi] = useState<TryApi | undefined>();
  useEffect(() => {
    listAll<Key>("/keys").then(
      (list) => {
        setKeys(list);
        setKey((k) => k || list[0]?.hash || "");
      },
      (e) => setError(describe(e)),
    );
    models().then(
      (list) => setAll(list),
      (e) => setError(describe(e)),
    );
  }, []);
  const chosen = TRY_APIS.find((a) => a.id === apiId) ?? (TRY_APIS[0] as TryApi);
  const catalog = all.filter(chosen.offers);
  // The model picked, while the chosen API offers it; else (none picked yet, or one of the API left)
  // the API's own first guess.
  const model = catalog.some((m) => m.id === picked) ? picked : firstModel(catalog);
  const pickApi = (id: string) => {
    setApiId(id);
    setDecision(undefined);
  };
  const served = catalog.filter(servable);
  const unserved = catalog.filter((m) => !servable(m));
  const run = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError("");
    setDecision(undefined);
    try {
      const { data } = await api<{ data: Decision }>("POST", "/guardrails/evaluate", {
        ...chosen.body(message),
        key_hash: key,
        ingress_region: region,
        api: chosen.id,
        model,
      });
      setDecision(data);
      setShownApi(chosen);
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };
  if (keys && keys.length === 0)
    return (
      <section>
        <h1>Try a request</h1>
        <p class="empty">
          There is no inference key to try a request with: <a href="#/keys">create one</a>.
        </p>
      </section>
    );
  return (
    <section>
      <h1>Try a request</h1>
      <p class="hint">
        A dry run: the gateway's decision for this key and message. Nothing is sent to a provider or spent.
      </p>
      <form onSubmit={run}>
        <label for="try-key">Key</label>
        <select id="try-key" value={key} onChange={(e) => setKey(e.currentTarget.value)} disabled={!keys}>
          {(keys ?? []).map((k) => (
            <option value={k.hash} key={k.hash}>
              {k.name} ({k.label})
            </option>
          ))}
        </select>
        <label for="try-region">Region address the request arrives through</label>
        <select id="try-region" value={region} onChange={(e) => setRegion(e.currentTarget.value)}>
          {REGIONS.map((r) => (
            <option value={r} key={r}>
              {r}
            </option>
          ))}
        </select>
        <label for="try-api">API</label>
        <select id="try-api" value={chosen.id} onChange={(e) => pickApi(e.currentTarget.value)}>
          {TRY_APIS.map((a) => (
            <option value={a.id} key={a.id}>
              {a.label}
            </option>
          ))}
        </select>
        <label for="try-model">Model</label>
        <select
          id="try-model"
          value={model}
          onChange={(e) => setModel(e.currentTarget.value)}
          aria-describedby="try-model-hint"
        >
          {served.length > 0 && (
            <optgroup label="Served here">
              {served.map((m) => (
                <option value={m.id} key={m.id}>
                  {m.name}
                </option>
              ))}
            </optgroup>
          )}
          {unserved.length > 0 && (
            <optgroup label="No provider configured here">
              {unserved.map((m) => (
                <option value={m.id} key={m.id}>
                  {m.name} (not served here)
                </option>
              ))}
            </optgroup>
          )}
        </select>
        <p class="hint" id="try-model-hint">
          {catalog.length === 0
            ? "The catalog has no model on this API."
            : served.length === 0
              ? "No provider of any model on this API is configured on this installation: every request would be refused (503)."
              : catalog.some((m) => m.id === model && !servable(m))
                ? "No provider of this model is configured here: the gateway would refuse it (503)."
                : `${served.length} of ${catalog.length} models are served by a provider configured here.`}
        </p>
        <label for="try-message">{chosen.textLabel}</label>
        <textarea
          id="try-message"
          rows={4}
          value={message}
          onInput={(e) => setMessage(e.currentTarget.value)}
        />
        <div class="actions">
          <button type="submit" disabled={busy || !key || !model}>
            {busy ? "Evaluating…" : "Evaluate"}
          </button>
        </div>
      </form>
      <ErrorText message={error} />
      {decision && shownApi && <DecisionView d={decision} on={shownApi} />}
    </section>
  );
}

/**
 * A model no configured provider serves is refused (503) whatever the guardrails say, so the first
 * guess is one this installation serves (docs/behaviour.md#console-try-model).
 */
function firstModel(list: Model[]): string {
  return (list.find(servable) ?? list[0])?.id ?? "";
}

function DecisionView({ d, on }: { d: Decision; on: TryApi }) {
  return (
    <div class="decision" id="decision" aria-live="polite">
      <h2 class={d.allowed ? "allowed" : "refused"} id="decision-verdict">
        {d.allowed ? "Allowed" : `Refused (${d.status})`}
      </h2>
      <h3>Reasons</h3>
      {d.violations.length === 0 ? (
        <p>No rule refuses this request.</p>
      ) : (
        <ul id="decision-reasons">
          {d.violations.map((v) => (
            <li key={`${v.rule}-${v.message}`}>
              <strong>{v.rule}</strong> ({v.status}): {v.message}
            </li>
          ))}
        </ul>
      )}
      <h3>Filters that matched</h3>
      {d.detections.length === 0 ? (
        <p>None.</p>
      ) : (
        <ul>
          {d.detections.map((h) => (
            <li key={`${h.filter.slug ?? h.filter.pattern}-${h.action}`}>
              {h.filter.slug ?? `/${h.filter.pattern}/`}: {h.action} × {h.count} ({h.label})
            </li>
          ))}
        </ul>
      )}
      <h3>{on.forwardedLabel}</h3>
      <pre id="decision-redacted">{on.forwarded(d)}</pre>
      <details>
        <summary>The whole request as it would be forwarded</summary>
        <pre id="decision-request">{JSON.stringify(d.request, null, 2)}</pre>
      </details>
      <h3>Endpoints chosen</h3>
      {d.endpoints.length === 0 ? (
        <p>None.</p>
      ) : (
        <ul id="decision-endpoints">
          {d.endpoints.map((e) => (
            <li key={`${e.provider}-${e.region}`}>
              {e.provider} in {e.region}
            </li>
          ))}
        </ul>
      )}
      <h3>Guardrails applied</h3>
      <ul>
        {d.guardrails.map((g) => (
          <li key={g.id}>
            <a href={`#/guardrails/${g.id}`}>{g.name}</a> ({g.layer.replace("_", " ")})
          </li>
        ))}
      </ul>
      {d.budgets.length > 0 && (
        <>
          <h3>Budgets</h3>
          <ul>
            {d.budgets.map((b) => (
              <li key={`${b.layer}-${b.scope}`}>
                {b.layer} ({b.scope}): {usd(b.spend_usd)} of {usd(b.limit_usd)} spent, resets{" "}
                {when(b.resets_at)}
              </li>
            ))}
          </ul>
          <p>At most {usd(d.worst_case_cost_usd)} for this request.</p>
        </>
      )}
    </div>
  );
}
