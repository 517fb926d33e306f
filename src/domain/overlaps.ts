import type { BuiltinSlug } from "./content-filters.js";

/**
 * Which label a redaction shows where two filters match overlapping text (docs/detectors.md, "When
 * two filters match the same text"). A number, a name or a phrase can satisfy several detectors at
 * once: `047-75-5024` after `SSN` is also shaped like a phone number, the street part of an address
 * is also a capitalized pair of words. The detector that needs more evidence to fire is the more
 * specific one, and its label is the truer description of what was removed.
 */

/** Lower is more specific. Custom patterns rank above every builtin: an operator wrote them for this data. */
export const CUSTOM_RANK = 0;
export const BUILTIN_RANK: Record<BuiltinSlug, number> = {
  secrets: 1,
  "credit-card": 2,
  ssn: 3,
  email: 4,
  "ip-address": 5,
  phone: 6,
  address: 7,
  "person-name": 8,
  "regex-prompt-injection": 9,
};

export interface RankedSpan {
  start: number;
  end: number;
  label: string;
  rank: number;
}

export interface LabelledSpan {
  start: number;
  end: number;
  label: string;
}

/**
 * Joins overlapping spans into one, so nothing any filter matched is left in the text, and labels
 * it with the most specific filter among those that cover at least half of it: an SSN that the
 * phone detector also matched is `[SSN]`; a name inside an address is part of `[ADDRESS]`; an email
 * inside a long prompt-injection phrase does not relabel the phrase.
 */
export function resolveOverlaps(spans: RankedSpan[]): LabelledSpan[] {
  if (spans.length === 0) return [];
  const sorted = spans.slice().sort((a, b) => a.start - b.start || b.end - a.end);
  const out: LabelledSpan[] = [];
  let cluster: RankedSpan[] = [];
  let start = 0;
  let end = -1;
  const flush = () => {
    if (cluster.length === 0) return;
    const half = (end - start) / 2;
    let best: RankedSpan | undefined;
    for (const s of cluster) {
      if (s.end - s.start < half) continue;
      if (best === undefined || s.rank < best.rank) best = s;
    }
    out.push({ start, end, label: (best ?? (cluster[0] as RankedSpan)).label });
  };
  for (const s of sorted) {
    if (s.start < end) {
      cluster.push(s);
      if (s.end > end) end = s.end;
      continue;
    }
    flush();
    cluster = [s];
    start = s.start;
    end = s.end;
  }
  flush();
  return out;
}
