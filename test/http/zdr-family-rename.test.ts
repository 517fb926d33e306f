import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import type { CatalogData } from "../../src/domain/catalog.js";
import {
  clientFor,
  freshDatabase,
  startTestServer,
  TEST_DATABASE_KIND,
  type TestServer,
} from "../helpers/server.js";
import { orgSteps } from "./org-support.js";

const CURRENT = loadCatalogFile(DEFAULT_CONFIG_FILE);
/** The shipped catalog as it was before the families took the vendors' names: ids vendor_a..vendor_d. */
const FORMER: CatalogData = {
  ...CURRENT,
  zdr_families: CURRENT.zdr_families.map(({ formerly, ...f }) => ({ ...f, id: formerly?.[0] ?? f.id })),
};
const FORMER_IDS = ["vendor_a", "vendor_b", "vendor_c", "vendor_d"];
const CURRENT_IDS = ["anthropic", "openai", "google", "xai"];

function flagsOf(data: Record<string, unknown>, ids: string[]): Record<string, unknown> {
  return Object.fromEntries([...ids, "other"].map((id) => [id, data[`enforce_zdr_${id}`]]));
}

describe(`a database written with the former family ids keeps every ZDR flag's meaning after upgrade, on ${TEST_DATABASE_KIND} (docs/configuration.md#the-catalog-file)`, () => {
  it("every flag set under vendor_a..vendor_d reads, and is enforced, under anthropic/openai/google/xai; flags not set stay unset; a second start changes nothing", async () => {
    assert.deepEqual(
      FORMER.zdr_families.map((f) => f.id),
      FORMER_IDS,
    );
    const fresh = await freshDatabase();
    let server: TestServer | undefined;
    try {
      // Written by the former release: each flag pattern once, so a swapped mapping would show.
      server = await startTestServer({ catalog: FORMER, database: fresh });
      const org = await server.newOrg();
      const before = orgSteps(server, org);
      const patterns = [
        { vendor_a: true, vendor_b: false, vendor_c: true, vendor_d: false, other: false },
        { vendor_a: false, vendor_b: true, vendor_c: false, vendor_d: true, other: true },
        { vendor_a: false, vendor_b: false, vendor_c: false, vendor_d: false, other: false },
      ];
      const written: { id: string; flags: Record<string, boolean> }[] = [];
      for (const flags of patterns) {
        const body = Object.fromEntries(Object.entries(flags).map(([f, on]) => [`enforce_zdr_${f}`, on]));
        const g = await before.guardrail(body);
        assert.deepEqual(flagsOf(g, FORMER_IDS), flags);
        written.push({ id: g.id, flags });
      }
      const key = await before.key();
      assert.equal(await before.assignKeys(written[1]?.id ?? "", [key.hash]), 1);
      const etagBefore = (await before.api.get(`/api/v1/guardrails/${written[0]?.id}`)).headers.get("etag");
      await server.close();

      // The upgrade: the same database under the shipped configuration.
      server = await startTestServer({ configFile: DEFAULT_CONFIG_FILE, database: fresh });
      const api = clientFor(server, org.key);
      for (const { id, flags } of written) {
        const res = await api.get(`/api/v1/guardrails/${id}`);
        assert.equal(res.status, 200);
        const expected = Object.fromEntries(
          CURRENT_IDS.map((cur, i) => [cur, flags[FORMER_IDS[i] as keyof typeof flags]]),
        );
        assert.deepEqual(flagsOf(res.body.data, CURRENT_IDS), { ...expected, other: flags.other });
        for (const old of FORMER_IDS) assert.equal(res.body.data[`enforce_zdr_${old}`], undefined);
      }
      // The request path reads the same flags: the key's effective policy.
      const policy = await clientFor(server, key.secret).get("/api/v1/key");
      assert.equal(policy.status, 200);
      assert.deepEqual(flagsOf(policy.body.data.effective_policy, CURRENT_IDS), {
        anthropic: false,
        openai: true,
        google: false,
        xai: true,
        other: true,
      });
      // A new entity tag: a client's If-Match from before the rename saw the old flag names.
      const renamed = await api.get(`/api/v1/guardrails/${written[0]?.id}`);
      assert.notEqual(renamed.headers.get("etag"), etagBefore);
      // The audit log says what moved, and who moved it.
      const audit = await api.get(`/api/v1/audit-log?resource_id=${written[0]?.id}`);
      const entry = audit.body.data.find(
        (e: { action: string }) => e.action === "guardrail.rename_zdr_families",
      );
      assert.ok(entry, JSON.stringify(audit.body.data));
      assert.equal(entry.actor_key_hash, "config");
      assert.equal(entry.before.enforce_zdr_vendor_a, true);
      assert.equal(entry.after.enforce_zdr_anthropic, true);
      const renamedEtag = renamed.headers.get("etag");
      await server.close();

      // Starting again finds nothing to move.
      server = await startTestServer({ configFile: DEFAULT_CONFIG_FILE, database: fresh });
      const again = await clientFor(server, org.key).get(`/api/v1/guardrails/${written[0]?.id}`);
      assert.equal(again.headers.get("etag"), renamedEtag);
      await server.close();
      server = undefined;
    } finally {
      await server?.close();
      await fresh.database.close();
      await fresh.remove();
    }
  });

  it("a configuration that renames a family without naming its former id refuses to start while a stored flag under that id is set", async () => {
    const fresh = await freshDatabase();
    try {
      const server = await startTestServer({ catalog: FORMER, database: fresh });
      const org = await server.newOrg();
      await orgSteps(server, org).guardrail({ enforce_zdr_vendor_c: true });
      await server.close();
      const forgetful: CatalogData = {
        ...CURRENT,
        zdr_families: CURRENT.zdr_families.map(({ formerly: _, ...f }) => f),
      };
      await assert.rejects(
        startTestServer({ catalog: forgetful, database: fresh }),
        /enforce_zdr_vendor_c.*formerly/,
      );
      // The shipped configuration still starts on that database and keeps the flag.
      const fixed = await startTestServer({ configFile: DEFAULT_CONFIG_FILE, database: fresh });
      const list = await clientFor(fixed, org.key).get("/api/v1/guardrails");
      assert.equal(list.body.data[0].enforce_zdr_google, true);
      await fixed.close();
    } finally {
      await fresh.database.close();
      await fresh.remove();
    }
  });
});
