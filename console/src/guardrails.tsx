import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import {
  type Action,
  ApiFailure,
  type ApplyTo,
  api,
  describe,
  type Guardrail,
  type Model,
  models,
  REGIONS,
  usd,
} from "./api.js";
import {
  type CustomDraft,
  doesText,
  type FiltersDraft,
  filterItems,
  filtersDraftOf,
  readsText,
} from "./guardrail-filters.js";
import type { Placed } from "./guardrail-issues.js";
import { go } from "./route.js";
import {
  ChoiceList,
  confirmed,
  ErrorText,
  FieldErrors,
  invalidProps,
  PagedTable,
  usePaged,
  WorkspacePicker,
} from "./ui.js";

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
const ACTIONS: Action[] = ["block", "redact", "flag"];
/** The directions a builtin's two selects stand for (docs/behaviour.md#console-apply-to). */
const DIRECTIONS = ["request", "response"] as const;
/** What a custom pattern may read (docs/behaviour.md#apply-to). */
const READS: ApplyTo[] = ["request", "response", "both"];
const PERMISSIONS = [
  ["enable_free_model_training", "Free models may train on prompts"],
  ["enable_paid_model_training", "Paid models may train on prompts"],
  ["enable_free_model_publication", "Free models may publish prompts"],
  ["include_byok_in_budgets", "Bring-your-own-key requests count against the budget"],
] as const;
type Permission = (typeof PERMISSIONS)[number][0];

export function filtersText(g: Guardrail): string {
  return (
    [
      ...(g.content_filter_builtins ?? []).map((f) => `${f.slug} (${doesText(f)})`),
      ...(g.content_filters ?? []).map((f) => `/${f.pattern}/ (${doesText(f)})`),
    ].join(", ") || "none"
  );
}

export function GuardrailList() {
  // Undefined until the picker has chosen: reading the list before that would show one list, then
  // blank it and show another once the default workspace is known.
  const [workspace, setWorkspace] = useState<string | undefined>();
  const paged = usePaged<Guardrail>(
    workspace === undefined ? undefined : workspace ? `/guardrails?workspace_id=${workspace}` : "/guardrails",
  );
  const remove = (g: Guardrail) =>
    confirmed(
      `Delete the guardrail “${g.name}”? Keys and members it governs lose its rules.`,
      () => api("DELETE", `/guardrails/${g.id}`),
      paged.setError,
      paged.reload,
    );
  return (
    <section>
      <h1>Guardrails</h1>
      <WorkspacePicker id="guardrail-workspace" value={workspace ?? ""} onChange={setWorkspace} />
      <p>
        <a class="button" href={`#/guardrails/new${workspace ? `?workspace=${workspace}` : ""}`}>
          New guardrail
        </a>
      </p>
      <PagedTable
        paged={paged}
        empty="No guardrails in this workspace yet."
        head={["Name", "Filters", "Budget", ""]}
        row={(g) => (
          <tr key={g.id}>
            <td>
              <a href={`#/guardrails/${g.id}`}>{g.name}</a>
            </td>
            <td>{filtersText(g)}</td>
            <td>{g.limit_usd === null ? "none" : `${usd(g.limit_usd)} ${g.reset_interval}`}</td>
            <td>
              <button type="button" class="danger" onClick={() => remove(g)}>
                Delete<span class="sr-only"> {g.name}</span>
              </button>
            </td>
          </tr>
        )}
      />
    </section>
  );
}

interface Draft extends FiltersDraft {
  name: string;
  description: string;
  regions: string[];
  allowed_models: string[];
  allowed_providers: string[];
  ignored_models: string[];
  ignored_providers: string[];
  zdr: Record<string, boolean>;
  permissions: Record<Permission, boolean>;
  limit_usd: string;
  reset_interval: string;
  alert_thresholds: string;
}

/** The guardrail's model and provider lists, each in a section folded while it is empty. */
const LISTS: {
  key: "allowed_models" | "allowed_providers" | "ignored_models" | "ignored_providers";
  title: string;
  legend: string;
  hint?: string;
  of: "models" | "providers";
}[] = [
  { key: "allowed_models", title: "Allowed models", legend: "Allowed models", of: "models" },
  { key: "allowed_providers", title: "Allowed providers", legend: "Allowed providers", of: "providers" },
  {
    key: "ignored_models",
    title: "Ignored models",
    legend: "Models never routed to",
    hint: "None picked: none ignored.",
    of: "models",
  },
  {
    key: "ignored_providers",
    title: "Ignored providers",
    legend: "Providers never routed to",
    hint: "None picked: none ignored.",
    of: "providers",
  },
];

