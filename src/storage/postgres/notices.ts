import type { ChangeNotice } from "../ports.js";

/** The channel on which every instance announces committed management changes. */
export const CHANGES_CHANNEL = "guardrails_changes";

/** A notice as the payload of a PostgreSQL notification: one encoding for every sender. */
export function noticePayload(notice: ChangeNotice): string {
  return JSON.stringify(notice);
}

/** The notice a notification's payload carries (the listener's side of noticePayload). */
export function noticeOf(payload: string | undefined): ChangeNotice {
  return JSON.parse(payload ?? "{}") as ChangeNotice;
}
