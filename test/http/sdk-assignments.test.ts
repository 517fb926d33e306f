import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OpenRouter } from "@openrouter/sdk";
import {
  BadRequestResponseError,
  ForbiddenResponseError,
  NotFoundResponseError,
  OpenRouterDefaultError,
  UnauthorizedResponseError,
} from "@openrouter/sdk/models/errors";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { orgSteps, sha256, UNKNOWN_UUID } from "./org-support.js";

/**
 * The official SDK drives the assignment endpoints (docs/behaviour.md#assignments: shapes follow the reference service
 * so that its SDK works against ours). The SDK accepts only the documented status and validates every
 * response body, so a call that returns at all proves the wire shape.
 */
describe("the official SDK on the assignment endpoints (docs/behaviour.md#assignments)", () => {
  let server: TestServer;
  before(async () => {
    delete process.env.OPENROUTER_API_KEY;
    delete process.env.OPENROUTER_BASE_URL;
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  const sdk = (apiKey: string) =>
    new OpenRouter({ apiKey, serverURL: server.baseUrl, retryConfig: { strategy: "none" } });

  async function rejectsWith(
    promise: Promise<unknown>,
    type: abstract new (...args: never[]) => Error & { statusCode: number },
    statusCode: number,
    message?: string,
  ): Promise<void> {
    const err = await promise.then(
      (value) => assert.fail(`expected ${type.name}, got ${JSON.stringify(value)}`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
    assert.equal(err.statusCode, statusCode);
    if (message !== undefined) assert.equal(err.message, message);
  }

  it("bulkAssignKeys, listGuardrailKeyAssignments, listKeyAssignments and bulkUnassignKeys round-trip (docs/behaviour.md#assignment-lists)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    const k1 = await steps.key({ name: "one" });
    const k2 = await steps.key({ name: "two" });
    const client = sdk(org.key);

    const assigned = await client.guardrails.bulkAssignKeys({
      id: g.id,
      bulkAssignKeysRequest: { keyHashes: [k1.hash, k2.hash, "f".repeat(64)] },
    });
    assert.deepEqual(assigned, { assignedCount: 2 });
    const again = await client.guardrails.bulkAssignKeys({
      id: g.id,
      bulkAssignKeysRequest: { keyHashes: [k1.hash] },
    });
    assert.deepEqual(again, { assignedCount: 0 });

    const page = await client.guardrails.listGuardrailKeyAssignments({ id: g.id });
    assert.equal(page.result.totalCount, 2);
    const wire = await steps.list(`/api/v1/guardrails/${g.id}/assignments/keys`);
    assert.deepEqual(
      page.result.data,
      wire.data.map((a) => ({
        id: a.id,
        keyHash: a.key_hash,
        guardrailId: a.guardrail_id,
        keyName: a.key_name,
        keyLabel: a.key_label,
        assignedBy: a.assigned_by,
        createdAt: a.created_at,
      })),
    );
    assert.deepEqual(page.result.data.map((a) => a.keyName).sort(), ["one", "two"]);
    assert.ok(page.result.data.every((a) => a.assignedBy === sha256(org.key) && a.guardrailId === g.id));

    const all = await client.guardrails.listKeyAssignments();
    assert.deepEqual(all.result, page.result);

    const removed = await client.guardrails.bulkUnassignKeys({
      id: g.id,
      bulkUnassignKeysRequest: { keyHashes: [k1.hash, "f".repeat(64)] },
    });
    assert.deepEqual(removed, { unassignedCount: 1 });
    const after = await client.guardrails.listKeyAssignments({});
    assert.deepEqual(
      after.result.data.map((a) => a.keyHash),
      [k2.hash],
    );
    assert.equal(after.result.totalCount, 1);
  });

  it("bulkAssignMembers, listGuardrailMemberAssignments, listMemberAssignments and bulkUnassignMembers round-trip (docs/behaviour.md#assignment-lists)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    await steps.member("ann");
    await steps.member("ben");
    const client = sdk(org.key);

    const assigned = await client.guardrails.bulkAssignMembers({
      id: g.id,
      bulkAssignMembersRequest: { memberUserIds: ["ann", "ben", "nobody"] },
    });
    assert.deepEqual(assigned, { assignedCount: 2 });

    const page = await client.guardrails.listGuardrailMemberAssignments({ id: g.id });
    assert.equal(page.result.totalCount, 2);
    assert.deepEqual(page.result.data.map((a) => a.userId).sort(), ["ann", "ben"]);
    for (const a of page.result.data) {
      assert.equal(a.guardrailId, g.id);
      assert.equal(a.organizationId, org.organizationId);
      assert.equal(a.assignedBy, sha256(org.key));
      assert.equal(typeof a.createdAt, "string");
    }
    const all = await client.guardrails.listMemberAssignments();
    assert.deepEqual(all.result, page.result);

    const removed = await client.guardrails.bulkUnassignMembers({
      id: g.id,
      bulkUnassignMembersRequest: { memberUserIds: ["ann"] },
    });
    assert.deepEqual(removed, { unassignedCount: 1 });
    const left = await client.guardrails.listMemberAssignments({ limit: 10 });
    assert.deepEqual(
      left.result.data.map((a) => a.userId),
      ["ben"],
    );
  });

  it("the SDK's page iteration walks every key and member assignment with offset and limit (docs/behaviour.md#assignments)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    const hashes: string[] = [];
    const users: string[] = [];
    for (let i = 0; i < 5; i++) {
      const k = await steps.key({ name: `k${i}` });
      await steps.assignKeys(g.id, [k.hash]);
      hashes.push(k.hash);
      await steps.member(`u${i}`);
      await steps.assignMembers(g.id, [`u${i}`]);
      users.push(`u${i}`);
    }
    const client = sdk(org.key);
    const seenKeys: string[] = [];
    for await (const page of await client.guardrails.listGuardrailKeyAssignments({ id: g.id, limit: 2 })) {
      assert.equal(page.result.totalCount, 5);
      seenKeys.push(...page.result.data.map((a) => a.keyHash));
    }
    assert.deepEqual(seenKeys, hashes);
    const seenUsers: string[] = [];
    for await (const page of await client.guardrails.listMemberAssignments({ limit: 2 })) {
      seenUsers.push(...page.result.data.map((a) => a.userId));
    }
    assert.deepEqual(seenUsers, users);
  });

  it("refusals arrive as the SDK's typed errors: 404 unknown guardrail, 400 other workspace or default guardrail, 401 (docs/behaviour.md#invalid-request; docs/behaviour.md#workspace-default; docs/behaviour.md#workspaces)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = await steps.workspace();
    const away = await steps.key({ workspace_id: ws.id });
    const g = await steps.guardrail();
    await steps.member("m");
    await steps.patchGuardrail(ws.default_guardrail_id, { description: "materialized" });
    const client = sdk(org.key);
    const notFound = "Resource not found";
    await rejectsWith(
      client.guardrails.bulkAssignKeys({
        id: UNKNOWN_UUID,
        bulkAssignKeysRequest: { keyHashes: [away.hash] },
      }),
      NotFoundResponseError,
      404,
      notFound,
    );
    await rejectsWith(
      client.guardrails.bulkUnassignMembers({
        id: UNKNOWN_UUID,
        bulkUnassignMembersRequest: { memberUserIds: ["m"] },
      }),
      NotFoundResponseError,
      404,
      notFound,
    );
    await rejectsWith(
      client.guardrails.listGuardrailMemberAssignments({ id: UNKNOWN_UUID }),
      NotFoundResponseError,
      404,
      notFound,
    );
    await rejectsWith(
      client.guardrails.bulkAssignKeys({ id: g.id, bulkAssignKeysRequest: { keyHashes: [away.hash] } }),
      BadRequestResponseError,
      400,
      "Invalid request parameters",
    );
    await rejectsWith(
      client.guardrails.bulkAssignMembers({
        id: ws.default_guardrail_id,
        bulkAssignMembersRequest: { memberUserIds: ["m"] },
      }),
      BadRequestResponseError,
      400,
      "Invalid request parameters",
    );
    await rejectsWith(
      sdk("sk-gr-v1-not-a-real-key").guardrails.listKeyAssignments(),
      UnauthorizedResponseError,
      401,
      "Invalid API key",
    );
    const state = await steps.assignmentState();
    assert.equal(state.keys.total_count + state.members.total_count, 0);
  });

  it("an inference key is refused with 403: typed where the SDK lists 403, a default error elsewhere (docs/behaviour.md#key-kinds)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    const key = await steps.key();
    const client = sdk(key.secret);
    const message = "Only management keys can perform this operation";
    await rejectsWith(
      client.guardrails.bulkAssignKeys({ id: g.id, bulkAssignKeysRequest: { keyHashes: [key.hash] } }),
      ForbiddenResponseError,
      403,
      message,
    );
    await rejectsWith(client.guardrails.listKeyAssignments(), OpenRouterDefaultError, 403);
    await rejectsWith(
      client.guardrails.bulkUnassignMembers({
        id: g.id,
        bulkUnassignMembersRequest: { memberUserIds: ["m"] },
      }),
      OpenRouterDefaultError,
      403,
    );
    assert.equal((await steps.assignmentState()).keys.total_count, 0);
  });
});
