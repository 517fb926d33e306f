import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, describe, listAll, type Page, type Workspace } from "./api.js";

/** The pages share these parts so that every list pages, loads and fails the same way. */

export const PAGE_SIZE = 25;

export interface Paged<T> {
  page: Page<T> | undefined;
  error: string;
  offset: number;
  setOffset: (offset: number) => void;
  reload: () => Promise<void>;
  setError: (message: string) => void;
}

/** One page of a list at a time; `path` is the list's address without offset and limit. */
export function usePaged<T>(path: string | undefined): Paged<T> {
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<Page<T> | undefined>();
  const [error, setError] = useState("");
  // Only the latest read may fill the table: answers can arrive out of order while filters change.
  const latest = useRef(0);
  const reload = async () => {
    if (!path) return;
    const joiner = path.includes("?") ? "&" : "?";
    const mine = ++latest.current;
    try {
      const answer = await api<Page<T>>("GET", `${path}${joiner}offset=${offset}&limit=${PAGE_SIZE}`);
      if (mine !== latest.current) return;
      setPage(answer);
      setError("");
    } catch (e) {
      if (mine === latest.current) setError(describe(e));
    }
  };
  // Another filter starts from the first page again.
  useEffect(() => setOffset(0), [path]);
  useEffect(() => {
    setPage(undefined);
    void reload();
  }, [path, offset]);
  return { page, error, offset, setOffset, reload, setError };
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

export function ErrorText({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** A paged table with its loading, failure and empty states and its pager. */
export function PagedTable<T>(props: {
  paged: Paged<T>;
  empty: string;
  head: string[];
  row: (item: T) => ComponentChildren;
  caption?: string;
}) {
  const { page, error, offset, setOffset } = props.paged;
  return (
    <>
      <ErrorText message={error} />
      {!page && !error && <p class="loading">Loading…</p>}
      {page && page.data.length === 0 && <p class="empty">{props.empty}</p>}
      {page && page.data.length > 0 && (
        <div class="table-wrap">
          <table>
            {props.caption && <caption class="sr-only">{props.caption}</caption>}
            <thead>
              <tr>
                {props.head.map((h) => (
                  <th scope="col" key={h}>
                    {h || <span class="sr-only">Actions</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{page.data.map(props.row)}</tbody>
          </table>
        </div>
      )}
      {page && <Pager offset={offset} total={page.total_count} onMove={setOffset} />}
    </>
  );
}

export function FieldErrors({ id, messages }: { id: string; messages: string[] | undefined }) {
  if (!messages?.length) return null;
  return (
    <p class="field-error" id={`${id}-error`}>
      {messages.join("; ")}
    </p>
  );
}

/** aria attributes tying a control to the errors shown beside it. */
export function invalidProps(id: string, messages: string[] | undefined) {
  return messages?.length ? { "aria-invalid": true, "aria-describedby": `${id}-error` } : {};
}

/** Asks before a change that cannot be undone, runs it, then `after`; failures land in `onError`. */
export async function confirmed(
  question: string,
  run: () => Promise<unknown>,
  onError: (message: string) => void,
  after: () => Promise<void>,
): Promise<void> {
  if (!confirm(question)) return;
  try {
    await run();
  } catch (e) {
    onError(describe(e));
    return;
  }
  await after();
}

/** A secret shown once: it lives only in the caller's state and is gone when the page is left. */
export function SecretOnce(props: { name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="status">
      <p>
        The secret of <strong>{props.name}</strong>. Copy it now: it is not shown again.
      </p>
      <output id="new-secret">{props.secret}</output>{" "}
      <button
        type="button"
        onClick={() =>
          navigator.clipboard?.writeText(props.secret).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? "Copied" : "Copy"}
      </button>{" "}
      <button type="button" onClick={props.onDone}>
        Done
      </button>
    </div>
  );
}

let workspaceList: Promise<Workspace[]> | undefined;
/** Workspaces change rarely; pages that create or delete one call this with `fresh`. */
export function workspaces(fresh = false): Promise<Workspace[]> {
  if (fresh || !workspaceList) workspaceList = listAll<Workspace>("/workspaces");
  return workspaceList;
}

export function useWorkspaces(): Workspace[] | undefined {
  const [list, setList] = useState<Workspace[] | undefined>();
  useEffect(() => {
    workspaces().then(setList, () => setList([]));
  }, []);
  return list;
}

export function WorkspacePicker(props: { id: string; value: string; onChange: (id: string) => void }) {
  const list = useWorkspaces();
  // Once the list is read, the default workspace is chosen; "" when none could be read, so a page
  // waiting for the choice reads its unfiltered list rather than nothing.
  useEffect(() => {
    if (!list || props.value) return;
    props.onChange((list.find((w) => w.is_default) ?? list[0])?.id ?? "");
  }, [list]);
  if (!list || list.length < 2) return null;
  return (
    <div class="filter">
      <label for={props.id}>Workspace</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {list.map((w) => (
          <option value={w.id} key={w.id}>
            {w.name}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * Picks any number of values from a list (models, providers, regions); none picked means "no
 * restriction", which the caller sends as null. A filter box appears when the list is long.
 */
export function ChoiceList(props: {
  id: string;
  legend: string;
  hint?: string;
  options: { value: string; label: string }[];
  selected: string[];
  onChange: (selected: string[]) => void;
  errors?: string[] | undefined;
}) {
  const [filter, setFilter] = useState("");
  const shown = props.options.filter(
    (o) =>
      !filter || o.label.toLowerCase().includes(filter.toLowerCase()) || props.selected.includes(o.value),
  );
  const toggle = (value: string, on: boolean) =>
    props.onChange(on ? [...props.selected, value] : props.selected.filter((v) => v !== value));
  // A stored value the catalog no longer lists stays visible, so saving does not drop it unseen.
  const unknown = props.selected.filter((v) => !props.options.some((o) => o.value === v));
  return (
    <fieldset id={props.id} {...invalidProps(props.id, props.errors)}>
      <legend>{props.legend}</legend>
      {props.hint && <p class="hint">{props.hint}</p>}
      {props.options.length > 12 && (
        <>
          <label for={`${props.id}-filter`} class="sr-only">
            Filter {props.legend}
          </label>
          <input
            id={`${props.id}-filter`}
            type="search"
            placeholder="Filter…"
            value={filter}
            onInput={(e) => setFilter(e.currentTarget.value)}
          />
        </>
      )}
      <div class={props.options.length > 12 ? "choices scroll" : "choices"}>
        {[...unknown.map((v) => ({ value: v, label: `${v} (not in the catalog)` })), ...shown].map((o) => (
          <label class="check" key={o.value}>
            <input
              type="checkbox"
              value={o.value}
              checked={props.selected.includes(o.value)}
              onChange={(e) => toggle(o.value, e.currentTarget.checked)}
            />{" "}
            {o.label}
          </label>
        ))}
      </div>
      <p class="hint">
        {props.selected.length === 0 ? "None picked: no restriction." : `${props.selected.length} picked.`}
      </p>
      <FieldErrors id={props.id} messages={props.errors} />
    </fieldset>
  );
}
