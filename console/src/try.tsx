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
  messages: { role: string; content: unknown }[];
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

/** The dry run: what the gateway would decide for a key and a message, with nothing sent or spent. */
export function TryRequest() {
  const [keys, setKeys] = useState<Key[] | undefined>();
  const [catalog, setCatalog] = useState<Model[]>([]);
  const [key, setKey] = useState("");
  const [region, setRegion] = useState("global");
  const [model, setModel] = useState("");
  const [message, setMessage] = useState("");
  const [decision, setDecision] = useState<Decision | undefined>();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    listAll<Key>("/keys").then(
      (list) => {
        setKeys(list);
        setKey((k) => k || list[0]?.hash || "");
      },
      (e) => setError(describe(e)),
    );
    models().then(
      (all) => {
        // The dry run here sends a chat request: an embedding model would be a 400 (docs/gateway.md#provider-apis).
        const list = all.filter((m) => m.api !== "embeddings");
        setCatalog(list);
        // A model no configured provider serves is refused (503) whatever the guardrails say, so
        // the first guess is one this installation serves (docs/behaviour.md#console-try-model).
        setModel((m) => m || (list.find(servable) ?? list[0])?.id || "");
      },
      (e) => setError(describe(e)),
    );
  }, []);
  const served = catalog.filter(servable);
  const unserved = catalog.filter((m) => !servable(m));
  const run = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError("");
    setDecision(undefined);
    try {
      const { data } = await api<{ data: Decision }>("POST", "/guardrails/evaluate", {
        key_hash: key,
        ingress_region: region,
        model,
        messages: [{ role: "user", content: message }],
      });
      setDecision(data);
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
          {served.length === 0
            ? "No provider of any model is configured on this installation: every request would be refused (503)."
            : catalog.some((m) => m.id === model && !servable(m))
              ? "No provider of this model is configured here: the gateway would refuse it (503)."
              : `${served.length} of ${catalog.length} models are served by a provider configured here.`}
        </p>
        <label for="try-message">Message</label>
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
      {decision && <DecisionView d={decision} />}
    </section>
  );
}

function DecisionView({ d }: { d: Decision }) {
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
      <h3>The messages as they would be forwarded</h3>
      <pre id="decision-redacted">{d.messages.map((m) => `${m.role}: ${textOf(m.content)}`).join("\n")}</pre>
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
