import type { BuiltinSlug } from "../content-filters.js";
import type { Detector, Span } from "../content-scan.js";
import { findAddresses } from "./address.js";
import { findCreditCards } from "./credit-card.js";
import { findEmails } from "./email.js";
import { findIpAddresses } from "./ip-address.js";
import { findPersonNames } from "./person-name.js";
import { findPhones } from "./phone.js";
import { findPromptInjections } from "./regex-prompt-injection.js";
import { findSecrets } from "./secrets.js";
import { findSsns } from "./ssn.js";

/**
 * `Span` (UTF-16 indices into the scanned text, end exclusive) and `Detector` are declared once, in
 * content-scan.ts, where the scan consumes them; they are re-exported here as the detectors' API.
 */
export type { Detector, Span };

/**
 * The builtin detectors (docs/behaviour.md#builtin-filters), one per slug. Each is pure (no I/O, no clock) and returns
 * sorted, non-overlapping spans in the coordinates of the text it was given. Methods, known misses
 * and measured precision and recall: docs/detectors.md. The patterns have no nested or adjacent
 * ambiguous quantifiers and bound every repetition, so matching stays linear on any input.
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
