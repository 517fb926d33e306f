import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ACTIVITY_DAYS, activityRange } from "../../src/domain/activity-window.js";

describe("the activity report's days: the last 30 completed UTC days (docs/api.md#activity)", () => {
  it("from the 30th day before today to yesterday, at either end of today", () => {
    assert.equal(ACTIVITY_DAYS, 30);
    for (const now of ["2026-03-01T00:00:00.000Z", "2026-03-01T23:59:59.999Z"])
      assert.deepEqual(activityRange(new Date(now)), { from: "2026-01-30", to: "2026-02-28" }, now);
    // A leap year's February has one more day, so the first day moves by one.
    assert.deepEqual(activityRange(new Date("2028-03-01T12:00:00.000Z")), {
      from: "2028-01-31",
      to: "2028-02-29",
    });
  });

  it("a date among those days is the whole range; its first and last day are among them", () => {
    const now = new Date("2026-03-01T12:00:00.000Z");
    for (const date of ["2026-01-30", "2026-02-14", "2026-02-28"])
      assert.deepEqual(activityRange(now, date), { from: date, to: date });
  });

  it("today, the day before the first, a day that does not exist or text that is not a day is refused", () => {
    const now = new Date("2026-03-01T12:00:00.000Z");
    for (const date of [
      "2026-03-01",
      "2026-01-29",
      "2026-02-29",
      "2026-02-30",
      "2026-2-14",
      "yesterday",
      "",
    ]) {
      const range = activityRange(now, date);
      assert.ok("refused" in range, `${date}: ${JSON.stringify(range)}`);
    }
  });
});
