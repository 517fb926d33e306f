import type { Span } from "../content-scan.js";
import {
  collect,
  isAsciiLetter,
  isDigit,
  isWordChar,
  lowerBefore,
  mayEndWith,
  normalizeSpans,
} from "./spans.js";

/**
 * IPv4 and IPv6 addresses.
 *
 * IPv4: four octets 0-255, zero-padded or not (`010.001.001.001`, as some tools print them).
 * Version strings take the same shape, so a dotted quad is refused when it is part of a
 * longer dotted run (`1.2.3.4.5`, OIDs), glued to a word (`v1.2.3.4`, `libssl.so.1.1.1.1`), a
 * product token (`Chrome/120.0.1.1`), or follows a version or numbering cue (`version`, `build`,
 * `firmware`, `Python`, `Section`, `Figure`, `==`).
 *
 * IPv6: a run of hex digits, colons and dots is parsed: eight groups, or fewer with exactly one
 * `::`, an IPv4 tail allowed. To keep times (`12:30:45`), MAC addresses (six groups), C++ and Rust
 * paths (`std::io`, `Cafe::Bad`) and Python slices (`a[::2]`, `x[1::3]`) out, a candidate needs a
 * decimal digit, and a compressed one at least two groups and four hex digits (or is `::1`).
 */
const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|0\\d\\d|[1-9]?\\d)";
const IPV4 = new RegExp(`${OCTET}(?:\\.${OCTET}){3}`, "g");
const IPV4_WHOLE = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const IPV6 = /[0-9A-Fa-f]{0,4}:[0-9A-Fa-f:.]{1,45}/g;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

export const VERSION_CUE =
  /(?:\bversion|\bver\.?|\bv|\brelease|\bbuild|\bfirmware|\bfw|\bupdate|\bupgrade(?: to)?|\bpatch|\brev\.?|\brevision|\bsection|\bsec\.?|\bchapter|\bch\.?|\bclause|\barticle|\bfigure|\bfig\.?|\btable|\bstep|\brule|\bappendix|§|\bpython|\bnode|\bjava|\bruby|\bphp|\bperl|\bgo|\brust|\bkernel|\blinux|\bios|\bandroid|\bmacos|\bwindows|\bsdk|\bapi|\bedition|==|>=|<=|~=|\^|~)[ :=]{0,3}$/;
/** The last character of every word and sign of VERSION_CUE (mayEndWith). */
export const VERSION_CUE_LAST = "nr.vedwohcgpx§ayltski=^~";

function keepIpv4(text: string, m: RegExpExecArray): Span | null {
  const start = m.index;
  const end = start + m[0].length;
  const prev = text.charCodeAt(start - 1);
  const next = text.charCodeAt(end);
  if (isWordChar(prev) || prev === 46) return null;
  if (isWordChar(next)) return null;
  // 1.2.3.4.5 or 1.2.3.4-beta: a longer dotted or hyphenated token.
  if ((next === 46 || next === 45) && isWordChar(text.charCodeAt(end + 1))) return null;
  // Product tokens (Chrome/120.0.1.1); a URL's // is an address.
  if (prev === 47 && text.charCodeAt(start - 2) !== 47 && isWordChar(text.charCodeAt(start - 2))) return null;
  const before = lowerBefore(text, start, 20);
  if (mayEndWith(before, VERSION_CUE_LAST, " :=", 3) && VERSION_CUE.test(before)) return null;
  return { start, end };
}

function countHexDigits(groups: string[]): number {
  let n = 0;
  for (const g of groups) n += g.length;
  return n;
}

/** True when `s` is an IPv6 address written in a form this detector accepts (see above). */
export function isIpv6(s: string): boolean {
  if (s.includes(":::")) return false;
  const halves = s.split("::");
  if (halves.length > 2) return false;
  const compressed = halves.length === 2;
  const groups: string[] = [];
  for (const half of halves) if (half !== "") groups.push(...half.split(":"));
  let width = 0;
  for (const [i, g] of groups.entries()) {
    if (g.includes(".")) {
      if (i !== groups.length - 1 || !IPV4_WHOLE.test(g)) return false;
      width += 2;
    } else if (HEX_GROUP.test(g)) {
      width += 1;
    } else {
      return false;
    }
  }
  if (!/\d/.test(s)) return false;
  if (!compressed) return width === 8;
  if (width > 7) return false;
  return s === "::1" || (groups.length >= 2 && countHexDigits(groups) >= 4);
}

function keepIpv6(text: string, m: RegExpExecArray): Span | null {
  let candidate = m[0];
  // A sentence's period, or a port's colon, is not part of the address.
  while (candidate.endsWith(".")) candidate = candidate.slice(0, -1);
  if (candidate.endsWith(":") && !candidate.endsWith("::")) candidate = candidate.slice(0, -1);
  const start = m.index;
  const end = start + candidate.length;
  const prev = text.charCodeAt(start - 1);
  if (isWordChar(prev) || prev === 58 || prev === 46) return null;
  if (isAsciiLetter(text.charCodeAt(end)) || isDigit(text.charCodeAt(end))) return null;
  return isIpv6(candidate) ? { start, end } : null;
}

export function findIpAddresses(text: string): Span[] {
  const spans: Span[] = [];
  if (text.includes(".")) collect(IPV4, text, (m) => keepIpv4(text, m), spans);
  if (text.includes(":")) collect(IPV6, text, (m) => keepIpv6(text, m), spans);
  return normalizeSpans(spans);
}
