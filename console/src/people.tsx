import { useState } from "preact/hooks";
import { api, describe, issuesByField, type Member, usd, type Workspace, when } from "./api.js";
import {
  confirmed,
  ErrorText,
  FieldErrors,
  invalidProps,
  PagedTable,
  usePaged,
  useWorkspaces,
  workspaces,
} from "./ui.js";

/** A small create form whose fields show the API's 400 beside them. */
function useCreate(run: () => Promise<void>) {
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setFailure(undefined);
    try {
      await run();
    } catch (e) {
      setFailure(e);
    } finally {
      setBusy(false);
    }
  };
  const { fields } = issuesByField(failure);
  const unplaced = failure && Object.keys(fields).length === 0 ? describe(failure) : "";
  return { submit, busy, fields, unplaced };
}

function TextField(props: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  errors: string[] | undefined;
}) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
        {...invalidProps(props.id, props.errors)}
      />
      <FieldErrors id={props.id} messages={props.errors} />
    </div>
  );
}

export function MemberList() {
  const paged = usePaged<Member>("/members");
  const spaces = useWorkspaces();
  const [userId, setUserId] = useState("");
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const form = useCreate(async () => {
    await api("POST", "/members", { user_id: userId.trim(), name: name || null, email: email || null });
    setUserId("");
    setName("");
    setEmail("");
    await paged.reload();
  });
  const remove = (m: Member) =>
    confirmed(
      `Delete the member “${m.name ?? m.user_id}”? The keys they own are revoked with them.`,
      () => api("DELETE", `/members/${encodeURIComponent(m.user_id)}`),
      paged.setError,
      paged.reload,
    );
  const spaceNames = (ids: string[]) =>
    ids.map((id) => spaces?.find((w) => w.id === id)?.name ?? id).join(", ");
  return (
    <section>
      <h1>Members</h1>
      <form class="inline" onSubmit={form.submit}>
        <TextField
          id="member-user-id"
          label="User id"
          value={userId}
          onInput={setUserId}
          errors={form.fields.user_id}
        />
        <TextField id="member-name" label="Name" value={name} onInput={setName} errors={form.fields.name} />
        <TextField
          id="member-email"
          label="Email"
          value={email}
          onInput={setEmail}
          errors={form.fields.email}
        />
        <button type="submit" disabled={form.busy}>
          Add member
        </button>
      </form>
      <ErrorText message={form.unplaced} />
      <PagedTable
        paged={paged}
        empty="No members yet."
        caption="Members with their workspaces and spend"
        head={["User id", "Name", "Email", "Workspaces", "Spend this month", "Budget left", ""]}
        row={(m) => {
          const tightest = [...(m.budgets ?? [])].sort((a, b) => a.remaining_usd - b.remaining_usd)[0];
          return (
            <tr key={m.user_id}>
              <td>{m.user_id}</td>
              <td>{m.name ?? "—"}</td>
              <td>{m.email ?? "—"}</td>
              <td>{spaceNames(m.workspace_ids)}</td>
              <td>{usd(m.usage_monthly)}</td>
              <td>
                {tightest ? `${usd(tightest.remaining_usd)} until ${when(tightest.resets_at)}` : "no budget"}
              </td>
              <td>
                <button type="button" class="danger" onClick={() => remove(m)}>
                  Delete<span class="sr-only"> {m.user_id}</span>
                </button>
              </td>
            </tr>
          );
        }}
      />
    </section>
  );
}

export function WorkspaceList() {
  const paged = usePaged<Workspace>("/workspaces");
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [description, setDescription] = useState("");
  const refreshed = async () => {
    await workspaces(true);
    await paged.reload();
  };
  const form = useCreate(async () => {
    await api("POST", "/workspaces", {
      name,
      ...(slug.trim() ? { slug: slug.trim() } : {}),
      ...(description ? { description } : {}),
    });
    setName("");
    setSlug("");
    setDescription("");
    await refreshed();
  });
  const remove = (w: Workspace) =>
    confirmed(
      `Delete the workspace “${w.name}”? Its guardrails and its inference keys are deleted with it.`,
      () => api("DELETE", `/workspaces/${w.id}`),
      paged.setError,
      refreshed,
    );
  return (
    <section>
      <h1>Workspaces</h1>
      <form class="inline" onSubmit={form.submit}>
        <TextField
          id="workspace-name"
          label="Name"
          value={name}
          onInput={setName}
          errors={form.fields.name}
        />
        <TextField
          id="workspace-slug"
          label="Slug (optional)"
          value={slug}
          onInput={setSlug}
          errors={form.fields.slug}
        />
        <TextField
          id="workspace-description"
          label="Description"
          value={description}
          onInput={setDescription}
          errors={form.fields.description}
        />
        <button type="submit" disabled={form.busy}>
          Create workspace
        </button>
      </form>
      <ErrorText message={form.unplaced} />
      <PagedTable
        paged={paged}
        empty="No workspaces: create one to hold guardrails and keys."
        head={["Name", "Slug", "Description", "Default guardrail", "Created", ""]}
        row={(w) => (
          <tr key={w.id}>
            <td>
              {w.name}
              {w.is_default && <span class="badge">default</span>}
            </td>
            <td>
              <code>{w.slug}</code>
            </td>
            <td>{w.description ?? "—"}</td>
            <td>
              <a href={`#/workspace-default/${w.id}`}>
                Edit<span class="sr-only"> the default guardrail of {w.name}</span>
              </a>
            </td>
            <td>{when(w.created_at)}</td>
            <td>
              <button type="button" class="danger" onClick={() => remove(w)}>
                Delete<span class="sr-only"> {w.name}</span>
              </button>
            </td>
          </tr>
        )}
      />
    </section>
  );
}
