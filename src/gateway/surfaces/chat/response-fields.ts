import type { AnswerDefaults } from "../surface.js";

/**
 * The fields the OpenAI chat API defines on every answer, filled in where an upstream leaves them
 * out, so that strict clients (the reference SDK validates each answer) read every upstream alike
 * (docs/gateway.md#answer-fields). What the upstream sent is never changed.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The answer to send for the upstream's `text` (parsed: `body`): its own bytes when nothing is
 * missing; when only `system_fingerprint` is, the same bytes with `"system_fingerprint":null`
 * written before the closing brace (the text parsed as an object, so its last `}` closes it), since
 * serializing a long answer again would cost more than the rest of its handling; otherwise the
 * filled answer, serialized.
 */
export function completeAnswerText(text: string, body: unknown, defaults: AnswerDefaults): string {
  if (!isObject(body) || !Array.isArray(body.choices)) return text;
  const filled = fill(body, defaults, "chat.completion");
  const fingerprint = "system_fingerprint" in body;
  if (filled) {
    // OpenAI's field, which strict clients require: null says the backend configuration is unknown.
    if (!fingerprint) filled.system_fingerprint = null;
    return JSON.stringify(filled);
  }
  if (fingerprint) return text;
  const end = text.lastIndexOf("}");
  // An object with `choices` has a member already, so the new one follows a comma.
  return `${text.slice(0, end)},"system_fingerprint":null${text.slice(end)}`;
}

/**
 * Fills one streamed chunk. `system_fingerprint` is left out rather than set to null where the
 * upstream has none: in chunks the reference SDK accepts a string or nothing, not null.
 */
export function completeChunk(chunk: unknown, defaults: AnswerDefaults): Json | undefined {
  if (!isObject(chunk) || !Array.isArray(chunk.choices)) return undefined;
  const filled = fill(chunk, defaults, "chat.completion.chunk");
  if (chunk.system_fingerprint === null) {
    const out = filled ?? { ...chunk };
    delete out.system_fingerprint;
    return out;
  }
  return filled;
}

/**
 * A copy of `body` with what is missing filled in, or undefined when nothing is: every answer pays
 * for this check, so it reads the fields rather than serializing the body to compare it.
 */
function fill(body: Json, defaults: AnswerDefaults, object: string): Json | undefined {
  const choices = body.choices as unknown[];
  const choiceMissing = (c: unknown) =>
    isObject(c) && (!Number.isInteger(c.index) || !("finish_reason" in c));
  const missing =
    typeof body.id !== "string" ||
    body.id === "" ||
    body.object !== object ||
    !Number.isInteger(body.created) ||
    typeof body.model !== "string" ||
    body.model === "" ||
    choices.some(choiceMissing);
  if (!missing) return undefined;
  const out: Json = { ...body };
  if (typeof out.id !== "string" || out.id === "") out.id = defaults.id;
  if (out.object !== object) out.object = object;
  if (!Number.isInteger(out.created)) out.created = defaults.created;
  if (typeof out.model !== "string" || out.model === "") out.model = defaults.model;
  out.choices = choices.map((c, i) => {
    if (!isObject(c)) return c;
    const choice: Json = { ...c };
    if (!Number.isInteger(choice.index)) choice.index = i;
    if (!("finish_reason" in choice)) choice.finish_reason = null;
    return choice;
  });
  return out;
}