const EMPTY: Draft = {
  name: "",
  description: "",
  regions: [],
  allowed_models: [],
  allowed_providers: [],
  ignored_models: [],
  ignored_providers: [],
  zdr: {},
  // The API's defaults for a new guardrail.
  permissions: {
    enable_free_model_training: true,
    enable_paid_model_training: true,
    enable_free_model_publication: false,
    include_byok_in_budgets: false,
  },
  builtins: {},
  injection_scope: "all_messages",
  custom: [],
  limit_usd: "",
  reset_interval: "",
  alert_thresholds: "",
};

function draftOf(g: Guardrail): Draft {
  const zdr: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(g))
    if (k.startsWith("enforce_zdr_") && typeof v === "boolean") zdr[k.slice("enforce_zdr_".length)] = v;
  return {
    name: g.name,
    description: g.description ?? "",
    regions: g.allowed_data_regions ?? [],
    allowed_models: g.allowed_models ?? [],
    allowed_providers: g.allowed_providers ?? [],
    ignored_models: g.ignored_models ?? [],
    ignored_providers: g.ignored_providers ?? [],
    zdr,
    permissions: {
      enable_free_model_training: g.enable_free_model_training,
      enable_paid_model_training: g.enable_paid_model_training,
      enable_free_model_publication: g.enable_free_model_publication,
      include_byok_in_budgets: g.include_byok_in_budgets,
    },
    ...filtersDraftOf(g.content_filter_builtins, g.content_filters),
    limit_usd: g.limit_usd === null ? "" : String(g.limit_usd),
    reset_interval: g.reset_interval ?? "",
    alert_thresholds: (g.alert_thresholds ?? []).join(", "),
  };
}

/**
 * The API properties each part of the draft is sent as, where their names differ: editing that part
 * clears the errors shown for them (docs/behaviour.md#console-field-errors).
 */
const API_FIELDS: Partial<Record<keyof Draft, string[]>> = {
  regions: ["allowed_data_regions"],
  builtins: ["content_filter_builtins"],
  injection_scope: ["content_filter_builtins"],
  custom: ["content_filters"],
  // Also clears the per-family flags: an edited group clears every property named `<group>_...`.
  zdr: ["enforce_zdr"],
  permissions: PERMISSIONS.map(([name]) => name),
};

/**
 * A 400's issues placed on the form. The table that places them is loaded only when a save is
 * refused, so every other page's script stays small; without it the failure is said at the top.
 */
async function placed400(err: unknown): Promise<{ fields: Record<string, Placed[]>; other: Placed[] }> {
  const none = { fields: {}, other: [] };
  if (!(err instanceof ApiFailure) || err.issues.length === 0) return none;
  try {
    const { placeIssues } = await import("./guardrail-issues.js");
    return placeIssues(err.issues);
  } catch {
    return none;
  }
}

const listOrNull = <T,>(list: T[]) => (list.length > 0 ? list : null);

/**
 * The body as the API takes it: nothing picked is "no restriction" (null), and numbers are sent as
 * typed so that the API, not the page, judges them and its errors show beside their fields.
 */
function bodyOf(d: Draft, withName: boolean): Record<string, unknown> {
  const filters = filterItems(d);
  const thresholds = d.alert_thresholds
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => (Number.isFinite(Number(t)) ? Number(t) : t));
  const body: Record<string, unknown> = {
    description: d.description || null,
    allowed_data_regions: listOrNull(d.regions),
    allowed_models: listOrNull(d.allowed_models),
    allowed_providers: listOrNull(d.allowed_providers),
    ignored_models: listOrNull(d.ignored_models),
    ignored_providers: listOrNull(d.ignored_providers),
    ...d.permissions,
    content_filter_builtins: listOrNull(filters.builtins),
    content_filters: listOrNull(filters.custom),
    limit_usd: d.limit_usd.trim() === "" ? null : Number(d.limit_usd),
    reset_interval: d.reset_interval || null,
    alert_thresholds: listOrNull(thresholds),
  };
  for (const [family, on] of Object.entries(d.zdr)) body[`enforce_zdr_${family}`] = on;
  if (withName) body.name = d.name;
  return body;
}

function useCatalog(): Model[] {
  const [list, setList] = useState<Model[]>([]);
  useEffect(() => {
    models().then(setList, () => setList([]));
  }, []);
  return list;
}

