import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import fc from "fast-check";
import "../helpers/property-seed.js";
import { budgetWindow } from "../../src/domain/budget-window.js";
import { RESET_INTERVALS, type ResetInterval } from "../../src/domain/guardrail.js";

/** Budget windows are calendar windows in UTC; resets_at is the exclusive end (docs/behaviour.md#budget-windows). */

const DAY_MS = 24 * 60 * 60 * 1000;
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURE = fileURLToPath(new URL("./fixtures/budget-windows.ts", import.meta.url));

function windowOf(interval: ResetInterval, iso: string): { start: string; resetsAt: string } {
  const w = budgetWindow(interval, new Date(iso));
  return { start: w.start.toISOString(), resetsAt: w.resetsAt.toISOString() };
}

interface Edge {
  name: string;
  interval: ResetInterval;
  now: string;
  start: string;
  resetsAt: string;
}

const EDGES: Edge[] = [
  // JavaScript Dates have millisecond resolution: the last representable instant of a day is .999.
  {
    name: "the last millisecond of a day belongs to that day",
    interval: "daily",
    now: "2026-05-14T23:59:59.999Z",
    start: "2026-05-14T00:00:00.000Z",
    resetsAt: "2026-05-15T00:00:00.000Z",
  },
  {
    name: "the first millisecond of a day starts the next window",
    interval: "daily",
    now: "2026-05-15T00:00:00.000Z",
    start: "2026-05-15T00:00:00.000Z",
    resetsAt: "2026-05-16T00:00:00.000Z",
  },
  {
    name: "the last millisecond of a year: the daily window resets on 1 January",
    interval: "daily",
    now: "2026-12-31T23:59:59.999Z",
    start: "2026-12-31T00:00:00.000Z",
    resetsAt: "2027-01-01T00:00:00.000Z",
  },
  {
    name: "28 February of a leap year resets on 29 February",
    interval: "daily",
    now: "2028-02-28T23:59:59.999Z",
    start: "2028-02-28T00:00:00.000Z",
    resetsAt: "2028-02-29T00:00:00.000Z",
  },
  {
    name: "29 February 2028 is a day of its own, resetting on 1 March",
    interval: "daily",
    now: "2028-02-29T12:00:00.000Z",
    start: "2028-02-29T00:00:00.000Z",
    resetsAt: "2028-03-01T00:00:00.000Z",
  },
  {
    name: "28 February of a common year resets on 1 March",
    interval: "daily",
    now: "2027-02-28T12:00:00.000Z",
    start: "2027-02-28T00:00:00.000Z",
    resetsAt: "2027-03-01T00:00:00.000Z",
  },
  {
    name: "the last millisecond of a Sunday is in the week that began the Monday before",
    interval: "weekly",
    now: "2026-05-17T23:59:59.999Z",
    start: "2026-05-11T00:00:00.000Z",
    resetsAt: "2026-05-18T00:00:00.000Z",
  },
  {
    name: "Monday 00:00:00.000 starts a new week",
    interval: "weekly",
    now: "2026-05-18T00:00:00.000Z",
    start: "2026-05-18T00:00:00.000Z",
    resetsAt: "2026-05-25T00:00:00.000Z",
  },
  {
    name: "a week crossing a month: Thursday 2 July is in the week of Monday 29 June",
    interval: "weekly",
    now: "2026-07-02T09:00:00.000Z",
    start: "2026-06-29T00:00:00.000Z",
    resetsAt: "2026-07-06T00:00:00.000Z",
  },
  {
    name: "a week crossing a year: 31 December 2026 is in the week of Monday 28 December",
    interval: "weekly",
    now: "2026-12-31T23:59:59.999Z",
    start: "2026-12-28T00:00:00.000Z",
    resetsAt: "2027-01-04T00:00:00.000Z",
  },
  {
    name: "a week crossing a year: 1 January 2027 is in the same week",
    interval: "weekly",
    now: "2027-01-01T00:00:00.000Z",
    start: "2026-12-28T00:00:00.000Z",
    resetsAt: "2027-01-04T00:00:00.000Z",
  },
  {
    name: "the last millisecond of 31 January is in January's window, which resets on 1 February",
    interval: "monthly",
    now: "2026-01-31T23:59:59.999Z",
    start: "2026-01-01T00:00:00.000Z",
    resetsAt: "2026-02-01T00:00:00.000Z",
  },
  {
    name: "1 February 00:00:00.000 starts February's window",
    interval: "monthly",
    now: "2026-02-01T00:00:00.000Z",
    start: "2026-02-01T00:00:00.000Z",
    resetsAt: "2026-03-01T00:00:00.000Z",
  },
  {
    name: "29 February 2028 is in February's window, which resets on 1 March 2028",
    interval: "monthly",
    now: "2028-02-29T23:59:59.999Z",
    start: "2028-02-01T00:00:00.000Z",
    resetsAt: "2028-03-01T00:00:00.000Z",
  },
  {
    name: "February 2027 (no 29th) resets on 1 March 2027",
    interval: "monthly",
    now: "2027-02-28T23:59:59.999Z",
    start: "2027-02-01T00:00:00.000Z",
    resetsAt: "2027-03-01T00:00:00.000Z",
  },
  {
    name: "a 30-day month: the last millisecond of 30 April resets on 1 May",
    interval: "monthly",
    now: "2026-04-30T23:59:59.999Z",
    start: "2026-04-01T00:00:00.000Z",
    resetsAt: "2026-05-01T00:00:00.000Z",
  },
  {
    name: "December resets on 1 January of the next year",
    interval: "monthly",
    now: "2026-12-15T08:00:00.000Z",
    start: "2026-12-01T00:00:00.000Z",
    resetsAt: "2027-01-01T00:00:00.000Z",
  },
];

