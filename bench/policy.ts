/**
 * Benchmark: resolving the effective policy of a key with three applicable guardrails
 * (workspace default, member, key) from the warm cache, beside a baseline of reading one cached
 * object from a Map, in the same run. Target: p50 below 20 µs. Prints; asserts nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../src/config.js";
import { Catalog } from "../src/domain/catalog.js";
import { workspaceDefaultGuardrailId } from "../src/domain/ids.js";
import { assignKeys, assignMembers } from "../src/services/assignments.js";
import { inTransaction, serviceDepsFor } from "../src/services/context.js";
import { resolveKeyPolicy } from "../src/services/effective-policy.js";
import { createGuardrail, updateGuardrail } from "../src/services/guardrails.js";
import { createInferenceKey } from "../src/services/keys.js";
import { createMember } from "../src/services/members.js";
import { createOrganization } from "../src/services/organizations.js";
import { openDatabase } from "../src/storage/open.js";
import { managementPrincipal } from "./shared.js";

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200_000);

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

async function measure(
  label: string,
  fn: () => unknown,
): Promise<{ label: string; p50: number; p99: number }> {
  for (let i = 0; i < 10_000; i++) await fn(); // warm-up: JIT and caches
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    await fn();
    samples[i] = Number(process.hrtime.bigint() - start) / 1000;
  }
  samples.sort();
  return { label, p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "guardrails-bench-policy-"));
  const database = await openDatabase(`sqlite:${join(dir, "bench.db")}`, { sqliteSynchronous: "normal" });
  try {
    const deps = serviceDepsFor(database, new Catalog(loadCatalogFile(DEFAULT_CONFIG_FILE)));
    const made = await createOrganization(deps, "bench");
    const principal = managementPrincipal(made);
    const workspaceId = made.workspace.id;
    await inTransaction(deps, (tx) => createMember(deps, tx, principal, { user_id: "bench-user" }));
    const key = await inTransaction(deps, (tx) =>
      createInferenceKey(deps, tx, principal, { name: "bench", member_user_id: "bench-user" }),
    );
    const body = (name: string) => ({
      name,
      allowed_data_regions: ["europe" as const, "us" as const],
      content_filter_builtins: [{ slug: "email" as const, action: "redact" as const }],
      content_filters: [{ pattern: "secret-[0-9]+", action: "block" as const }],
      limit_usd: 10,
      reset_interval: "daily" as const,
    });
    const memberGuardrail = await inTransaction(deps, (tx) =>
      createGuardrail(deps, tx, principal, body("member")),
    );
    const keyGuardrail = await inTransaction(deps, (tx) => createGuardrail(deps, tx, principal, body("key")));
    await updateGuardrail(deps, principal, workspaceDefaultGuardrailId(workspaceId), {
      limit_usd: 100,
      reset_interval: "monthly",
    });
    await assignMembers(deps, principal, memberGuardrail.id, ["bench-user"]);
    await assignKeys(deps, principal, keyGuardrail.id, [key.record.hash]);

    const resolved = await resolveKeyPolicy(deps, key.record.hash);
    if (resolved?.applied.length !== 3) throw new Error("expected three applicable guardrails");

    const baselineMap = new Map<string, object>([[key.record.hash, resolved]]);
    const baseline = await measure("baseline: Map.get of one cached object", () =>
      baselineMap.get(key.record.hash),
    );
    const policy = await measure("resolveKeyPolicy, 3 guardrails, warm cache", () =>
      resolveKeyPolicy(deps, key.record.hash),
    );

    console.log(`\nEffective policy resolution (${ITERATIONS} calls each, same run)`);
    console.log("scenario                                      p50 µs    p99 µs");
    for (const r of [baseline, policy]) {
      console.log(`${r.label.padEnd(44)} ${r.p50.toFixed(2).padStart(7)} ${r.p99.toFixed(2).padStart(9)}`);
    }
    const met = policy.p50 < 20;
    console.log(`target p50 < 20 µs: ${met ? "met" : "NOT met"} (p50 ${policy.p50.toFixed(2)} µs)`);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
