import { useEffect, useState } from "preact/hooks";
import { api, describe, type Guardrail, type Key, listAll } from "./api.js";
import { ErrorText, PagedTable, usePaged, useWorkspaces, WorkspacePicker } from "./ui.js";

interface WorkspaceMember {
  user_id: string;
}

/** Checkboxes over one page of a list, with the two bulk actions. */
function Selection<T>(props: {
  title: string;
  itemName: string;
  path: string;
  idOf: (item: T) => string;
  labelOf: (item: T) => string;
  assigned: Set<string>;
  otherOf?: (item: T) => string | undefined;
  onBulk: (ids: string[], assign: boolean) => Promise<string>;
}) {
  const paged = usePaged<T>(props.path);
  const [picked, setPicked] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState("");
  useEffect(() => setPicked([]), [props.path]);
  const bulk = async (assign: boolean) => {
    setBusy(true);
    setMessage("");
    try {
      setMessage(await props.onBulk(picked, assign));
      setPicked([]);
      await paged.reload();
    } catch (e) {
      paged.setError(describe(e));
    } finally {
      setBusy(false);
    }
  };
  const toggle = (id: string, on: boolean) =>
    setPicked(on ? [...picked, id] : picked.filter((p) => p !== id));
  return (
    <section aria-label={props.title}>
      <h2>{props.title}</h2>
      <PagedTable
        paged={paged}
        empty={`No ${props.itemName}s in this workspace.`}
        head={["Pick", "Name", "Governed by this guardrail"]}
        row={(item) => {
          const id = props.idOf(item);
          const label = props.labelOf(item);
          const other = props.otherOf?.(item);
          return (
            <tr key={id}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Pick ${label}`}
                  checked={picked.includes(id)}
                  onChange={(e) => toggle(id, e.currentTarget.checked)}
                />
              </td>
              <td>{label}</td>
              <td>{props.assigned.has(id) ? "yes" : other ? `no (${other})` : "no"}</td>
            </tr>
          );
        }}
      />
      <div class="actions">
        <button type="button" disabled={busy || picked.length === 0} onClick={() => bulk(true)}>
          Assign {picked.length || ""} {props.itemName}
          {picked.length === 1 ? "" : "s"}
        </button>
        <button type="button" disabled={busy || picked.length === 0} onClick={() => bulk(false)}>
          Unassign {picked.length || ""} {props.itemName}
          {picked.length === 1 ? "" : "s"}
        </button>
      </div>
      {message && <p role="status">{message}</p>}
    </section>
  );
}

export function Assignments() {
  const [workspace, setWorkspace] = useState("");
  const [guardrailId, setGuardrailId] = useState("");
  const [guardrails, setGuardrails] = useState<Guardrail[] | undefined>();
  const [keysOf, setKeysOf] = useState(new Map<string, string>());
  const [members, setMembers] = useState(new Set<string>());
  const [error, setError] = useState("");
  const [version, setVersion] = useState(0);
  const spaces = useWorkspaces();
  const current = spaces?.find((w) => w.id === workspace);
  useEffect(() => {
    if (!workspace) return;
    listAll<Guardrail>(`/guardrails?workspace_id=${workspace}`).then(
      (list) => {
        setGuardrails(list);
        if (!list.some((g) => g.id === guardrailId)) setGuardrailId(list[0]?.id ?? "");
      },
      (e) => setError(describe(e)),
    );
  }, [workspace]);
  useEffect(() => {
    if (!guardrailId) return;
    // An answer to an earlier read (before the last change) must not replace a newer one.
    let live = true;
    Promise.all([
      listAll<{ key_hash: string; guardrail_id: string }>("/guardrails/assignments/keys"),
      listAll<{ user_id: string }>(`/guardrails/${guardrailId}/assignments/members`),
    ]).then(
      ([keyAssignments, memberAssignments]) => {
        if (!live) return;
        setKeysOf(new Map(keyAssignments.map((a) => [a.key_hash, a.guardrail_id])));
        setMembers(new Set(memberAssignments.map((a) => a.user_id)));
      },
      (e) => live && setError(describe(e)),
    );
    return () => {
      live = false;
    };
  }, [guardrailId, version]);
  const assignedKeys = new Set([...keysOf].filter(([, g]) => g === guardrailId).map(([k]) => k));
  const nameOf = (id: string) => guardrails?.find((g) => g.id === id)?.name ?? "another guardrail";
  const bulk = (kind: "keys" | "members") => async (ids: string[], assign: boolean) => {
    const body = kind === "keys" ? { key_hashes: ids } : { member_user_ids: ids };
    const answer = await api<{ assigned_count?: number; unassigned_count?: number }>(
      "POST",
      `/guardrails/${guardrailId}/assignments/${kind}${assign ? "" : "/remove"}`,
      body,
    );
    setVersion(version + 1);
    const count = assign ? answer.assigned_count : answer.unassigned_count;
    const noun = count === 1 ? kind.slice(0, -1) : kind;
    return `${count ?? 0} ${noun} ${assign ? "assigned" : "unassigned"}; those already so are not counted.`;
  };
  return (
    <section>
      <h1>Assignments</h1>
      <WorkspacePicker id="assignment-workspace" value={workspace} onChange={setWorkspace} />
      {current && (
        <p>
          Every key and member of <strong>{current.name}</strong> is also governed by the workspace's{" "}
          <a href={`#/workspace-default/${current.id}`}>default guardrail</a>.
        </p>
      )}
      <ErrorText message={error} />
      {guardrails && guardrails.length === 0 && (
        <p class="empty">
          No guardrails in this workspace yet: <a href="#/guardrails/new">create one</a>.
        </p>
      )}
      {guardrails && guardrails.length > 0 && (
        <>
          <div class="filter">
            <label for="assignment-guardrail">Guardrail</label>
            <select
              id="assignment-guardrail"
              value={guardrailId}
              onChange={(e) => setGuardrailId(e.currentTarget.value)}
            >
              {guardrails.map((g) => (
                <option value={g.id} key={g.id}>
                  {g.name}
                </option>
              ))}
            </select>
          </div>
          <div class="columns">
            <Selection<Key>
              title="Keys"
              itemName="key"
              path={`/keys?workspace_id=${workspace}`}
              idOf={(k) => k.hash}
              labelOf={(k) => k.name}
              assigned={assignedKeys}
              otherOf={(k) => {
                const g = keysOf.get(k.hash);
                return g && g !== guardrailId ? nameOf(g) : undefined;
              }}
              onBulk={bulk("keys")}
            />
            <Selection<WorkspaceMember>
              title="Members"
              itemName="member"
              path={`/workspaces/${workspace}/members`}
              idOf={(m) => m.user_id}
              labelOf={(m) => m.user_id}
              assigned={members}
              onBulk={bulk("members")}
            />
          </div>
        </>
      )}
    </section>
  );
}
