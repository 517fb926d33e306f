import type { Span } from "../content-scan.js";

/**
 * Shared helpers of the detectors. Context checks (the character before a match, the words before
 * it) are done here in JavaScript rather than with a leading lookbehind in the pattern: a pattern
 * that starts with a plain character class lets the regex engine skip quickly over text that cannot
 * start a match, which keeps each detector at a few microseconds on ordinary text.
 */

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Letters, digits and underscore, as `\w` (NaN, off either end of the text, is none of them). */
export function isWordChar(c: number): boolean {
  return isDigit(c) || isAsciiLetter(c) || c === 95;
}

/** Every match of a global pattern that `keep` turns into a span (null drops the match). */
export function collect(
  re: RegExp,
  text: string,
  keep: (m: RegExpExecArray) => Span | null,
  out: Span[] = [],
): Span[] {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    const span = keep(m);
    if (span) out.push(span);
  }
  return out;
}

/** The whole match as a span. */
export function whole(m: RegExpExecArray): Span {
  return { start: m.index, end: m.index + m[0].length };
}

/** Sorted, with overlapping or touching spans joined: the contract of every detector. */
export function normalizeSpans(spans: Span[]): Span[] {
  if (spans.length < 2) return spans;
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const s of spans) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ start: s.start, end: s.end });
  }
  return out;
}

/**
 * Whether `before` can end with a match of a context pattern of the form `(?:...)[trailing]{0,max}$`
 * whose every alternative ends with one of the characters of `last`. Such a pattern, anchored only
 * at its end, is tried from every position of the context; most contexts fail this check on their
 * last few characters, and the pattern then need not run (the check never refuses a context the
 * pattern matches).
 */
export function mayEndWith(before: string, last: string, trailing: string, max: number): boolean {
  for (let k = 0; k <= max; k++) {
    const c = before.charAt(before.length - 1 - k);
    if (c === "") return false;
    if (last.includes(c)) return true;
    if (!trailing.includes(c)) return false;
  }
  return false;
}

/** Up to `length` characters before `index`, lower-cased: the words a context rule looks at. */
export function lowerBefore(text: string, index: number, length: number): string {
  return text.slice(Math.max(0, index - length), index).toLowerCase();
}

/** A match with its bounds and the character codes just before and after it (NaN at the text's ends). */
export function around(text: string, m: RegExpExecArray) {
  const raw = m[0];
  const start = m.index;
  const end = start + raw.length;
  return { raw, start, end, prev: text.charCodeAt(start - 1), next: text.charCodeAt(end) };
}
