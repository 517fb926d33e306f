import { type AnswerShape, answerTexts, writeAnswer } from "../../domain/answer-texts.js";
import type { Api } from "../../domain/catalog.js";
import {
  type ContentFilters,
  type FilterHit,
  type ScanResult,
  scanTexts,
} from "../../domain/content-scan.js";
import type { KeyPolicy } from "../../services/effective-policy.js";
import type { GatewayLog } from "../attempt.js";
import type { GatewayDeps } from "../prepare.js";
import { answerBlocked, answerUnscanned } from "./policy.js";

/** What the answer filters found, for the request's log line: which filter, how often, never the text. */
export type AnswerDetections = { filter: FilterHit["filter"]; action: FilterHit["action"]; count: number }[];

/** A whole answer as text and parsed, as complete.ts holds it. */
export interface WholeAnswer {
  text: string;
  parsed: unknown;
}

/**
 * Applies the answer filters to a whole (non-streamed) successful answer, in the shape the upstream
 * sent it (docs/gateway.md#answer-filters): `redact` rewrites the matches in what the client
 * receives, `block` throws the 403 that withholds it, `flag` only records. The spend is settled
 * before: the provider produced the answer either way. An answer nothing matched is returned as the
 * same object, so its bytes reach the client as the upstream wrote them.
 */
export async function filterWholeAnswer(
  gw: GatewayDeps,
  keyPolicy: KeyPolicy,
  filters: ContentFilters,
  shape: AnswerShape,
  api: Api,
  answer: WholeAnswer,
  log: GatewayLog,
  note: (detections: AnswerDetections) => void,
): Promise<WholeAnswer> {
  const parsed = answer.parsed;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    // A successful answer the readers cannot parse could carry anything: it is withheld, never sent
    // unread (docs/gateway.md#answer-filters). An empty one carries nothing.
    if (answer.text.trim() === "") return answer;
    gw.metrics.requests.inc({ outcome: "refused", reason: "answer_scan_failed", api });
    throw answerUnscanned();
  }
  const read = answerTexts(shape, parsed);
  if (read.texts.length === 0) return answer;
  const { policy, applied, key } = keyPolicy;
  let result: ScanResult;
  try {
    // Large answers go to the scan workers as large requests do (docs/gateway.md#large-scans).
    const spec = {
      content_filter_builtins: policy.answer_filter_builtins,
      content_filters: policy.answer_filters,
    };
    result =
      (await gw.scanner.scanLarge(spec, applied, filters, read.texts, key.organization_id)) ??
      scanTexts(filters, read.texts);
  } catch (err) {
    // Fails closed: an answer is never sent unscanned. Only the error's kind is logged: a detector's
    // message is not ours to vouch for.
    log.warn(
      { reason: "answer_scan_failed", error: err instanceof Error ? err.constructor.name : typeof err },
      "answer scan failed",
    );
    gw.metrics.requests.inc({ outcome: "refused", reason: "answer_scan_failed", api });
    throw answerUnscanned();
  }
  if (result.hits.length === 0) return answer;
  for (const hit of result.hits)
    gw.metrics.detections.inc(
      {
        filter: hit.filter.type === "builtin" ? hit.filter.slug : "custom",
        action: hit.action,
        direction: "response",
      },
      hit.count,
    );
  note(result.hits.map((h) => ({ filter: h.filter, action: h.action, count: h.count })));
  if (result.block) {
    gw.metrics.requests.inc({ outcome: "refused", reason: "answer_content_filter", api });
    throw answerBlocked(applied, result.block);
  }
  if (result.replacements.length === 0) return answer;
  return writeAnswer(answer.text, read, result.replacements);
}
