import type { Span } from "../content-scan.js";

/** Every match of a global regex that `accept` keeps, as spans (of group `group` when given). */
export function scan(
  re: RegExp,
  text: string,
  accept: (m: RegExpExecArray) => boolean = () => true,
  group = 0,
): Span[] {
  const spans: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    if (!accept(m)) continue;
    const part = m[group];
    if (part === undefined) continue;
    const start = group === 0 ? m.index : m.index + m[0].indexOf(part);
    spans.push({ start, end: start + part.length });
  }
  return spans;
}

/** Sorted, overlaps merged: what several patterns of one detector found. */
export function merge(...lists: Span[][]): Span[] {
  const all = lists.flat().sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const s of all) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

/** The text just before an index, lower-cased (context cues). */
export function before(text: string, index: number, length: number): string {
  return text.slice(Math.max(0, index - length), index).toLowerCase();
}
