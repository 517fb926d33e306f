/**
 * How much of a budget a request may hold (docs/gateway.md#budgets). A request reserves what its
 * answer may cost; where a layer's remainder cannot pay for the whole answer, the answer is capped
 * at what the remainder pays for, and the request is refused only when not even a minimal answer is
 * affordable. Pure: the same rule decides in the store (atomically) and in the dry run (on a read).
 */

/** The output a request is given when it names none, and the least answer worth sending. */
export interface OutputAllowance {
  /** Output tokens reserved (and forwarded as the cap) for a request that sets no max_tokens. */
  defaultTokens: number;
  /** Fewer output tokens than this are not worth a request: below it the request is refused. */
  minimalTokens: number;
}

export const DEFAULT_OUTPUT_ALLOWANCE: OutputAllowance = { defaultTokens: 2048, minimalTokens: 16 };

/** A request's price: its prompt bound's cost and each output token's, in micro-dollars (unrounded). */
export interface RequestPrice {
  promptMicros: number;
  perOutputTokenMicros: number;
}

/** Cost in whole micro-dollars of the prompt and `tokens` of output, rounded up. */
export function priceOf(price: RequestPrice, tokens: number): number {
  return Math.ceil(price.promptMicros + tokens * price.perOutputTokenMicros);
}

/** The most output tokens `micros` pays for beside the prompt; Infinity when output is free. */
export function tokensPaidBy(price: RequestPrice, micros: number): number {
  if (price.perOutputTokenMicros <= 0) return micros >= Math.ceil(price.promptMicros) ? Infinity : -1;
  return Math.floor((micros - price.promptMicros) / price.perOutputTokenMicros);
}

export interface LayerUsage {
  limit_micros: number;
  /** Settled spend in the window. */
  spent_micros: number;
  /** Held by requests in flight. */
  reserved_micros: number;
}

export type Admission =
  | {
      admitted: true;
      /** Output tokens the reservation pays for: the wanted ones, or fewer when capped. */
      tokens: number;
      capped: boolean;
      /** What to reserve on every counted layer. */
      amount_micros: number;
    }
  | {
      admitted: false;
      /** Index (in the layers given) of the layer that refuses. */
      index: number;
      /**
       * budget_exhausted: settled spend is at or over the limit. request_exceeds_budget: even a
       * minimal answer costs more than the limit leaves after settled spend, so it never fits in this
       * window. budget_reserved: it would fit, but requests in flight hold the remainder.
       */
      reason: "budget_exhausted" | "request_exceeds_budget" | "budget_reserved";
      /** Output tokens that would fit: in what settled spend leaves (reserved) or leaves now (the others). */
      tokens_that_fit: number;
    };

/**
 * The output tokens, up to `wanted`, that `micros` pay for (a function of the module: admit runs on
 * every request, and under tsx each closure it created cost a call naming it).
 */
function tokensThatFit(price: RequestPrice, wanted: number, micros: number): number {
  return Math.max(0, Math.min(wanted, tokensPaidBy(price, micros)));
}

/**
 * Admits a request on every layer that counts it, or says which layer refuses and why. `wanted` is
 * the output the request asks for (its max_tokens, or the default allowance), never over the
 * model's; the layers are judged in order and the first refusal decides.
 */
export function admit(
  layers: readonly LayerUsage[],
  price: RequestPrice,
  wanted: number,
  minimal: number,
): Admission {
  const floorTokens = Math.min(minimal, wanted);
  const minimum = priceOf(price, floorTokens);
  let room = Number.POSITIVE_INFINITY;
  for (const [index, l] of layers.entries()) {
    const settledRoom = l.limit_micros - l.spent_micros;
    if (settledRoom <= 0) return { admitted: false, index, reason: "budget_exhausted", tokens_that_fit: 0 };
    if (settledRoom < minimum) {
      const fit = tokensThatFit(price, wanted, settledRoom);
      return { admitted: false, index, reason: "request_exceeds_budget", tokens_that_fit: fit };
    }
    const free = settledRoom - l.reserved_micros;
    if (free < minimum) {
      const fit = tokensThatFit(price, wanted, settledRoom);
      return { admitted: false, index, reason: "budget_reserved", tokens_that_fit: fit };
    }
    room = Math.min(room, free);
  }
  const full = priceOf(price, wanted);
  if (full <= room) return { admitted: true, tokens: wanted, capped: false, amount_micros: full };
  const tokens = Math.min(wanted, tokensPaidBy(price, room));
  return { admitted: true, tokens, capped: true, amount_micros: priceOf(price, tokens) };
}
