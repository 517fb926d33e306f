/**
 * Where each problem the API reports about a guardrail body is shown in the guardrail form, and in
 * which words (docs/behaviour.md#console-field-errors). The API names a problem by the JSON pointer
 * of the offending property (`/content_filters/0/pattern`) and says it the validator's way ("must
 * NOT have fewer than 1 characters"); the form shows a sentence for people beside the control that
 * holds the value. This is the one table of that mapping; test/console/guardrail-issues.test.ts
 * checks that every path the guardrail schema and the service can produce lands on a field.
 *
 * No DOM here: the test imports this file as it is.
 */

export interface Issue {
  path: string;
  message: string;
}

/** A problem placed on the form: the control's id, and the API property whose edit clears it. */
export interface Placed {
  /** The id of the control (or fieldset) it is shown beside; undefined: shown at the top. */
  field: string | undefined;
  /** The top-level API property: editing the part of the form that sends it clears the message. */
  group: string;
  text: string;
}

interface Rule {
  /** The path's shape, token by token: a name, `#` for a list index, `*` for any one name. */
  shape: string[];
  /** The control's id; `i` is the first index in the path. */
  field: (i: number, token: string) => string;
  /** How the sentence names the value when no sentence of its own fits. */
  label: (i: number, token: string) => string;
  /** Sentences of its own for this field's messages; undefined: the common ones. */
  say?: (message: string, i: number) => string | undefined;
}

const same = (id: string) => () => id;
const named = (label: string) => () => label;

const LIST_LABELS: Record<string, string> = {
  allowed_models: "Allowed models",
  allowed_providers: "Allowed providers",
  ignored_models: "Ignored models",
  ignored_providers: "Ignored providers",
};

const PERMISSION_LABELS: Record<string, string> = {
  enable_free_model_training: "Free models may train on prompts",
  enable_paid_model_training: "Paid models may train on prompts",
  enable_free_model_publication: "Free models may publish prompts",
  include_byok_in_budgets: "Bring-your-own-key requests count against the budget",
};

/** RE2's own complaint, with what usually causes it for people used to other regex engines. */
function patternSentence(message: string): string | undefined {
  const invalid = /^invalid regex pattern: (.*)$/s.exec(message);
  if (invalid) {
    const reason = invalid[1] ?? "";
    const hint = /perl operator|escape sequence: \\[1-9]/.test(reason)
      ? " RE2 has no lookahead, lookbehind or backreferences."
      : "";
    // RE2 says "<what>: <the part>"; the part is quoted so that it does not run into the sentence.
    const [what, part] = reason.split(/: (.*)$/s);
    const said = part ? `${what} “${part}”` : reason;
    return `This pattern is not valid RE2: ${said}.${hint}`;
  }
  const alone = /^pattern costs (\d+) to scan; at most (\d+) is allowed$/.exec(message);
  if (alone)
    return `This pattern is too costly to scan (${alone[1]}, at most ${alone[2]}): use smaller repetition counts or fewer alternatives.`;
  const together =
    /^the guardrail's patterns cost (\d+) to scan up to this one; at most (\d+) is allowed in all$/.exec(
      message,
    );
  if (together)
    return `With the patterns before it, this one makes the guardrail too costly to scan (${together[1]}, at most ${together[2]} in all): simplify or remove a pattern.`;
  if (/fewer than 1 characters|is required/.test(message)) return "Write a pattern, or remove this one.";
  return undefined;
}

/** A filter's `apply_to` the service does not know (docs/behaviour.md#apply-to). */
const readsSentence = (what: string) => `${what} reads requests, answers, or both: choose one of them.`;

function catalogSentence(message: string): string | undefined {
  const model = /^unknown model '(.*)'$/.exec(message);
  if (model) return `The catalog has no model “${model[1]}”: pick models from the list.`;
  const provider = /^unknown provider '(.*)'$/.exec(message);
  if (provider) return `The catalog has no provider “${provider[1]}”: pick providers from the list.`;
  return undefined;
}

/**
 * The table: every property of the guardrail body, in the order the form shows them. The first rule
 * whose shape matches the path wins.
 */
