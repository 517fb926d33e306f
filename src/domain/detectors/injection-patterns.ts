/**
 * Prompt-injection phrases, written for the normalized text of regex-prompt-injection.ts: lower
 * case letters only, no spaces or punctuation ("ignore all previous instructions" is
 * `ignoreallpreviousinstructions`). The syntax is deliberately small, so that the same source can
 * be turned into the spacing-tolerant prefilter: lower-case letters, `(?:`, `)`, `|`, `?` and
 * `{m,n}` after a group. No digits, classes or gaps.
 *
 * Each phrase needs its object, which is what separates an attack from ordinary text: "ignore the
 * noise", "disregard my previous email" and "follow the assembly instructions" match nothing.
 */

function any(...words: string[]): string {
  return `(?:${words.join("|")})`;
}

const IGNORE = any("ignore", "disregard", "forget", "override", "bypass", "skip", "discard", "abandon");
const IGNORE_YOUR = any("ignore", "disregard", "override", "bypass", "discard", "abandon");
const YOUR = any("your", "ur");
const DETERMINER = `${any("all", "any", "every", "each")}?(?:of)?${any("the", "your", "ur", "my", "these", "those")}?`;
const EARLIER = any(
  "previous",
  "prior",
  "above",
  "earlier",
  "preceding",
  "foregoing",
  "initial",
  "original",
  "old",
  "system",
  "developer",
  "safety",
  "existing",
  "current",
  "given",
);
const RULES = any(
  "instructions?",
  "rules?",
  "directions?",
  "prompts?",
  "guidelines?",
  "guardrails?",
  "constraints?",
  "directives?",
  "polic(?:y|ies)",
  "restrictions?",
  "programming",
);
const SYSTEM_TEXT = any(
  "systemprompt",
  "systemmessage",
  "systeminstructions",
  "developermessage",
  "developerinstructions",
  "safetyguidelines",
  "contentpolicy",
);
const NO_LIMITS = any(
  "rules",
  "restrictions",
  "guidelines",
  "filters",
  "limits",
  "limitations",
  "ethics",
  "morals",
  "policies",
  "safeguards",
  "boundaries",
  "censorship",
);
const UNRESTRICTED = any(
  "dan",
  "jailbroken",
  "unrestricted",
  "unfiltered",
  "uncensored",
  "unbound",
  "unchained",
  "unlimited",
  "evil",
);
const AI = any("chatgpt", "gpt", "ai", "assistant", "claude", "gemini", "llm", "model", "bot", "chatbot");
const REVEAL_STRONG = any("reveal", "leak", "dump", "expose", "disclose", "spitout", "exfiltrate");
const REVEAL = any(
  "print",
  "show",
  "repeat",
  "output",
  "display",
  "tell",
  "give",
  "writeout",
  "printout",
  "share",
  "recite",
  "echo",
  "reveal",
  "leak",
  "dump",
  "expose",
  "disclose",
);
const HIDDEN = any("hidden", "secret", "original", "initial", "confidential", "internal");
const PROMPT_TEXT = any(
  "systemprompt",
  "systemmessage",
  "systeminstructions",
  "initialprompt",
  "developermessage",
  "developerinstructions",
  "preprompt",
  "metaprompt",
);

