/**
 * The worst-case cost of scanning text with an RE2 pattern, estimated from the pattern text alone
 * (the `re2` package exposes no program size). RE2 is linear in the text, but its constant is the
 * number of pattern positions that can be alive at once: when its DFA gives up on a pattern whose
 * states explode (`a[ab]{999}c` over random `a`/`b` text), it simulates every position for every
 * byte. So the cost is the pattern's size once counted repetitions are written out: `[ab]{999}` is
 * 999 positions, `(?:x{10}){50}` 500, an alternation the sum of its branches. Measured rates and the
 * limits built on this: docs/api.md#pattern-limits.
 *
 * The scanner follows RE2's syntax (not ECMAScript's: `(?i)`, `\pL`, `[[:alpha:]]`, `\Q…\E`,
 * `(?P<name>…)`), and it runs only on patterns RE2 has compiled, so it needs no error handling: an
 * unexpected character simply counts as one position.
 */

/**
 * A class that names Unicode ranges (`\pL`, `[\p{Greek}\d]`, `[à-ÿ]`) compiles to hundreds of UTF-8
 * instructions: it is counted as this many positions, which bounds compile time and the memory of
 * the guardrail's RE2 set as well as the scan.
 */
export const UNICODE_CLASS_COST = 10;

/** RE2's own bound on a counted repetition (`{1001}` does not compile). */
const MAX_REPEAT = 1000;

interface Cursor {
  src: string;
  at: number;
}

/** One atom's cost: 1, or UNICODE_CLASS_COST when it names ranges beyond ASCII. */
function atomCost(unicode: boolean): number {
  return unicode ? UNICODE_CLASS_COST : 1;
}

/** After a backslash outside a class: consumes the escape, returns whether it names Unicode ranges. */
function readEscape(c: Cursor): { unicode: boolean; literalRun?: number } {
  const ch = c.src[c.at++];
  switch (ch) {
    case "p":
    case "P":
      if (c.src[c.at] === "{") {
        const close = c.src.indexOf("}", c.at);
        c.at = close < 0 ? c.src.length : close + 1;
      } else c.at++;
      return { unicode: true };
    case "x":
    case "u":
      if (c.src[c.at] === "{") {
        const close = c.src.indexOf("}", c.at);
        c.at = close < 0 ? c.src.length : close + 1;
      } else c.at += ch === "x" ? 2 : 4;
      return { unicode: false };
    case "Q": {
      // Everything up to \E is literal: one position per character.
      const end = c.src.indexOf("\\E", c.at);
      const stop = end < 0 ? c.src.length : end;
      const run = [...c.src.slice(c.at, stop)].length;
      c.at = end < 0 ? stop : end + 2;
      return { unicode: false, literalRun: run };
    }
    default:
      if (ch !== undefined && ch >= "0" && ch <= "7") {
        // Octal: up to three digits.
        for (let i = 0; i < 2 && c.src[c.at] !== undefined && /[0-7]/.test(c.src[c.at] as string); i++)
          c.at++;
      }
      return { unicode: false };
  }
}

/** After `[`: consumes the class up to its closing `]`, returns whether it names Unicode ranges. */
function charClass(c: Cursor): boolean {
  let unicode = false;
  if (c.src[c.at] === "^") c.at++;
  // A `]` first in the class is a literal.
  if (c.src[c.at] === "]") c.at++;
  while (c.at < c.src.length) {
    const ch = c.src[c.at] as string;
    if (ch === "]") {
      c.at++;
      return unicode;
    }
    if (ch === "[" && c.src[c.at + 1] === ":") {
      const close = c.src.indexOf(":]", c.at + 2);
      c.at = close < 0 ? c.src.length : close + 2;
      continue;
    }
    if (ch === "\\") {
      c.at++;
      const e = c.src[c.at];
      if (e === "p" || e === "P") unicode = true;
      if (e === "x" && c.src[c.at + 1] === "{") {
        const close = c.src.indexOf("}", c.at);
        const hex = Number.parseInt(c.src.slice(c.at + 2, close), 16);
        if (!(hex < 0x80)) unicode = true;
      }
      readEscape(c);
      continue;
    }
    const cp = c.src.codePointAt(c.at) as number;
    if (cp >= 0x80) unicode = true;
    c.at += cp > 0xffff ? 2 : 1;
  }
  return unicode;
}

/** After `{` that may open a counted repetition: its upper count (or lower, when unbounded), or null. */
function repetition(c: Cursor): number | null {
  const m = /^\{(\d+)(,(\d*))?\}/.exec(c.src.slice(c.at, c.at + 12));
  if (!m) return null;
  c.at += m[0].length;
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : m[3] === "" ? undefined : Number(m[3]);
  // x{n,} is written out as n copies and a star: n positions (at least the one of the star).
  return Math.min(MAX_REPEAT, Math.max(1, max ?? min));
}

/** Parses an alternation up to `)` or the end; returns its cost. */
function alternation(c: Cursor): number {
  let total = 0;
  let branch = 0;
  let last = 0;
  while (c.at < c.src.length) {
    const ch = c.src[c.at] as string;
    if (ch === ")") break;
    c.at++;
    let atom: number | null = null;
    switch (ch) {
      case "|":
        total += branch;
        branch = 0;
        last = 0;
        continue;
      case "(": {
        if (c.src[c.at] === "?") {
          // (?flags) changes flags and matches nothing; (?flags:…), (?P<n>…), (?<n>…) group.
          const m = /^\?(?:P?<[^>]*>|[a-zA-Z-]*(:|\)))/.exec(c.src.slice(c.at, c.at + 200));
          if (m) {
            c.at += m[0].length;
            if (m[1] === ")") continue;
          } else c.at++;
        }
        atom = alternation(c);
        if (c.src[c.at] === ")") c.at++;
        break;
      }
      case "[":
        atom = atomCost(charClass(c));
        break;
      case "\\": {
        const e = readEscape(c);
        if (e.literalRun !== undefined) {
          // \Q…\E: a run of literals, the last of which a quantifier applies to.
          branch += Math.max(0, e.literalRun - 1);
          atom = e.literalRun > 0 ? 1 : 0;
        } else atom = atomCost(e.unicode);
        break;
      }
      case "*":
      case "+":
      case "?":
        // A star, plus or question mark adds one instruction around what it repeats.
        if (c.src[c.at] === "?") c.at++;
        branch += 1;
        continue;
      case "{": {
        c.at--;
        const count = repetition(c);
        if (count === null) {
          // Not a counted repetition: RE2 reads the brace as a literal.
          c.at++;
          atom = 1;
          break;
        }
        if (c.src[c.at] === "?") c.at++;
        branch += last * (count - 1);
        last *= count;
        continue;
      }
      default:
        atom = 1;
        // A surrogate pair is one character.
        if ((ch.codePointAt(0) as number) >= 0xd800 && (ch.codePointAt(0) as number) <= 0xdbff) c.at++;
    }
    branch += atom;
    last = atom;
  }
  return total + branch;
}

/** The estimated worst-case scan cost of one pattern, in positions (see the module comment). */
export function patternCost(pattern: string): number {
  const c: Cursor = { src: pattern, at: 0 };
  let cost = 0;
  // A stray `)` cannot reach here (RE2 refuses it); the loop still always advances.
  while (c.at < c.src.length) {
    cost += alternation(c);
    if (c.src[c.at] === ")") c.at++;
  }
  return cost;
}