const RULES: Rule[] = [
  {
    shape: ["name"],
    field: same("name"),
    label: named("The name"),
    say: (m) => {
      if (/fewer than 1 characters|is required/.test(m)) return "Give the guardrail a name.";
      if (/workspace default guardrail cannot be changed/.test(m))
        return "A workspace's default guardrail keeps its name.";
      return undefined;
    },
  },
  { shape: ["description"], field: same("description"), label: named("The description") },
  { shape: ["allowed_data_regions"], field: same("allowed_data_regions"), label: named("Region addresses") },
  {
    shape: ["allowed_data_regions", "#"],
    field: same("allowed_data_regions"),
    label: named("Each region address"),
  },
  ...Object.keys(LIST_LABELS).flatMap((key): Rule[] => [
    { shape: [key], field: same(key), label: named(LIST_LABELS[key] ?? key) },
    {
      shape: [key, "#"],
      field: same(key),
      label: named(`Each of the ${(LIST_LABELS[key] ?? key).toLowerCase()}`),
      say: catalogSentence,
    },
  ]),
  { shape: ["enforce_zdr"], field: same("zdr"), label: named("Zero data retention") },
  {
    shape: ["enforce_zdr_*"],
    field: same("zdr"),
    label: (_i, token) => `Zero data retention for ${token.slice("enforce_zdr_".length)} models`,
  },
  ...Object.keys(PERMISSION_LABELS).map(
    (key): Rule => ({ shape: [key], field: same(key), label: named(`“${PERMISSION_LABELS[key]}”`) }),
  ),
  {
    shape: ["limit_usd"],
    field: same("limit_usd"),
    label: named("The limit"),
    say: (m) => {
      if (/^must be number/.test(m)) return "Enter the limit in dollars, as a number such as 25 or 12.50.";
      if (/^must be >= 0$/.test(m)) return "The limit cannot be negative.";
      const most = /^must be at most (.*)$/.exec(m);
      if (most) return `The limit can be at most $${Number(most[1]).toLocaleString("en-US")}.`;
      if (/micro-dollar/.test(m))
        return "Use at most 6 decimals: the limit is kept to a millionth of a dollar.";
      if (/reset_interval is set/.test(m)) return "Enter a limit, or set “Resets” to never.";
      return undefined;
    },
  },
  {
    shape: ["reset_interval"],
    field: same("reset_interval"),
    label: named("“Resets”"),
    say: (m) =>
      /limit_usd is set/.test(m)
        ? "Choose how often the budget resets, or clear the limit."
        : /^must be one of/.test(m)
          ? "Choose daily, weekly or monthly."
          : undefined,
  },
  {
    shape: ["alert_thresholds"],
    field: same("alert_thresholds"),
    label: named("Alert percents"),
    say: (m) => {
      const most = /more than (\d+) items/.exec(m);
      return most ? `At most ${most[1]} alert percents can be set.` : undefined;
    },
  },
  {
    shape: ["alert_thresholds", "#"],
    field: same("alert_thresholds"),
    label: named("Each alert percent"),
    say: (m) =>
      /^must be (integer|number|>=|<=)/.test(m)
        ? "Alert percents are whole numbers from 1 to 100, separated by commas, such as 50, 80."
        : undefined,
  },
  {
    shape: ["content_filter_builtins"],
    field: same("content_filter_builtins"),
    label: named("Builtin filters"),
  },
  {
    shape: ["content_filter_builtins", "#"],
    field: same("content_filter_builtins"),
    label: (i) => `Builtin filter ${i + 1}`,
  },
  {
    shape: ["content_filter_builtins", "#", "apply_to"],
    field: same("content_filter_builtins"),
    label: (i) => `Builtin filter ${i + 1}`,
    say: (m, i) => (/^must be one of/.test(m) ? readsSentence(`Builtin filter ${i + 1}`) : undefined),
  },
  {
    shape: ["content_filter_builtins", "#", "*"],
    field: same("content_filter_builtins"),
    label: (i) => `Builtin filter ${i + 1}`,
    say: (m) => {
      // Once per direction (docs/behaviour.md#apply-to): the service names the direction taken twice.
      const twice = /^builtin filter '(.*)' appears more than once(?: for the (request|response))?$/.exec(m);
      if (twice)
        return `The ${twice[1]} filter is chosen more than once${twice[2] ? ` for ${twice[2] === "request" ? "requests" : "answers"}` : ""}.`;
      if (/^scan_scope applies only to filters that read requests/.test(m))
        return "The choice of messages scanned applies only to a filter on requests.";
      if (/^scan_scope applies only to/.test(m))
        return "Only the prompt-injection filter has a choice of messages scanned.";
      return undefined;
    },
  },
  { shape: ["content_filters"], field: same("content_filters"), label: named("Custom patterns") },
  { shape: ["content_filters", "#"], field: same("content_filters"), label: (i) => `Pattern ${i + 1}` },
  {
    shape: ["content_filters", "#", "pattern"],
    field: (i) => `pattern-${i}`,
    label: (i) => `Pattern ${i + 1}`,
    say: patternSentence,
  },
  {
    shape: ["content_filters", "#", "action"],
    field: (i) => `pattern-action-${i}`,
    label: (i) => `The action of pattern ${i + 1}`,
  },
  {
    shape: ["content_filters", "#", "label"],
    field: (i) => `pattern-label-${i}`,
    label: (i) => `The replacement label of pattern ${i + 1}`,
  },
  {
    shape: ["content_filters", "#", "apply_to"],
    field: (i) => `pattern-apply-to-${i}`,
    label: (i) => `What pattern ${i + 1} reads`,
    say: (m, i) => (/^must be one of/.test(m) ? readsSentence(`Pattern ${i + 1}`) : undefined),
  },
  { shape: ["content_filters", "#", "*"], field: same("content_filters"), label: (i) => `Pattern ${i + 1}` },
];