export const INJECTION_PATTERNS: string[] = [
  // ignore / disregard ... previous instructions (and the object-first "the instructions above")
  `${IGNORE}${DETERMINER}${EARLIER}{1,2}(?:the)?${RULES}`,
  `${IGNORE_YOUR}${any("all", "any")}?(?:of)?${YOUR}${any("instructions?", "rules", "guidelines", "guardrails", "programming", "restrictions", "directives", "training")}`,
  `${IGNORE}${any("the", "all", "any")}?${any("instructions?", "rules", "prompts?", "guidelines")}${any("above", "before", "sofar", "youweregiven", "yougot", "youhavebeengiven", "fromyourdevelopers?", "fromyourcreators?")}`,
  `${IGNORE}${any("the", "your", "all", "any")}?${any("previous", "prior", "original", "initial")}?${SYSTEM_TEXT}`,
  `${any("ignore", "disregard", "forget")}${any("all", "everything")}(?:that${any("is", "was")})?(?:written)?above`,
  `forgeteverything(?:you${any("were", "have", "ve")}?(?:been)?${any("told", "taught", "given")})`,
  `${any("donot", "dont", "stop", "never")}${any("follow", "following", "obey", "obeying")}(?:${YOUR}${any("previous", "prior", "original", "system")}?|${any("the", "any")}${any("previous", "prior", "original", "system")})${RULES}`,
  // role hijacking
  `youarenow${any("a", "an", "the", "in")}?${any("dan", "jailbroken", "unrestricted", "unfiltered", "uncensored", "unbound", "unchained", "unlimited", "evil", "developermode", "freefrom", "nolonger(?:bound|restricted|an?ai)")}`,
  `youare${any("dan", "jailbroken", "unrestricted", "unfiltered", "uncensored", "evil")}now`,
  `${any("actas", "pretendtobe", "pretendyouare", "roleplayas", "behaveas", "simulate")}${any("a", "an")}?${UNRESTRICTED}${AI}?`,
  "doanythingnow",
  `${AI}with${any("developer", "dan", "jailbreak", "god")}mode`,
  `${any("dan", "jailbreak", "jailbroken")}mode${any("enabled", "activated", "on", "engaged")}?`,
  `pretend(?:that)?${any("you", "youare", "youre", "tobe", "tohave")}?${any("a", "an", "the")}?${AI}?${any("that", "who")}?(?:${any("has", "have", "had", "with")}${any("no", "zero")}|without(?:any)?)${NO_LIMITS}`,
  `${any("you", "youare", "youre", "youhave")}?(?:been)?${any("freed", "liberated", "released", "unshackled")}from${any("all", "any", "your")}?(?:of)?${any("your", "the")}?${any("rules", "restrictions", "constraints", "guidelines", "limitations", "programming", "filters")}`,
  `${any("you", "youare", "youre")}${any("nolonger", "no", "not")}boundby${any("any", "your", "the", "openais", "openai", "anthropics", "anthropic")}?${any("rules", "guidelines", "policies", "restrictions", "constraints", "contentpolicy", "contentpolicies", "ethics", "programming")}`,
  `fromnowon${any("you", "youare", "youre", "youwill", "youwillbe", "youmust")}?(?:goingto)?${any("ignore", "disregard", "bypass", "forget")}${any("your", "all", "any", "the")}?${RULES}`,
  // asking for the hidden prompt
  `${REVEAL_STRONG}${any("me", "us")}?(?:all)?(?:of)?${any("your", "the")}${HIDDEN}?${PROMPT_TEXT}`,
  `${REVEAL}${any("me", "us")}?(?:all)?(?:of)?your${HIDDEN}?${any("full", "entire", "complete", "exact", "whole")}?${PROMPT_TEXT}`,
  `${REVEAL}${any("me", "us")}?(?:all)?(?:of)?${any("your", "the")}${HIDDEN}${any("prompt", "instructions", "rules")}`,
  `${any("whatis", "whatare", "whatwere")}your${any("systemprompt", "systemmessage", "initialinstructions", "originalinstructions", "hiddeninstructions", "secretinstructions", "initialprompt")}`,
  `repeat(?:all)?(?:of)?the${any("words", "text", "content", "lines")}above${any("starting", "beginning")}with`,
  // forged chat-template turns
  `${any("imstart", "imend")}${any("system", "imstartsystem")}`,
  // switching the safety off
  `${any("disable", "deactivate", "turnoff", "switchoff", "remove", "bypass", "circumvent", "evade")}${any("all", "any")}?(?:of)?your${any("safety", "content", "ethical", "moral", "security")}?${any("filters?", "guidelines", "guardrails", "protocols", "restrictions", "safeguards", "policies", "policy", "censorship", "alignment")}`,
];
