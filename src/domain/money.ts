/** Money is integer micro-dollars inside (docs/behaviour.md#money-and-ids). */
export const MICROS_PER_USD = 1_000_000;
/** Upper bound of a spending limit: keeps micro-dollars well inside the exact integer range. */
export const MAX_LIMIT_USD = 1_000_000_000;

/** Converts USD to micro-dollars, or undefined when the amount is finer than a micro-dollar. */
export function usdToMicros(usd: number): number | undefined {
  const micros = Math.round(usd * MICROS_PER_USD);
  const back = micros / MICROS_PER_USD;
  // A value like 0.1 is not exact in binary: compare at twelve decimals, and allow the spacing of
  // doubles near a billion, so only amounts really finer than a micro-dollar are refused.
  const exact = Number(back.toFixed(6)) === Number(usd.toFixed(12)) || Math.abs(back - usd) <= 1e-9;
  return exact ? micros : undefined;
}

export function microsToUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}