/** RFC 6901 tokens of a JSON pointer ("" is the body itself: no tokens). */
function tokensOf(path: string): string[] {
  if (path === "") return [];
  return path
    .split("/")
    .slice(1)
    .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function matches(shape: string[], tokens: string[]): boolean {
  if (shape.length !== tokens.length) return false;
  return shape.every((s, k) => {
    const t = tokens[k] ?? "";
    if (s === "#") return /^\d+$/.test(t);
    if (s === "*") return true;
    if (s.endsWith("*")) return t.startsWith(s.slice(0, -1));
    return s === t;
  });
}

const TYPE_WORDS: Record<string, string> = {
  integer: "a whole number",
  number: "a number",
  string: "text",
  boolean: "on or off",
  array: "a list",
  object: "a set of settings",
  null: "empty",
};

/** The validator's common messages as sentences about `label`. */
function commonSentence(label: string, message: string): string {
  let m = /^must NOT have fewer than (\d+) characters$/.exec(message);
  if (m) return m[1] === "1" ? `${label} cannot be empty.` : `${label} needs at least ${m[1]} characters.`;
  m = /^must NOT have more than (\d+) characters$/.exec(message);
  if (m) return `${label} can be at most ${m[1]} characters long.`;
  m = /^must NOT have fewer than (\d+) items$/.exec(message);
  if (m) return `${label}: pick at least ${m[1]}, or none for no restriction.`;
  m = /^must NOT have more than (\d+) items$/.exec(message);
  if (m) return `${label}: at most ${m[1]} can be given.`;
  m = /^must be one of: (.*)$/.exec(message);
  if (m) return `${label}: choose one of ${m[1]}.`;
  m = /^must be (>=|<=|>|<) (.*)$/.exec(message);
  if (m) {
    const bound = { ">=": "at least", "<=": "at most", ">": "more than", "<": "less than" }[m[1] ?? ">="];
    return `${label} must be ${bound} ${m[2]}.`;
  }
  m = /^must be ([a-z]+(?: or [a-z]+)*)$/.exec(message);
  if (m) {
    const kinds = (m[1] ?? "").split(" or ").filter((k) => k !== "null");
    return `${label} must be ${kinds.map((k) => TYPE_WORDS[k] ?? k).join(" or ")}.`;
  }
  if (message === "is required") return `${label} is required.`;
  if (message === "cannot be updated") return `${label} cannot be changed.`;
  if (message === "is not a known property") return `${label} is not a setting of a guardrail.`;
  const sentence = message.charAt(0).toUpperCase() + message.slice(1);
  return `${label}: ${sentence}${/[.!?]$/.test(sentence) ? "" : "."}`;
}

/** Places one issue: beside its field in words for people, or at the top when no field holds it. */
export function placeIssue(issue: Issue): Placed {
  const tokens = tokensOf(issue.path);
  const group = tokens[0] ?? "";
  for (const rule of RULES) {
    if (!matches(rule.shape, tokens)) continue;
    const i = Number(tokens.find((t) => /^\d+$/.test(t)) ?? 0);
    const token = tokens[tokens.length - 1] ?? "";
    const text = rule.say?.(issue.message, i) ?? commonSentence(rule.label(i, token), issue.message);
    return { field: rule.field(i, token), group, text };
  }
  // The form takes the workspace from the page it was opened from and sends nothing else.
  if (group === "workspace_id")
    return {
      field: undefined,
      group,
      text: "This workspace does not exist (any more): open the form again.",
    };
  if (issue.message === "is not a known property")
    return { field: undefined, group, text: `The service does not know the setting “${tokens.join("/")}”.` };
  if (tokens.length === 0)
    return { field: undefined, group, text: commonSentence("The guardrail", issue.message) };
  return { field: undefined, group, text: commonSentence(`“${tokens.join("/")}”`, issue.message) };
}

/** Every issue of a 400, by field id, and those shown at the top. */
export function placeIssues(issues: readonly Issue[]): { fields: Record<string, Placed[]>; other: Placed[] } {
  const fields: Record<string, Placed[]> = {};
  const other: Placed[] = [];
  for (const issue of issues) {
    const placed = placeIssue(issue);
    if (placed.field === undefined) other.push(placed);
    else {
      const list = fields[placed.field] ?? [];
      // Several items of one list often fail alike (each alert percent): one sentence says it.
      if (!list.some((p) => p.text === placed.text)) list.push(placed);
      fields[placed.field] = list;
    }
  }
  return { fields, other };
}
