import { useEffect, useState } from "preact/hooks";
import {
  api,
  describe,
  type Guardrail,
  issuesByField,
  type Key,
  listAll,
  type ManagementKey,
  signedOut,
  usd,
  when,
} from "./api.js";
import {
  confirmed,
  ErrorText,
  FieldErrors,
  invalidProps,
  PagedTable,
  SecretOnce,
  usePaged,
  useWorkspaces,
} from "./ui.js";

interface KeyAssignment {
  key_hash: string;
  guardrail_id: string;
}

/** Which guardrail holds each key, with its name: one read of every assignment and guardrail. */
export function useKeyGuardrails(version: unknown): Map<string, { id: string; name: string }> | undefined {
  const [byKey, setByKey] = useState<Map<string, { id: string; name: string }> | undefined>();
  const spaces = useWorkspaces();
  useEffect(() => {
    if (!spaces) return;
    Promise.all([
      listAll<KeyAssignment>("/guardrails/assignments/keys"),
      ...spaces.map((w) => listAll<Guardrail>(`/guardrails?workspace_id=${w.id}`)),
    ]).then(
      ([assignments, ...lists]) => {
        const names = new Map((lists as Guardrail[][]).flat().map((g) => [g.id, g.name]));
        setByKey(
          new Map(
            (assignments as KeyAssignment[]).map((a) => [
              a.key_hash,
              { id: a.guardrail_id, name: names.get(a.guardrail_id) ?? a.guardrail_id },
            ]),
          ),
        );
      },
      () => setByKey(new Map()),
    );
  }, [spaces, version]);
  return byKey;
}

/**
 * The organization's management keys (docs/api.md#management-keys), each revocable but the last;
 * revoking the one this session came from ends the session, so the page signs out.
 */
export function ManagementKeys() {
  const paged = usePaged<ManagementKey>("/management-keys");
  const only = paged.page?.total_count === 1;
  const revoke = (k: ManagementKey) =>
    confirmed(
      k.current
        ? `Revoke “${k.name}”, the key you signed in with? Everything using it stops at once, and you are signed out.`
        : `Revoke the management key “${k.name}”? Everything using it stops at once.`,
      () => api("DELETE", `/management-keys/${k.hash}`),
      paged.setError,
      async () => {
        if (k.current) signedOut();
        else await paged.reload();
      },
    );
  return (
    <section aria-labelledby="management-keys">
      <h2 id="management-keys">Management keys</h2>
      <p class="hint">
        New management keys are made on the command line: <code>guardrails keys create --management</code>.
        {only && " The only one cannot be revoked: make another first, or use guardrails keys rotate."}
      </p>
      <PagedTable
        paged={paged}
        empty="No management keys."
        caption="Management keys"
        head={["Name", "Key", "Created", ""]}
        row={(k) => (
          <tr key={k.hash}>
            <td>
              {k.name}
              {k.current && <span class="hint"> (signed in with)</span>}
            </td>
            <td>
              <code>{k.label}</code>
            </td>
            <td>{when(k.created_at)}</td>
            <td>
              <button
                type="button"
                class="danger"
                disabled={only}
                title={only ? "The organization's last management key cannot be revoked" : undefined}
                onClick={() => revoke(k)}
              >
                Revoke<span class="sr-only"> management key {k.name}</span>
              </button>
            </td>
          </tr>
        )}
      />
    </section>
  );
}

export function KeyList() {
  const paged = usePaged<Key>("/keys");
  const spaces = useWorkspaces();
  const guardrails = useKeyGuardrails(paged.page);
  const [name, setName] = useState("");
  const [workspace, setWorkspace] = useState("");
  const [member, setMember] = useState("");
  const [failure, setFailure] = useState<unknown>();
  // The new key's secret lives only in this component's state: shown once, gone on leaving.
  const [secret, setSecret] = useState<{ name: string; key: string } | undefined>();
  const create = async (event: Event) => {
    event.preventDefault();
    setFailure(undefined);
    try {
      const made = await api<{ data: Key; key: string }>("POST", "/keys", {
        name,
        ...(workspace ? { workspace_id: workspace } : {}),
        ...(member.trim() ? { member_user_id: member.trim() } : {}),
      });
      setSecret({ name: made.data.name, key: made.key });
      setName("");
      setMember("");
      await paged.reload();
    } catch (e) {
      setFailure(e);
    }
  };
  const revoke = (k: Key) =>
    confirmed(
      `Revoke the key “${k.name}”? Requests with it stop at once.`,
      () => api("DELETE", `/keys/${k.hash}`),
      paged.setError,
      paged.reload,
    );
  const { fields } = issuesByField(failure);
  const unplaced = failure && Object.keys(fields).length === 0 ? describe(failure) : "";
  const spaceName = (id: string) => spaces?.find((w) => w.id === id)?.name ?? id;
  return (
    <section>
      <h1>Inference keys</h1>
      <form class="inline" onSubmit={create}>
        <div>
          <label for="key-name">New key's name</label>
          <input
            id="key-name"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            {...invalidProps("key-name", fields.name)}
          />
          <FieldErrors id="key-name" messages={fields.name} />
        </div>
        {spaces && spaces.length > 1 && (
          <div>
            <label for="key-workspace">Workspace</label>
            <select
              id="key-workspace"
              value={workspace}
              onChange={(e) => setWorkspace(e.currentTarget.value)}
            >
              <option value="">default</option>
              {spaces.map((w) => (
                <option value={w.id} key={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          </div>
        )}
        <div>
          <label for="key-member">Owning member's user id (optional)</label>
          <input
            id="key-member"
            value={member}
            onInput={(e) => setMember(e.currentTarget.value)}
            {...invalidProps("key-member", fields.member_user_id)}
          />
          <FieldErrors id="key-member" messages={fields.member_user_id} />
        </div>
        <button type="submit">Create key</button>
      </form>
      <ErrorText message={unplaced} />
      {secret && <SecretOnce name={secret.name} secret={secret.key} onDone={() => setSecret(undefined)} />}
      <PagedTable
        paged={paged}
        empty="No inference keys yet."
        caption="Inference keys with their guardrail and spend"
        head={["Name", "Key", "Workspace", "Guardrail", "Spend today", "This month", "Created", ""]}
        row={(k) => {
          const g = guardrails?.get(k.hash);
          return (
            <tr key={k.hash}>
              <td>{k.name}</td>
              <td>
                <code>{k.label}</code>
              </td>
              <td>{spaceName(k.workspace_id)}</td>
              <td>
                {g ? (
                  <a href={`#/guardrails/${g.id}`}>{g.name}</a>
                ) : (
                  <span class="hint">{guardrails ? "workspace default only" : "…"}</span>
                )}
              </td>
              <td>{usd(k.usage_daily)}</td>
              <td>{usd(k.usage_monthly)}</td>
              <td>{when(k.created_at)}</td>
              <td>
                <button type="button" class="danger" onClick={() => revoke(k)}>
                  Revoke<span class="sr-only"> {k.name}</span>
                </button>
              </td>
            </tr>
          );
        }}
      />
      <ManagementKeys />
    </section>
  );
}
