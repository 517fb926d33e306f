/**
 * The write scenarios of the create/update benchmarks (bench/run.ts on SQLite, bench/postgres.ts on
 * PostgreSQL): the loads, the seeding of PATCH targets, and the report against the bare insert.
 */
import {
  CONNECTIONS,
  CPU_PROF,
  DURATION,
  type Load,
  type Measured,
  measure,
  type ServerChild,
  WARMUP,
} from "./load.js";
import { createBody, updateBodies } from "./shared.js";

export const TARGET_RATIO = 0.6;
const TARGET_P99_MS = 20;
const UPDATE_TARGETS = 200;

/** POSTs `count` guardrails and returns their ids (the PATCH targets). */
export async function seed(server: ServerChild, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = JSON.stringify(createBody()).replace("[<id>]", `seed-${i}`);
    const res = await fetch(`${server.origin}/api/v1/guardrails`, {
      method: "POST",
      headers: server.headers,
      body,
    });
    const json = (await res.json()) as { data?: { id?: string } };
    if (res.status !== 201 || typeof json.data?.id !== "string") {
      throw new Error(`${server.name}: seeding POST answered ${res.status}: ${JSON.stringify(json)}`);
    }
    ids.push(json.data.id);
  }
  return ids;
}

export function createLoad(): Load {
  return {
    path: "/api/v1/guardrails",
    method: "POST",
    body: JSON.stringify(createBody()),
    idReplacement: true,
  };
}

/** PATCHes the seeded guardrails round-robin, rotating the body, without If-Match. */
export function updateLoad(ids: string[]): Load {
  const bodies = updateBodies(16);
  let n = 0;
  return {
    path: "/api/v1/guardrails",
    requests: [
      {
        method: "PATCH",
        setupRequest: (request) => {
          const i = n++;
          return {
            ...request,
            path: `/api/v1/guardrails/${ids[i % ids.length]}`,
            body: bodies[i % bodies.length],
          };
        },
      },
    ],
  };
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** Create, then update of 200 seeded guardrails, against one server child. */
export async function measureWrites(server: ServerChild): Promise<Measured[]> {
  const create = await measure("create", server, createLoad());
  const ids = await seed(server, UPDATE_TARGETS);
  const update = await measure("update", server, updateLoad(ids));
  return [create, update];
}

/** The table of both servers' rows, ratios against the bare insert and the verdict. */
export function printReport(
  title: string,
  baseline: Measured[],
  service: Measured[],
  /** The p99 target on SQLite; null where none is set (PostgreSQL). */
  p99TargetMs: number | null = TARGET_P99_MS,
): void {
  const columns = ["scenario", "server", "req/s", "p50 ms", "p99 ms", "non-2xx", "errors", "ratio", "target"];
  const widths = [9, 9, 9, 7, 7, 8, 7, 6, 40];
  const line = (cells: string[]) =>
    cells
      .map((c, i) => pad(c, widths[i] ?? 8, i >= 2 && i <= 7))
      .join("  ")
      .trimEnd();
  console.log(
    `\n${title}: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s measured per row, Node ${process.version}\n`,
  );
  console.log(line(columns));
  console.log(line(widths.map((w) => "-".repeat(w))));
  let allMet = true;
  // The targets name one baseline, "a bare Fastify route that inserts a row of the same size": both
  // targets are against it. The bare UPDATE row is printed beside update for information.
  const insertBaseline = baseline.find((m) => m.scenario === "create");
  for (const s of service) {
    const b = baseline.find((m) => m.scenario === s.scenario);
    if (!b || !insertBaseline) continue;
    const ratio = insertBaseline.rps > 0 ? s.rps / insertBaseline.rps : 0;
    const sameKind = b.rps > 0 ? s.rps / b.rps : 0;
    const ratioOk = ratio >= TARGET_RATIO;
    const p99Ok = p99TargetMs === null || s.p99 <= p99TargetMs;
    const clean = s.non2xx === 0 && s.errors === 0;
    allMet &&= ratioOk && p99Ok && clean;
    const verdict = [
      `ratio ${ratioOk ? "ok" : "MISSED"} (≥${TARGET_RATIO})`,
      ...(p99TargetMs === null ? [] : [`p99 ${p99Ok ? "ok" : "MISSED"} (≤${p99TargetMs})`]),
      ...(clean ? [] : ["NON-2XX/ERRORS"]),
      ...(b === insertBaseline ? [] : [`${sameKind.toFixed(2)} of the bare UPDATE`]),
    ].join(", ");
    for (const [m, r, v] of [
      [b, b === insertBaseline ? "1.00" : "-", b === insertBaseline ? "" : "(information only)"],
      [s, ratio.toFixed(2), verdict],
    ] as const) {
      console.log(
        line([
          m.scenario,
          m.server,
          m.rps.toFixed(0),
          m.p50.toFixed(1),
          m.p99.toFixed(1),
          String(m.non2xx),
          String(m.errors),
          r,
          v,
        ]),
      );
    }
  }
  console.log("\nstatus codes:");
  for (const m of [...baseline, ...service]) console.log(`  ${m.scenario}/${m.server}: ${m.statuses || "-"}`);
  console.log(
    `\nresult: ${allMet ? "all targets met" : "TARGETS MISSED"} (create and update ≥ ${TARGET_RATIO}× the bare insert's req/s${p99TargetMs === null ? "" : `, p99 ≤ ${p99TargetMs} ms`}, no non-2xx)`,
  );
  if (CPU_PROF) console.log(`cpu profiles of the server processes: ${CPU_PROF}`);
}
