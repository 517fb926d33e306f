/**
 * The request body sent to the provider. When nothing but the model changes (no redaction, no output
 * cap, no stream option added), it is the client's own JSON text with the top-level `model` value
 * replaced: serializing a long prompt again would cost more than the rest of the request's handling,
 * and the provider then reads exactly the bytes the client sent. Otherwise, or when the text's
 * `model` member cannot be found exactly (it is written twice, or some top-level key uses an
 * escape), the forwarded body is serialized.
 */
export function forwardedText(
  sent: string | undefined,
  body: object,
  forwarded: object,
  model: string,
): string {
  if (sent !== undefined && forwarded === body) {
    const value = topLevelString(sent, "model");
    if (value) return `${sent.slice(0, value.start)}${JSON.stringify(model)}${sent.slice(value.end)}`;
  }
  return JSON.stringify({ ...forwarded, model });
}

/** The end (exclusive) of the JSON string whose opening quote is at `start`; -1 if it never closes. */
export function stringEnd(text: string, start: number): number {
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    if (end < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return end + 1;
  }
}

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * Where the value of the top-level member `name` of a JSON object text is, when that value is a
 * string, `name` is written once and no top-level key holds an escape (which could spell it).
 * Strings are crossed with a native search for their closing quote, so a long prompt costs little.
 */
export function topLevelString(text: string, name: string): { start: number; end: number } | undefined {
  let depth = 0;
  let found: { start: number; end: number } | undefined;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      if (depth === 1) {
        let next = end;
        while (next < text.length && isSpace(text.charCodeAt(next))) next++;
        if (text.charCodeAt(next) === 0x3a) {
          // A key of the top-level object.
          const key = text.slice(i + 1, end - 1);
          if (key.includes("\\")) return undefined;
          if (key === name) {
            if (found) return undefined;
            let start = next + 1;
            while (start < text.length && isSpace(text.charCodeAt(start))) start++;
            if (text.charCodeAt(start) !== 0x22) return undefined;
            const valueEnd = stringEnd(text, start);
            if (valueEnd < 0) return undefined;
            found = { start, end: valueEnd };
            i = valueEnd - 1;
            continue;
          }
        }
      }
      i = end - 1;
    } else if (code === 0x7b || code === 0x5b) {
      if (depth === 0 && code !== 0x7b) return undefined;
      depth++;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return found;
}
