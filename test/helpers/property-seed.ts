/**
 * The seed every fast-check property in a test file runs on (CONTRIBUTING.md#property-tests).
 * Unset, PROPERTY_SEED is one fixed number, so a CI run draws exactly the cases the run before it
 * drew and a red build is the code's doing, not the draw's. PROPERTY_SEED=<integer> replays a
 * failure's seed (fast-check prints it beside the counterexample); PROPERTY_SEED=random draws a new
 * one to explore cases the fixed seed never reaches.
 *
 * Imported for its effect by each file with properties, before its tests run.
 */
import fc from "fast-check";

const FIXED_SEED = 20261125;

function seedFrom(value: string | undefined): number {
  if (value === undefined || value === "") return FIXED_SEED;
  if (value === "random") return (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
  const seed = Number(value);
  if (!Number.isSafeInteger(seed))
    throw new Error(`PROPERTY_SEED must be an integer or "random", not ${JSON.stringify(value)}`);
  return seed;
}

export const PROPERTY_SEED = seedFrom(process.env.PROPERTY_SEED);
fc.configureGlobal({ seed: PROPERTY_SEED });
if (process.env.PROPERTY_SEED === "random") process.stderr.write(`property tests: seed ${PROPERTY_SEED}\n`);
