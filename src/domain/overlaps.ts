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
  // A cluster is a run of `sorted`, [first, i): kept as indices, with no array or closure per call
  // or per cluster (the scan redacts every text of every request through here).
  let first = 0;
  let end = (sorted[0] as RankedSpan).end;
  for (let i = 1; i < sorted.length; i++) {
    const s = sorted[i] as RankedSpan;
    if (s.start < end) {
      if (s.end > end) end = s.end;
      continue;
    }
    out.push(labelCluster(sorted, first, i, end));
    first = i;
    end = s.end;
  }
  out.push(labelCluster(sorted, first, sorted.length, end));
  return out;
}

/** The cluster sorted[first..last) as one span, labelled by its most specific span covering half of it. */
function labelCluster(sorted: RankedSpan[], first: number, last: number, end: number): LabelledSpan {
  const start = (sorted[first] as RankedSpan).start;
  const half = (end - start) / 2;
  let best: RankedSpan | undefined;
  for (let i = first; i < last; i++) {
    const s = sorted[i] as RankedSpan;
    if (s.end - s.start < half) continue;
    if (best === undefined || s.rank < best.rank) best = s;
  }
  return { start, end, label: (best ?? (sorted[first] as RankedSpan)).label };
}
