import type { Span } from "../content-scan.js";
import { around, collect, isWordChar, lowerBefore } from "./spans.js";

/**
 * US Social Security numbers. `AAA-GG-SSSS` with hyphens (or en dashes, as word processors write
 * them) is distinctive enough alone; the same digits separated by spaces or dots, or nine bare
 * digits, are kept only beside a cue (`SSN`, `social security`, `social`, `tax id`, `ID`, a JSON
 * `"ssn":` key, or `is my SSN` after the number), because tables of numbers and routing or order
 * numbers take those shapes too.
 *
 * Numbers the SSA never issues are skipped: area 000, 666 and 900-999 (900-999 are ITINs, a
 * different number), group 00 and serial 0000.
 *
 * The digits are written out (`\d\d\d` for `\d{3}`, the same language): the regex engine then
 * skips through text several characters at a time instead of trying every position.
 */
const SSN = /\b\d\d\d(?:([- .\u2013])\d\d\1\d\d\d\d|\d\d\d\d\d\d)/g;
const CUE =
  /(?:(?:\b|_)ssn|\bss#|\bss no\.?|\bsoc(?:ial)?(?: sec(?:urity)?)?(?: number| no\.?| #)?|\btax id|\btin|\bid)(?: ?\(ssn\))?(?: ?(?:number|no\.?|#))?(?: is)?["' \t:#=()-]{0,6}$/;
/**
 * The cue after the number (docs/detectors.md#ssn-cues): `123456789 is my SSN`, `123 45 6789 (SSN)`,
 * `123.45.6789 - social security number`.
 */
const CUE_AFTER =
  /^["']?[ \t]{0,2}(?:\(ssn\)|(?:(?:is|was|are|=|-|:|,) ?)?(?:(?:my|his|her|their|the|your|our) )?(?:ssn|social security|social\b|ss#))/i;

/** Area, group and serial of a possible SSN (SSA: never 000, 666 or 9xx; never 00; never 0000). */
export function isIssuableSsn(area: number, group: number, serial: number): boolean {
  return area !== 0 && area !== 666 && area < 900 && group !== 0 && serial !== 0;
}

function keep(text: string, m: RegExpExecArray): Span | null {
  const { raw, start, end, prev, next } = around(text, m);
  if (isWordChar(prev) || prev === 45 || prev === 46 || prev === 0x2013) return null;
  if (isWordChar(next)) return null;
  // A longer code goes on: 123-45-6789-0, 123-45-6789.1
  if ((next === 45 || next === 46 || next === 0x2013) && isWordChar(text.charCodeAt(end + 1))) return null;
  const bare = raw.length === 9;
  const digits = bare ? raw : raw.slice(0, 3) + raw.slice(4, 6) + raw.slice(7);
  if (!isIssuableSsn(Number(digits.slice(0, 3)), Number(digits.slice(3, 5)), Number(digits.slice(5)))) {
    return null;
  }
  // Spaces, dots and bare digits are ordinary numbers (`coords 123.45.6789`) without a cue before
  // or after them (docs/detectors.md#ssn-cues).
  const hyphenated = !bare && (m[1] === "-" || m[1] === "\u2013");
  if (!hyphenated && !CUE.test(lowerBefore(text, start, 40)) && !CUE_AFTER.test(text.slice(end, end + 40))) {
    return null;
  }
  return { start, end };
}

export function findSsns(text: string): Span[] {
  return collect(SSN, text, (m) => keep(text, m));
}