describe("budgetWindow: edges (docs/behaviour.md#budget-windows)", () => {
  for (const edge of EDGES) {
    it(`${edge.interval}: ${edge.name} (docs/behaviour.md#budget-windows)`, () => {
      assert.deepEqual(windowOf(edge.interval, edge.now), { start: edge.start, resetsAt: edge.resetsAt });
    });
  }
});

/** Instants whose local date differs from the UTC date in the zones below (day, week, month, year). */
const TZ_INSTANTS = [
  "2026-03-01T10:30:00.000Z", // Kiritimati: 2 March 00:30; a different day and month
  "2026-12-31T12:00:00.000Z", // Kiritimati: 1 January 2027 02:00; a different year
  "2026-05-17T23:30:00.000Z", // Kiritimati: Monday 18 May; a different week
  "2027-01-01T03:00:00.000Z", // Los Angeles: 31 December 2026 19:00; a different year
  "2026-06-29T05:00:00.000Z", // Los Angeles: Sunday 28 June 22:00; a different week
  "2026-02-01T07:59:59.999Z", // Los Angeles: 31 January 23:59:59.999; a different month
];

async function windowsUnder(tz: string) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", FIXTURE, ...TZ_INSTANTS],
    {
      cwd: ROOT,
      env: { ...process.env, TZ: tz },
    },
  );
  return JSON.parse(stdout) as {
    timeZone: string;
    offsets: number[];
    windows: { interval: ResetInterval; now: string; start: string; resetsAt: string }[];
  };
}

describe("budgetWindow: the server's time zone plays no part (docs/behaviour.md#budget-windows)", () => {
  const inProcess = TZ_INSTANTS.flatMap((now) =>
    RESET_INTERVALS.map((interval) => ({ interval, now, ...windowOf(interval, now) })),
  );

  it("windows start at 00:00 UTC whatever the local date of the instant (docs/behaviour.md#budget-windows)", () => {
    assert.deepEqual(
      inProcess.filter((w) => w.now === "2026-12-31T12:00:00.000Z").map((w) => [w.start, w.resetsAt]),
      [
        ["2026-12-31T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
        ["2026-12-28T00:00:00.000Z", "2027-01-04T00:00:00.000Z"],
        ["2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
      ],
    );
  });

  for (const [tz, offset] of [
    ["Pacific/Kiritimati", -14 * 60],
    ["America/Los_Angeles", null],
  ] as const) {
    it(`a server clock in ${tz} computes the same UTC windows as this process (docs/behaviour.md#budget-windows)`, async () => {
      const child = await windowsUnder(tz);
      // The child really ran in that zone, else the comparison below would prove nothing.
      assert.equal(child.timeZone, tz);
      for (const o of child.offsets) {
        if (offset === null) assert.ok(o === 7 * 60 || o === 8 * 60, `offset ${o}`);
        else assert.equal(o, offset);
      }
      assert.deepEqual(child.windows, inProcess);
    });
  }
});

/** An oracle independent of the implementation: whole days since the epoch; 1970-01-05 was a Monday. */
function expectedStart(interval: ResetInterval, t: number): number {
  if (interval === "daily") return Math.floor(t / DAY_MS) * DAY_MS;
  if (interval === "weekly") return Math.floor((t - 4 * DAY_MS) / (7 * DAY_MS)) * 7 * DAY_MS + 4 * DAY_MS;
  return Date.parse(`${new Date(t).toISOString().slice(0, 7)}-01T00:00:00.000Z`);
}

describe("budgetWindow: properties (docs/behaviour.md#budget-windows)", () => {
  const instant = fc.date({
    min: new Date("1900-01-01T00:00:00.000Z"),
    max: new Date("2200-12-31T23:59:59.999Z"),
    noInvalidDate: true,
  });

  it("start <= now < resets_at; windows start at 00:00:00.000 UTC, weekly on a Monday, monthly on the 1st (docs/behaviour.md#budget-windows)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...RESET_INTERVALS), instant, (interval, now) => {
        const { start, resetsAt } = budgetWindow(interval, now);
        assert.ok(start.getTime() <= now.getTime() && now.getTime() < resetsAt.getTime());
        assert.equal(start.getTime(), expectedStart(interval, now.getTime()));
        for (const edge of [start, resetsAt]) {
          assert.equal(edge.toISOString().slice(10), "T00:00:00.000Z");
          if (interval === "weekly") assert.equal(edge.getUTCDay(), 1);
          if (interval === "monthly") assert.equal(edge.getUTCDate(), 1);
        }
        const length = resetsAt.getTime() - start.getTime();
        if (interval === "daily") assert.equal(length, DAY_MS);
        if (interval === "weekly") assert.equal(length, 7 * DAY_MS);
        if (interval === "monthly") assert.equal((start.getUTCMonth() + 1) % 12, resetsAt.getUTCMonth());
      }),
      { numRuns: 2000 },
    );
  });

  it("windows tile with no gap and no overlap: the window at resets_at starts there, the one before ends at start (docs/behaviour.md#budget-windows)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...RESET_INTERVALS), instant, (interval, now) => {
        const { start, resetsAt } = budgetWindow(interval, now);
        assert.deepEqual(budgetWindow(interval, resetsAt).start, resetsAt);
        assert.deepEqual(budgetWindow(interval, new Date(resetsAt.getTime() - 1)).resetsAt, resetsAt);
        assert.deepEqual(budgetWindow(interval, start), { start, resetsAt });
        assert.deepEqual(budgetWindow(interval, new Date(start.getTime() - 1)).resetsAt, start);
      }),
      { numRuns: 2000 },
    );
  });
});
