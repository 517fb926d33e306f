import { afterEach, beforeEach } from "node:test";

/**
 * Counts the JSON.parse calls of each test of the file that calls it: the stream readers' fast
 * paths are shown by the parses they leave out (docs/gateway.md#stream-fast-paths). The count may
 * be set back, to leave out the parses a test makes itself.
 */
export function countJsonParses(): { count: number } {
  const parses = { count: 0 };
  const realParse = JSON.parse;
  beforeEach(() => {
    parses.count = 0;
    JSON.parse = ((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
      parses.count++;
      return realParse(text, reviver);
    }) as typeof JSON.parse;
  });
  afterEach(() => {
    JSON.parse = realParse;
  });
  return parses;
}
