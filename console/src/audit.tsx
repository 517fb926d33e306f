import { useState } from "preact/hooks";
import { when } from "./api.js";
import { PagedTable, usePaged } from "./ui.js";

interface Entry {
  id: string;
  action: string;
  resource_type: string;
  resource_id: string;
  actor_key_hash: string;
  before: unknown;
  after: unknown;
  created_at: string;
}

const RESOURCE_TYPES = ["", "guardrail", "key", "member", "workspace"];

/** A datetime-local value is the browser's local time; the API compares UTC instants. */
function instant(local: string): string | undefined {
  if (!local) return undefined;
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

export function AuditLog() {
  const [actor, setActor] = useState("");
  const [type, setType] = useState("");
  const [resource, setResource] = useState("");
  const [since, setSince] = useState("");
  const [until, setUntil] = useState("");
  const query = new URLSearchParams();
  if (actor.trim()) query.set("actor_key_hash", actor.trim());
  if (type) query.set("resource_type", type);
  if (resource.trim()) query.set("resource_id", resource.trim());
  const from = instant(since);
  const to = instant(until);
  if (from) query.set("since", from);
  if (to) query.set("until", to);
  const paged = usePaged<Entry>(`/audit-log?${query}`);
  return (
    <section>
      <h1>Audit log</h1>
      <form class="inline" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <div>
          <label for="audit-actor">Actor (key hash, cli or system)</label>
          <input id="audit-actor" value={actor} onChange={(e) => setActor(e.currentTarget.value)} />
        </div>
        <div>
          <label for="audit-type">Resource type</label>
          <select id="audit-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            {RESOURCE_TYPES.map((t) => (
              <option value={t} key={t}>
                {t || "any"}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="audit-resource">Resource id</label>
          <input id="audit-resource" value={resource} onChange={(e) => setResource(e.currentTarget.value)} />
        </div>
        <div>
          <label for="audit-since">From</label>
          <input
            id="audit-since"
            type="datetime-local"
            value={since}
            onChange={(e) => setSince(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="audit-until">Until</label>
          <input
            id="audit-until"
            type="datetime-local"
            value={until}
            onChange={(e) => setUntil(e.currentTarget.value)}
          />
        </div>
      </form>
      <PagedTable
        paged={paged}
        empty="No changes match these filters."
        caption="Management changes, newest first"
        head={["When", "Action", "Resource", "Actor", "Change"]}
        row={(e) => (
          <tr key={e.id}>
            <td>{when(e.created_at)}</td>
            <td>{e.action}</td>
            <td>
              {e.resource_type} <code>{e.resource_id}</code>
            </td>
            <td>
              <code title={e.actor_key_hash}>{e.actor_key_hash.slice(0, 12)}</code>
            </td>
            <td>
              <details>
                <summary>Before and after</summary>
                <pre>{JSON.stringify({ before: e.before, after: e.after }, null, 2)}</pre>
              </details>
            </td>
          </tr>
        )}
      />
    </section>
  );
}
