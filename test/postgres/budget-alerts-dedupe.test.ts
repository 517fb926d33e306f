import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { Catalog } from "../../src/domain/catalog.js";
import { type ServiceDeps, serviceDepsFor } from "../../src/services/context.js";
import { createOrganization } from "../../src/services/organizations.js";
import { type AlertWatch, raiseBudgetAlerts } from "../../src/services/raise-budget-alerts.js";
import { listBudgetAlerts } from "../../src/storage/budget-alert-repo.js";
import { openDatabase } from "../../src/storage/open.js";
import { type DatabaseHandle, DEFAULT_POSTGRES_OPTIONS } from "../../src/storage/ports.js";
import { freshDatabase, TEST_DATABASE_KIND } from "../helpers/server.js";

/**
 * Two instances on one PostgreSQL database settle spend on the same budget counter at once: each
 * threshold is raised (audit entry, webhook) by exactly one of them (docs/gateway.md#budget-alerts).
 */
describe("budget alerts on PostgreSQL: one alert per counter, window and threshold across instances", () => {
  let first: DatabaseHandle;
  let second: DatabaseHandle;
  let remove: () => Promise<void>;
  let a: ServiceDeps;
  let b: ServiceDeps;

  before(async () => {
    assert.equal(TEST_DATABASE_KIND, "postgres", "run with npm run test:postgres");
    let url: string;
    ({ database: first, url, remove } = await freshDatabase());
    second = await openDatabase(url, {
      sqliteSynchronous: "normal",
      postgres: { ...DEFAULT_POSTGRES_OPTIONS, poolMax: 5 },
    });
    const catalog = new Catalog(loadCatalogFile(DEFAULT_CONFIG_FILE));
    a = serviceDepsFor(first, catalog);
    b = serviceDepsFor(second, catalog);
  });
  after(async () => {
    await second.close();
    await first.close();
    await remove();
  });

  it("forty concurrent checks from two instances raise each reached threshold once, with one audit entry each", async () => {
    const made = await createOrganization(a, "alerts");
    const org = made.organization.id;
    const counter = {
      guardrail_id: made.workspace.default_guardrail_id,
      scope: "key" as const,
      subject: made.key.record.hash,
      reset_interval: "daily",
      window_start: "2025-03-10T00:00:00.000Z",
    };
    // 85% of the limit is spent: 50 and 80 are reached, 100 is not.
    await first.db
      .insertInto("budget_usage")
      .values({ organization_id: org, ...counter, spent_micros: 8500, reserved_micros: 0 })
      .execute();
    const watch: AlertWatch = { counter, limit_micros: 10_000, thresholds: [50, 80, 100] };
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        raiseBudgetAlerts(i % 2 ? a : b, org, made.key.record.hash, [watch]),
      ),
    );
    const raised = outcomes.flatMap((o) => o.raised.map((r) => r.threshold_percent)).sort((x, y) => x - y);
    assert.deepEqual(raised, [50, 80]);
    assert.ok(outcomes.every((o) => o.reached.length === 2));
    const stored = await listBudgetAlerts(first.db, org);
    assert.deepEqual(
      stored.map((s) => s.threshold_percent),
      [50, 80],
    );
    const audit = await first.db
      .selectFrom("audit_log")
      .select("action")
      .where("organization_id", "=", org)
      .where("action", "=", "guardrail.budget_alert")
      .execute();
    assert.equal(audit.length, 2);
  });
});
