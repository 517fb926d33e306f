import type { ContentFilters } from "../../domain/content-scan.js";
import type { AppliedGuardrail } from "../../domain/policy.js";
import type { AnswerDefaults, EventReader } from "../surfaces/surface.js";
import { answerBlocked } from "./policy.js";
import { Channels, ChatChunkAdapter, chatRefusal, type DoorRefusal, GuardedEvents } from "./stream.js";
import { MessagesAdapter } from "./stream-messages.js";
import { ResponsesAdapter, responsesRefusal } from "./stream-responses.js";

/** The doors that stream text, by surface id. */
type Door = "chat" | "responses" | "messages";

/**
 * The surface's reader of a streamed answer wrapped in the answer filters' adapter of the upstream's
 * API (docs/gateway.md#answer-streams): chat chunks when the upstream speaks chat (the chat door, and
 * the Responses and Messages doors translated), else the door's own events. Null for a door that
 * returns no text (embeddings): its stream is relayed as before.
 */
export function guardStream(
  door: string,
  translated: boolean,
  inner: EventReader,
  filters: ContentFilters,
  applied: AppliedGuardrail[],
  defaults: AnswerDefaults,
  /** The Messages door's error event, from its surface (the relay's own path). */
  doorError: DoorRefusal,
): GuardedEvents | null {
  if (door !== "chat" && door !== "responses" && door !== "messages") return null;
  const channels = new Channels(filters, (hit) => {
    throw answerBlocked(applied, hit);
  });
  const which = door as Door;
  if (which === "chat" || translated) {
    const adapter = new ChatChunkAdapter(channels);
    const refuse =
      which === "chat"
        ? chatRefusal(adapter, defaults)
        : which === "responses"
          ? responsesRefusal(
              defaults,
              () => (inner as { nextSequence?: number }).nextSequence ?? 0,
              () => undefined,
            )
          : doorError;
    return new GuardedEvents(inner, adapter, channels, refuse);
  }
  if (which === "messages")
    return new GuardedEvents(inner, new MessagesAdapter(channels), channels, doorError);
  const adapter = new ResponsesAdapter(channels);
  return new GuardedEvents(
    inner,
    adapter,
    channels,
    responsesRefusal(
      defaults,
      () => adapter.nextSequence(),
      () => adapter.responseId,
    ),
  );
}
