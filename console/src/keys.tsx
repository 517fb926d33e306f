import { useEffect, useState } from "preact/hooks";
import { api, describe, issuesByField, type Key, type Page } from "./api.js";
import { Pager } from "./guardrails.js";

const PAGE_SIZE = 25;

export function KeyList() {
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<Page<Key> | undefined>();
  const [error, setError] = useState("");
  const [name, setName] = useState("");
  const [nameError, setNameError] = useState<string[] | undefined>();
  // The new key's secret lives only in this component's state: shown once, gone on leaving.
  const [secret, setSecret] = useState<{ name: string; key: string } | undefined>();
  const load = () =>
    api<Page<Key>>("GET", `/keys?offset=${offset}&limit=${PAGE_SIZE}`).then(setPage, (e) =>
      setError(describe(e)),
    );
  useEffect(() => {
    load();
  }, [offset]);
  const create = async (event: Event) => {
    event.preventDefault();
    setNameError(undefined);
    setError("");
    try {
      const made = await api<{ data: Key; key: string }>("POST", "/keys", { name });
      setSecret({ name: made.data.name, key: made.key });
      setName("");
      await load();
    } catch (e) {
      const { fields } = issuesByField(e);
      if (fields.name) setNameError(fields.name);
      else setError(describe(e));
    }
  };
  const revoke = async (k: Key) => {
    if (!confirm(`Revoke the key “${k.name}”? Requests with it stop at once.`)) return;
    try {
      await api("DELETE", `/keys/${k.hash}`);
      await load();
    } catch (e) {
      setError(describe(e));
    }
  };
  return (
    <section>
      <h1>Inference keys</h1>
      <form class="inline" onSubmit={create}>
        <label for="key-name">New key's name</label>
        <input
          id="key-name"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={nameError ? "key-name-error" : undefined}
        />
        <button type="submit">Create key</button>
        {nameError && (
          <p class="field-error" id="key-name-error">
            {nameError.join("; ")}
          </p>
        )}
      </form>
      {secret && (
        <div class="secret" role="status">
          <p>
            The secret of <strong>{secret.name}</strong>. Copy it now: it is not shown again.
          </p>
          <output id="new-secret">{secret.key}</output>{" "}
          <button type="button" onClick={() => navigator.clipboard?.writeText(secret.key)}>
            Copy
          </button>{" "}
          <button type="button" onClick={() => setSecret(undefined)}>
            Done
          </button>
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!page && !error && <p class="loading">Loading…</p>}
      {page && page.data.length === 0 && <p class="empty">No inference keys yet.</p>}
      {page && page.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.data.map((k) => (
              <tr key={k.hash}>
                <td>{k.name}</td>
                <td>
                  <code>{k.label}</code>
                </td>
                <td>{new Date(k.created_at).toLocaleString()}</td>
                <td>
                  <button type="button" class="danger" onClick={() => revoke(k)}>
                    Revoke<span class="sr-only"> {k.name}</span>
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
