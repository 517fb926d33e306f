/** How many completed UTC days the activity report covers, ending with yesterday (docs/api.md#activity). */
export const ACTIVITY_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;

const isoDay = (time: number) => new Date(time).toISOString().slice(0, 10);

/**
 * The UTC days the activity report reads at `now`: the last ACTIVITY_DAYS completed days, or the one
 * day asked for when it is among them. Today is left out because it is not over: a dashboard that
 * sums a day once must not see it grow afterwards. Answers why a day is refused instead.
 */
export function activityRange(now: Date, date?: string): { from: string; to: string } | { refused: string } {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const first = isoDay(today - ACTIVITY_DAYS * DAY_MS);
  const last = isoDay(today - DAY_MS);
  if (date === undefined) return { from: first, to: last };
  const time = Date.parse(`${date}T00:00:00.000Z`);
  // Date.parse rolls 2026-02-30 over to March: only a day that reads back the same is a day.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(time) || isoDay(time) !== date)
    return { refused: "is not a day (YYYY-MM-DD)" };
  if (date < first || date > last)
    return { refused: `is not one of the last ${ACTIVITY_DAYS} completed UTC days (${first} to ${last})` };
  return { from: date, to: date };
}
