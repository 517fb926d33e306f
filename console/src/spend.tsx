import { useEffect, useRef, useState } from "preact/hooks";
import type uPlot from "uplot";
import { type Budget, describe, type Key, listAll, type Member, usd, when } from "./api.js";
import { ErrorText } from "./ui.js";

type Dimension = "key" | "member" | "model" | "provider" | "api";
const DIMENSIONS: Dimension[] = ["key", "member", "model", "provider", "api"];
const FIELD: Record<Dimension, "key_hash" | "member_user_id" | "model" | "provider" | "api"> = {
  key: "key_hash",
  member: "member_user_id",
  model: "model",
  provider: "provider",
  // The API each request was made on: chat, embeddings, ... (docs/behaviour.md#usage-by-api).
  api: "api",
};
/** Beyond this many lines a chart is unreadable: the rest are summed as "others". */
const MAX_SERIES = 6;
const COLOURS = ["#1f5fbf", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#6b7280"];
const DAY = 86_400_000;

interface UsageRow {
  date: string;
  key_hash?: string | null;
  member_user_id?: string | null;
  model?: string | null;
  provider?: string | null;
  api?: string | null;
  spend_usd: number;
  requests: number;
}

const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

export interface Series {
  days: string[];
  groups: { name: string; values: number[]; total: number }[];
}

/** Rows of (day, group, spend) as one line per group over every day of the range, zero-filled. */
export function seriesOf(
  rows: UsageRow[],
  from: string,
  to: string,
  nameOf: (row: UsageRow) => string,
): Series {
  const days: string[] = [];
  for (let t = Date.parse(from); t <= Date.parse(to); t += DAY) days.push(isoDay(t));
  const index = new Map(days.map((d, i) => [d, i]));
  const byGroup = new Map<string, number[]>();
  for (const row of rows) {
    const name = nameOf(row);
    const values = byGroup.get(name) ?? days.map(() => 0);
    const i = index.get(row.date);
    if (i !== undefined) values[i] = (values[i] ?? 0) + row.spend_usd;
    byGroup.set(name, values);
  }
  const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
  const groups = [...byGroup].map(([name, values]) => ({ name, values, total: sum(values) }));
  groups.sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  if (groups.length <= MAX_SERIES) return { days, groups };
  const rest = groups.slice(MAX_SERIES - 1);
  const others = days.map((_, i) => sum(rest.map((g) => g.values[i] ?? 0)));
  return {
    days,
    groups: [...groups.slice(0, MAX_SERIES - 1), { name: "others", values: others, total: sum(others) }],
  };
}

/** The chart library is half the console's weight: only this page loads it. */
let chartLibrary: Promise<typeof uPlot> | undefined;
const loadChartLibrary = () => {
  chartLibrary ??= import("uplot").then((m) => m.default);
  return chartLibrary;
};

function Chart({ series }: { series: Series }) {
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState("");
  useEffect(() => {
    let plot: uPlot | undefined;
    let live = true;
    loadChartLibrary().then(
      (UPlot) => {
        const el = box.current;
        if (live && el) plot = draw(UPlot, el, series);
      },
      () => setFailed("The chart could not be loaded; the table below has the same figures."),
    );
    return () => {
      live = false;
      plot?.destroy();
    };
  }, [series]);
  return (
    <>
      <ErrorText message={failed} />
      <div
        ref={box}
        class="chart"
        role="img"
        aria-label="Spend per day; the table below has the same figures"
      />
    </>
  );
}

function draw(UPlot: typeof uPlot, el: HTMLElement, series: Series): uPlot {
  return new UPlot(
    {
      width: Math.max(280, el.clientWidth),
      height: 280,
      scales: { x: { time: true } },
      // Spend can be fractions of a cent: the axis is wide enough for them.
      axes: [{}, { size: 80, values: (_u, ticks) => ticks.map((t) => `$${t}`) }],
      series: [
        {},
        ...series.groups.map((g, i) => ({
          label: g.name,
          stroke: COLOURS[i % COLOURS.length] ?? "#000",
          width: 2,
          points: { show: true },
          value: (_u: uPlot, v: number | null) => (v === null ? "—" : usd(v)),
        })),
      ],
    },
    [series.days.map((d) => Date.parse(d) / 1000), ...series.groups.map((g) => g.values)],
    el,
  );
}

function budgetRows(members: Member[], keys: Key[]): { who: string; budget: Budget }[] {
  return [
    ...members.flatMap((m) => (m.budgets ?? []).map((budget) => ({ who: `member ${m.user_id}`, budget }))),
    ...keys.flatMap((k) => (k.budgets ?? []).map((budget) => ({ who: `key ${k.name}`, budget }))),
  ];
}

export function SpendPage() {
  const today = Date.now();
  const [from, setFrom] = useState(isoDay(today - 29 * DAY));
  const [to, setTo] = useState(isoDay(today));
  const [dimension, setDimension] = useState<Dimension>("key");
  const [series, setSeries] = useState<Series | undefined>();
  const [keys, setKeys] = useState<Key[]>([]);
  const [members, setMembers] = useState<Member[] | undefined>();
  const [error, setError] = useState("");
  useEffect(() => {
    Promise.all([listAll<Key>("/keys?include_disabled=true"), listAll<Member>("/members")]).then(
      ([k, m]) => {
        setKeys(k);
        setMembers(m);
      },
      (e) => setError(describe(e)),
    );
  }, []);
  useEffect(() => {
    let live = true;
    setSeries(undefined);
    setError("");
    listAll<UsageRow>(`/usage?from=${from}&to=${to}&group_by=day,${dimension}`).then(
      (rows) => {
        const names = new Map(keys.map((k) => [k.hash, k.name]));
        const field = FIELD[dimension];
        if (!live) return;
        setSeries(
          seriesOf(rows, from, to, (row) => {
            const value = row[field];
            if (!value) return dimension === "member" ? "no member" : "unknown";
            return dimension === "key" ? (names.get(value) ?? `revoked ${value.slice(0, 8)}`) : value;
          }),
        );
      },
      (e) => live && setError(describe(e)),
    );
    // A slower answer for an earlier choice must not replace the current one.
    return () => {
      live = false;
    };
  }, [from, to, dimension, keys]);
  const budgets = budgetRows(members ?? [], keys);
  return (
    <section>
      <h1>Spend</h1>
      <form class="inline" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label for="spend-from">From (UTC day)</label>
          <input
            id="spend-from"
            type="date"
            value={from}
            max={to}
            onChange={(e) => setFrom(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="spend-to">To</label>
          <input
            id="spend-to"
            type="date"
            value={to}
            min={from}
            onChange={(e) => setTo(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="spend-by">By</label>
          <select
            id="spend-by"
            value={dimension}
            onChange={(e) => setDimension(e.currentTarget.value as Dimension)}
          >
            {DIMENSIONS.map((d) => (
              <option value={d} key={d}>
                {d}
              </option>
            ))}
          </select>
        </div>
      </form>
      <ErrorText message={error} />
      {!series && !error && <p class="loading">Loading…</p>}
      {series && series.groups.length === 0 && <p class="empty">Nothing was spent in this range.</p>}
      {series && series.groups.length > 0 && (
        <>
          <Chart series={series} />
          <div class="table-wrap">
            <table id="spend-totals">
              <caption>
                Spend from {from} to {to}, by {dimension}
              </caption>
              <thead>
                <tr>
                  <th scope="col">{dimension}</th>
                  <th scope="col">Spend</th>
                </tr>
              </thead>
              <tbody>
                {series.groups.map((g) => (
                  <tr key={g.name}>
                    <td>{g.name}</td>
                    <td>{usd(g.total)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      <h2>Budgets</h2>
      {!members && !error && <p class="loading">Loading…</p>}
      {members && budgets.length === 0 && <p class="empty">No member or key has a budget.</p>}
      {budgets.length > 0 && (
        <div class="table-wrap">
          <table id="budgets">
            <thead>
              <tr>
                <th scope="col">Who</th>
                <th scope="col">Guardrail</th>
                <th scope="col">Limit</th>
                <th scope="col">Spent</th>
                <th scope="col">Remaining</th>
                <th scope="col">Resets</th>
              </tr>
            </thead>
            <tbody>
              {budgets.map(({ who, budget: b }) => (
                <tr key={`${who}-${b.guardrail_id}-${b.scope}`}>
                  <td>{who}</td>
                  <td>
                    <a href={`#/guardrails/${b.guardrail_id}`}>{b.scope}</a>
                  </td>
                  <td>
                    {usd(b.limit_usd)} {b.reset_interval}
                  </td>
                  <td>{usd(b.spent_usd)}</td>
                  <td>{usd(b.remaining_usd)}</td>
                  <td>{when(b.resets_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
