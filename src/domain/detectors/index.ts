import type { BuiltinSlug } from "../content-filters.js";
import type { Detector, Span } from "../content-scan.js";
import { findAddresses, findPersonNames } from "./names-addresses.js";
import { findCreditCards, findEmails, findIpAddresses, findPhones, findSsns } from "./pii.js";
import { findPromptInjections } from "./prompt-injection.js";
import { findSecrets } from "./secrets.js";

export type { Detector, Span };

/**
 * The builtin detectors (decisions §6), one per slug. Each returns sorted, non-overlapping spans in
 * the text's own UTF-16 indices. Methods, known misses and measured precision and recall:
 * docs/detectors.md. Every pattern here is written without nested or adjacent ambiguous
 * quantifiers and with bounded repetition, so matching stays linear in practice on any input.
 */
export const DETECTORS: Record<BuiltinSlug, Detector> = {
  email: findEmails,
  phone: findPhones,
  ssn: findSsns,
  "credit-card": findCreditCards,
  "ip-address": findIpAddresses,
  secrets: findSecrets,
  "person-name": findPersonNames,
  address: findAddresses,
  "regex-prompt-injection": findPromptInjections,
};
