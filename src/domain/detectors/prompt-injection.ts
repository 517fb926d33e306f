import type { Span } from "../content-scan.js";
import { merge } from "./spans.js";

/**
 * Prompt-injection phrases, matched on a normalized copy of the text: lower case, and only letters
 * and digits kept, so spacing, punctuation, case and invisible characters cannot split a phrase
 * ("I g n o r e  ALL previous... instructions"). Each kept character remembers its index in the
 * original, so a match maps back to a span of the original text.
 */
/**
 * Each family of phrases with the stems one of which it must contain: a family whose stems are all
 * absent from the normalized text is not run (most text mentions none of them).
 */
const FAMILIES: { stems: string[]; re: RegExp }[] = [
  {
    // ignore / disregard ... previous instructions
    stems: ["ignor", "disregard", "forget", "overrid", "bypass"],
    re: /(?:ignore|disregard|forget|override|bypass)(?:all|any|every|the)?(?:of)?(?:the|your|my)?(?:previous|prior|above|earlier|preceding|initial|original|system|developer|safety){1,2}(?:instructions?|rules|directions|prompts?|guidelines|guardrails|commands|constraints)|(?:ignore|disregard|forget)(?:all|any)?(?:your|the)(?:instructions?|rules|guidelines|guardrails|systemprompt)/g,
  },
  {
    // role hijacking
    stems: ["younow", "youarenow", "actas", "pretend", "youwillbe", "anythingnow", "mode"],
    re: /youarenow(?:dan|indevelopermode|jailbroken|unrestricted|unfiltered|nolongerbound|freefrom)|(?:actas|pretendtobe|youwillbe)(?:dan|anunrestricted|anunfiltered|ajailbroken|anaiwithoutrestrictions)|doanythingnow|(?:developermode|jailbreakmode|godmode)(?:enabled|activated|on)|pretend(?:that)?(?:you|youhave)(?:have)?no(?:rules|restrictions|guidelines|filters|limits)/g,
  },
  {
    stems: ["fromnowon"],
    re: /fromnowon(?:you|your)(?:will|must|are|answer|respond)(?:ignore|without|notfollow|nolonger|asdan|unrestricted)/g,
  },
  {
    // exfiltrating the hidden prompt
    stems: ["prompt", "instruction", "systemmessage", "developermessage"],
    re: /(?:reveal|print|show|repeat|output|display|leak|dump|tellme|giveme)(?:me)?(?:all)?(?:your|the)(?:full|entire|hidden|secret|original|initial|exact)?(?:systemprompt|systemmessage|initialinstructions|hiddeninstructions|originalinstructions|instructionsabove|promptabove|developermessage)/g,
  },
  // forged turn markers and injected instruction blocks
  {
    stems: ["imstart", "imend", "newinstructions"],
    re: /(?:imstart|imend)system|newinstructions(?:follow|are|override)/g,
  },
];

function normalize(text: string): { norm: string; map: Int32Array } {
  const map = new Int32Array(text.length);
  const codes = new Uint16Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) c += 32;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      codes[n] = c;
      map[n++] = i;
    }
  }
  // In slices: a call's argument count is bounded.
  let norm = "";
  for (let at = 0; at < n; at += 8192) {
    norm += String.fromCharCode.apply(
      null,
      codes.subarray(at, Math.min(n, at + 8192)) as unknown as number[],
    );
  }
  return { norm, map: map.subarray(0, n) };
}

export function findPromptInjections(text: string): Span[] {
  const { norm, map } = normalize(text);
  const found: Span[] = [];
  for (const family of FAMILIES) {
    if (!family.stems.some((stem) => norm.includes(stem))) continue;
    const re = family.re;
    re.lastIndex = 0;
    for (let m = re.exec(norm); m !== null; m = re.exec(norm)) {
      const start = map[m.index] ?? 0;
      found.push({ start, end: (map[m.index + m[0].length - 1] ?? start) + 1 });
    }
  }
  return merge(found);
}
