/** The PostgreSQL error code of an error, if it has one (SQLSTATE): the server answered it. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A statement refused for what a row held (SQLSTATE classes 22, data exception, and 23, integrity). */
export function isDataError(err: unknown): boolean {
  const state = sqlState(err);
  return state !== undefined && (state.startsWith("22") || state.startsWith("23"));
}

/** The SQLSTATEs of a lost race: deadlock, serialization failure. */
export const LOST_RACE = new Set(["40P01", "40001"]);
/** How many times work that lost a race is run again. */
const RACE_RETRIES = 3;

/**
 * Runs `work`, and again while it fails with one of `states`, at most three more times. Only for
 * work that a failure of those states rolled back whole (a transaction, or one statement).
 */
export async function retryingRaces<T>(work: () => Promise<T>, states: ReadonlySet<string>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      const state = sqlState(err);
      if (state !== undefined && states.has(state) && attempt <= RACE_RETRIES) continue;
      throw err;
    }
  }
}