/**
 * Creates or edits a guardrail. A workspace's default guardrail (`isDefault`) exists only once
 * first saved, and its name is the system's.
 */
export function GuardrailForm({
  id,
  workspace,
  isDefault,
}: {
  id?: string;
  workspace?: string;
  isDefault?: boolean;
}) {
  const [draft, setDraft] = useState<Draft | undefined>(id ? undefined : EMPTY);
  const [failure, setFailure] = useState<unknown>();
  const [placed, setPlaced] = useState<{ fields: Record<string, Placed[]>; other: Placed[] }>({
    fields: {},
    other: [],
  });
  const [busy, setBusy] = useState(false);
  const [edited, setEdited] = useState<string[]>([]);
  const catalog = useCatalog();
  useEffect(() => {
    if (!id) return;
    api<{ data: Guardrail }>("GET", `/guardrails/${id}`).then(
      (r) => setDraft(draftOf(r.data)),
      (e) => {
        // A workspace default nobody has saved yet: start from the defaults.
        if (isDefault && e instanceof ApiFailure && e.status === 404)
          setDraft({ ...EMPTY, name: "Workspace default" });
        else setFailure(e);
      },
    );
  }, [id]);
  // After a refused save the first field in error takes the focus, so the reader lands beside its
  // message rather than at the Save button (docs/behaviour.md#console-field-errors).
  useEffect(() => {
    if (!(failure instanceof ApiFailure)) return;
    const first = document.querySelector<HTMLElement>("form [aria-invalid='true']");
    const control = first?.matches("input, select, textarea")
      ? first
      : first?.querySelector<HTMLElement>("input, select, textarea");
    if (control) control.focus();
    else document.querySelector<HTMLElement>("form .error")?.scrollIntoView();
  }, [failure]);
  if (!draft) return failure ? <ErrorText message={describe(failure)} /> : <p class="loading">Loading…</p>;
  // An error stays beside its field until that part of the form is changed, not until the next save.
  const stale = (group: string) => edited.some((e) => group === e || group.startsWith(`${e}_`));
  const fields: Record<string, string[]> = {};
  for (const [id, list] of Object.entries(placed.fields)) {
    const texts = list.filter((p) => !stale(p.group)).map((p) => p.text);
    if (texts.length > 0) fields[id] = texts;
  }
  const other = placed.other.filter((p) => !stale(p.group)).map((p) => p.text);
  const set = (patch: Partial<Draft>) => {
    setDraft({ ...draft, ...patch });
    setEdited([...edited, ...Object.keys(patch).flatMap((k) => API_FIELDS[k as keyof Draft] ?? [k])]);
  };
  const modelOptions = catalog.map((m) => ({ value: m.canonical_slug, label: `${m.name} (${m.id})` }));
  const providers = [...new Set(catalog.flatMap((m) => m.endpoints.map((e) => e.provider)))].sort();
  const providerOptions = providers.map((p) => ({ value: p, label: p }));
  const families = [...new Set([...catalog.map((m) => m.zdr_family), "other", ...Object.keys(draft.zdr)])];
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setFailure(undefined);
    setPlaced({ fields: {}, other: [] });
    setEdited([]);
    try {
      if (id) await api("PATCH", `/guardrails/${id}`, bodyOf(draft, !isDefault));
      else
        await api("POST", "/guardrails", {
          ...bodyOf(draft, true),
          ...(workspace ? { workspace_id: workspace } : {}),
        });
      go(isDefault ? "/assignments" : "/guardrails");
    } catch (err) {
      setPlaced(await placed400(err));
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  // Shown at the top: what no field holds, and how many fields further down still need a change.
  const besideFields = Object.keys(fields).length;
  const summary = !failure
    ? ""
    : Object.keys(placed.fields).length === 0 && placed.other.length === 0
      ? describe(failure)
      : besideFields === 0 && other.length === 0
        ? ""
        : [
            besideFields > 0
              ? `Not saved: ${besideFields === 1 ? "one field needs" : `${besideFields} fields need`} a change, shown beside ${besideFields === 1 ? "it" : "each"}.`
              : "Not saved.",
            ...other,
          ].join(" ");
  const setCustom = (i: number, patch: Partial<CustomDraft>) =>
    set({ custom: draft.custom.map((c, j) => (j === i ? { ...c, ...patch } : c)) });
  return (
    <section>
      <h1>{isDefault ? "Workspace default guardrail" : id ? "Edit guardrail" : "New guardrail"}</h1>
      <form onSubmit={save} noValidate>
        <ErrorText message={summary} />
        <label for="name">Name</label>
        <input
          id="name"
          value={draft.name}
          disabled={isDefault}
          onInput={(e) => set({ name: e.currentTarget.value })}
          {...invalidProps("name", fields.name)}
        />
        <FieldErrors id="name" messages={fields.name} />

        <label for="description">Description</label>
        <input
          id="description"
          value={draft.description}
          onInput={(e) => set({ description: e.currentTarget.value })}
          {...invalidProps("description", fields.description)}
        />
        <FieldErrors id="description" messages={fields.description} />

        <ChoiceList
          id="allowed_data_regions"
          legend="Region addresses requests may arrive through"
          options={REGIONS.map((r) => ({ value: r, label: r }))}
          selected={draft.regions}
          onChange={(regions) => set({ regions })}
          errors={fields.allowed_data_regions}
        />
        {LISTS.map((list) => (
          <details key={list.key} open={draft[list.key].length > 0 || !!fields[list.key]}>
            <summary>{list.title}</summary>
            <ChoiceList
              id={list.key}
              legend={list.legend}
              hint={list.hint}
              options={list.of === "models" ? modelOptions : providerOptions}
              selected={draft[list.key]}
              onChange={(picked) => {
                const patch: Partial<Draft> = {};
                patch[list.key] = picked;
                set(patch);
              }}
              errors={fields[list.key]}
            />
          </details>
        ))}

        <fieldset id="zdr" {...invalidProps("zdr", fields.zdr)}>
          <legend>Zero data retention, per vendor family</legend>
          {families.map((f) => (
            <label class="check" key={f}>
              <input
                type="checkbox"
                id={`zdr-${f}`}
                checked={draft.zdr[f] ?? false}
                onChange={(e) => set({ zdr: { ...draft.zdr, [f]: e.currentTarget.checked } })}
              />{" "}
              Only endpoints that retain nothing for {f} models
            </label>
          ))}
          <FieldErrors id="zdr" messages={fields.zdr} />
        </fieldset>

        <fieldset>
          <legend>Permissions</legend>
          {PERMISSIONS.map(([name, text]) => (
            <div key={name}>
              <label class="check">
                <input
                  type="checkbox"
                  id={name}
                  checked={draft.permissions[name]}
                  onChange={(e) =>
                    set({ permissions: { ...draft.permissions, [name]: e.currentTarget.checked } })
                  }
                  {...invalidProps(name, fields[name])}
                />{" "}
                {text}
              </label>
              <FieldErrors id={name} messages={fields[name]} />
            </div>
          ))}
        </fieldset>

        <fieldset>
          <legend>Budget</legend>
          <label for="limit_usd">Limit (USD)</label>
          <input
            id="limit_usd"
            inputMode="decimal"
            value={draft.limit_usd}
            onInput={(e) => set({ limit_usd: e.currentTarget.value })}
            {...invalidProps("limit_usd", fields.limit_usd)}
          />
          <FieldErrors id="limit_usd" messages={fields.limit_usd} />
          <label for="reset_interval">Resets</label>
          <select
            id="reset_interval"
            value={draft.reset_interval}
            onChange={(e) => set({ reset_interval: e.currentTarget.value })}
            {...invalidProps("reset_interval", fields.reset_interval)}
          >
            <option value="">never (no budget)</option>
            <option value="daily">daily</option>
            <option value="weekly">weekly</option>
            <option value="monthly">monthly</option>
          </select>
          <FieldErrors id="reset_interval" messages={fields.reset_interval} />
          <label for="alert_thresholds">Alert at these percents of the limit (comma-separated)</label>
          <input
            id="alert_thresholds"
            inputMode="numeric"
            placeholder="50, 80, 100"
            value={draft.alert_thresholds}
            onInput={(e) => set({ alert_thresholds: e.currentTarget.value })}
            {...invalidProps("alert_thresholds", fields.alert_thresholds)}
          />
          <FieldErrors id="alert_thresholds" messages={fields.alert_thresholds} />
        </fieldset>

        <fieldset
          id="content_filter_builtins"
          {...invalidProps("content_filter_builtins", fields.content_filter_builtins)}
        >
          <legend>Builtin filters</legend>
          {/* Column heads for the eye; each select has its own label for a screen reader. */}
          <div class="row builtin-head" aria-hidden="true">
            <span>Filter</span>
            <span>On requests</span>
            <span>On answers</span>
          </div>
          {BUILTINS.map((slug) => (
            <div class="row builtin" key={slug}>
              <span class="builtin-slug">{slug}</span>
              {DIRECTIONS.map((direction) => {
                const b = draft.builtins[slug] ?? { request: "", response: "" };
                const control = direction === "request" ? `builtin-${slug}` : `builtin-${slug}-response`;
                return (
                  <Fragment key={direction}>
                    <label class="sr-only" for={control}>
                      {slug} on {readsText(direction)}
                    </label>
                    <select
                      id={control}
                      value={b[direction]}
                      onChange={(e) =>
                        set({
                          builtins: {
                            ...draft.builtins,
                            [slug]: { ...b, [direction]: e.currentTarget.value as Action | "" },
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
                  </Fragment>
                );
              })}
            </div>
          ))}
          {draft.builtins["regex-prompt-injection"]?.request && (
            <div class="row">
              <label for="injection-scope">Prompt injection: messages scanned</label>
              <select
                id="injection-scope"
                value={draft.injection_scope}
                onChange={(e) => set({ injection_scope: e.currentTarget.value as Draft["injection_scope"] })}
              >
                <option value="all_messages">all messages</option>
                <option value="user_only">the user's only</option>
              </select>
            </div>
          )}
          <FieldErrors id="content_filter_builtins" messages={fields.content_filter_builtins} />
        </fieldset>

        <fieldset id="content_filters" {...invalidProps("content_filters", fields.content_filters)}>
          <legend>Custom patterns (RE2)</legend>
          {draft.custom.length === 0 && <p class="hint">No custom patterns.</p>}
          {draft.custom.map((c, i) => (
            // Patterns have no id of their own; the inputs are controlled, so keys by place are safe.
            <div class="custom" key={i}>
              <label for={`pattern-${i}`}>Pattern {i + 1}</label>
              <input
                id={`pattern-${i}`}
                value={c.pattern}
                onInput={(e) => setCustom(i, { pattern: e.currentTarget.value })}
                {...invalidProps(`pattern-${i}`, fields[`pattern-${i}`])}
              />
              <FieldErrors id={`pattern-${i}`} messages={fields[`pattern-${i}`]} />
              <label for={`pattern-action-${i}`}>Action</label>
              <select
                id={`pattern-action-${i}`}
                value={c.action}
                onChange={(e) => setCustom(i, { action: e.currentTarget.value as Action })}
                {...invalidProps(`pattern-action-${i}`, fields[`pattern-action-${i}`])}
              >
                {ACTIONS.map((a) => (
                  <option value={a} key={a}>
                    {a}
                  </option>
                ))}
              </select>
              <FieldErrors id={`pattern-action-${i}`} messages={fields[`pattern-action-${i}`]} />
              <label for={`pattern-label-${i}`}>Replacement label (empty: [REDACTED])</label>
              <input
                id={`pattern-label-${i}`}
                value={c.label}
                onInput={(e) => setCustom(i, { label: e.currentTarget.value })}
                {...invalidProps(`pattern-label-${i}`, fields[`pattern-label-${i}`])}
              />
              <FieldErrors id={`pattern-label-${i}`} messages={fields[`pattern-label-${i}`]} />
              <label for={`pattern-apply-to-${i}`}>Reads</label>
              <select
                id={`pattern-apply-to-${i}`}
                value={c.apply_to}
                onChange={(e) => setCustom(i, { apply_to: e.currentTarget.value as ApplyTo })}
                {...invalidProps(`pattern-apply-to-${i}`, fields[`pattern-apply-to-${i}`])}
              >
                {READS.map((value) => (
                  <option value={value} key={value}>
                    {readsText(value)}
                  </option>
                ))}
              </select>
              <FieldErrors id={`pattern-apply-to-${i}`} messages={fields[`pattern-apply-to-${i}`]} />
              <button
                type="button"
                class="danger"
                onClick={() => set({ custom: draft.custom.filter((_, j) => j !== i) })}
              >
                Remove pattern {i + 1}
              </button>
            </div>
          ))}
          <button
            type="button"
            onClick={() =>
              set({
                custom: [...draft.custom, { pattern: "", action: "redact", label: "", apply_to: "request" }],
              })
            }
          >
            Add pattern
          </button>
          <FieldErrors id="content_filters" messages={fields.content_filters} />
        </fieldset>

        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? "Saving…" : "Save"}
          </button>
          <a href={isDefault ? "#/assignments" : "#/guardrails"}>Cancel</a>
        </div>
      </form>
    </section>
  );
}
