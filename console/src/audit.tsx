import { useEffect, useState } from "preact/hooks";
import { when } from "./api.js";
import { ErrorText, type Paged, Pager, usePaged } from "./ui.js";

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
      <AuditEntries paged={paged} />
    </section>
  );
}

/**
 * Entries as a list rather than a table: each entry's change takes the page's whole width, as a
 * field-by-field before and after (docs/behaviour.md#console-audit-entries).
 */
type ChangeReader = typeof import("./audit-change.js");

function AuditEntries({ paged }: { paged: Paged<Entry> }) {
  const { page, error, offset, setOffset } = paged;
  // The change reader is loaded with this page only, so the script every page loads stays small.
  const [reader, setReader] = useState<ChangeReader | undefined>();
  const [readerError, setReaderError] = useState("");
  useEffect(() => {
    import("./audit-change.js").then(
      (m) => setReader(m),
      () => setReaderError("The audit log could not be loaded. Reload the page to try again."),
    );
  }, []);
  if (!reader) return readerError ? <ErrorText message={readerError} /> : <p class="loading">Loading…</p>;
  return (
    <>
      <ErrorText message={error} />
      {!page && !error && <p class="loading">Loading…</p>}
      {page && page.data.length === 0 && <p class="empty">No changes match these filters.</p>}
      {page && page.data.length > 0 && (
        <ol class="audit-entries" aria-label="Management changes, newest first">
          {page.data.map((e) => (
            <AuditEntry entry={e} reader={reader} key={e.id} />
          ))}
        </ol>
      )}
      {page && <Pager offset={offset} total={page.total_count} onMove={setOffset} />}
    </>
  );
}

function AuditEntry({ entry: e, reader }: { entry: Entry; reader: ChangeReader }) {
  const changes = reader.changesOf(e.before, e.after, e.resource_id);
  const columns = reader.columnsOf(changes);
  return (
    <li class="audit-entry">
      <p class="audit-head">
        <strong class="audit-action">{e.action}</strong>
        <span class="audit-resource">
          {e.resource_type} <code>{e.resource_id}</code>
        </span>
        <span class="audit-actor">
          by <code title={e.actor_key_hash}>{e.actor_key_hash.slice(0, 12)}</code>
        </span>
        <time dateTime={e.created_at}>{when(e.created_at)}</time>
      </p>
      {changes.length === 0 ? (
        <p class="hint">No field changed.</p>
      ) : (
        <table class="change">
          <caption class="sr-only">What {e.action} changed</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              {columns.before && <th scope="col">{columns.before}</th>}
              {columns.after && <th scope="col">{columns.after}</th>}
            </tr>
          </thead>
          <tbody>
            {changes.map((c) => (
              <tr key={c.key}>
                <th scope="row">{c.label}</th>
                {columns.before && (
                  <td data-label={columns.before} class={c.before === undefined ? "absent" : undefined}>
                    {c.before ?? "—"}
                  </td>
                )}
                {columns.after && (
                  <td data-label={columns.after} class={c.after === undefined ? "absent" : undefined}>
                    {c.after ?? "—"}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </li>
  );
}
