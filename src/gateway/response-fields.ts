/**
 * The fields the OpenAI chat API defines on every answer, filled in where an upstream leaves them
 * out, so that strict clients (the reference SDK validates each answer) read every upstream alike
 * (docs/gateway.md#answer-fields). What the upstream sent is never changed.
 */
export interface AnswerDefaults {
  /** Used when the upstream sends no id: the request's own id. */
  id: string;
  /** Unix seconds. */
  created: number;
  /** The catalog slug the request was routed to. */
  model: string;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Fills a chat.completion body; returns undefined when nothing was missing. */
export function completeAnswer(body: unknown, defaults: AnswerDefaults): Json | undefined {
  if (!isObject(body) || !Array.isArray(body.choices)) return undefined;
  const filled = fill(body, defaults, "chat.completion");
  // OpenAI's field, which strict clients require: null says the backend configuration is unknown.
  if (!("system_fingerprint" in body)) filled.system_fingerprint = null;
  return changed(body, filled);
}

/**
 * Fills one streamed chunk. `system_fingerprint` is left out rather than set to null where the
 * upstream has none: in chunks the reference SDK accepts a string or nothing, not null.
 */
export function completeChunk(chunk: unknown, defaults: AnswerDefaults): Json | undefined {
  if (!isObject(chunk) || !Array.isArray(chunk.choices)) return undefined;
  const filled = fill(chunk, defaults, "chat.completion.chunk");
  if (filled.system_fingerprint === null) delete filled.system_fingerprint;
  return changed(chunk, filled);
}

function fill(body: Json, defaults: AnswerDefaults, object: string): Json {
  const out: Json = { ...body };
  if (typeof out.id !== "string" || out.id === "") out.id = defaults.id;
  if (out.object !== object) out.object = object;
  if (!Number.isInteger(out.created)) out.created = defaults.created;
  if (typeof out.model !== "string" || out.model === "") out.model = defaults.model;
  out.choices = (body.choices as unknown[]).map((c, i) => {
    if (!isObject(c)) return c;
    const choice: Json = { ...c };
    if (!Number.isInteger(choice.index)) choice.index = i;
    if (!("finish_reason" in choice)) choice.finish_reason = null;
    return choice;
  });
  return out;
}

function changed(before: Json, after: Json): Json | undefined {
  return JSON.stringify(before) === JSON.stringify(after) ? undefined : after;
}
