import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OpenRouter } from "@openrouter/sdk";
import type { ChatResult, ChatStreamChunk } from "@openrouter/sdk/models";
import {
  BadRequestResponseError,
  NotFoundResponseError,
  OpenRouterError,
  UnauthorizedResponseError,
} from "@openrouter/sdk/models/errors";
import { clientFor, TEST_DATABASE_KIND } from "../helpers/server.js";
import { type GatewayBench, LLAMA, SONNET, startGatewayBench } from "./gateway-support.js";
import { orgSteps } from "./org-support.js";

/**
 * The official SDK, unmodified and with its strict response validation on (its default), against a
 * real server for every resource this service has (docs/api.md#the-reference-sdk). A call the SDK
 * cannot validate fails with a ResponseValidationError, so each successful call below proves the
 * shape; the asserts check the values.
 */
describe(`the reference SDK @openrouter/sdk on every resource served, on ${TEST_DATABASE_KIND} (docs/api.md#the-reference-sdk)`, () => {
  let bench: GatewayBench;
  before(async () => {
    delete process.env.OPENROUTER_API_KEY;
    delete process.env.OPENROUTER_BASE_URL;
    bench = await startGatewayBench();
  });
  after(async () => {
    await bench.close();
  });

  const sdk = (apiKey: string) =>
    new OpenRouter({ apiKey, serverURL: bench.server.baseUrl, retryConfig: { strategy: "none" } });

  async function rejection(promise: Promise<unknown>): Promise<unknown> {
    return promise.then(
      (value) => assert.fail(`expected a rejection, got ${JSON.stringify(value)}`),
      (e: unknown) => e,
    );
  }

  it("apiKeys: create, list, get, update, getCurrentKeyMetadata and delete validate, and usage counts what the key spent (docs/api.md#keys)", async () => {
    const org = await bench.server.newOrg();
    const admin = sdk(org.key);
    await orgSteps(bench.server, org).member("ada", { name: "Ada" });

    const created = await admin.apiKeys.create({ requestBody: { name: "sdk key", creatorUserId: "ada" } });
    assert.match(created.key, /^sk-gr-v1-/);
    const k = created.data;
    assert.equal(k.name, "sdk key");
    assert.equal(k.workspaceId, org.workspaceId);
    assert.equal(k.creatorUserId, "ada");
    assert.equal(k.disabled, false);
    assert.equal(k.limit, null);
    assert.equal(k.limitRemaining, null);
    assert.equal(k.limitReset, null);
    assert.equal(k.includeByokInLimit, false);
    assert.equal(k.usage, 0);
    assert.equal(k.byokUsage, 0);
    assert.equal(k.updatedAt, null);

    // The key spends: a chat through the gateway, then its usage is the ledger's.
    const answer = (await sdk(created.key).chat.send({
      chatRequest: { model: SONNET, messages: [{ role: "user", content: "hello there" }] },
    })) as ChatResult;
    assert.equal(answer.object, "chat.completion");
    const got = (await admin.apiKeys.get({ hash: k.hash })).data;
    assert.ok(got.usage > 0, `usage ${got.usage}`);
    assert.equal(got.usageDaily, got.usage);
    assert.equal(got.usageWeekly, got.usage);
    assert.equal(got.usageMonthly, got.usage);
    assert.equal(got.byokUsage, 0);

    const current = (await sdk(created.key).apiKeys.getCurrentKeyMetadata()).data;
    assert.equal(current.label, k.label);
    assert.equal(current.workspaceId, org.workspaceId);
    assert.equal(current.organizationId, org.organizationId);
    assert.equal(current.isManagementKey, false);
    assert.equal(current.usage, got.usage);
    assert.deepEqual([...current.allowedDataRegions].sort(), ["europe", "global", "us"]);

    const listed = await admin.apiKeys.list();
    assert.deepEqual(
      listed.data.map((x) => x.hash),
      [k.hash],
    );
    assert.equal(listed.data[0]?.usage, got.usage);

    const renamed = (await admin.apiKeys.update({ hash: k.hash, requestBody: { name: "renamed" } })).data;
    assert.equal(renamed.name, "renamed");
    assert.equal(typeof renamed.updatedAt, "string");
    const disabled = (await admin.apiKeys.update({ hash: k.hash, requestBody: { disabled: true } })).data;
    assert.equal(disabled.disabled, true);
    // A disabled key is refused, and listed only when asked for.
    const refused = await rejection(sdk(created.key).apiKeys.getCurrentKeyMetadata());
    assert.ok(refused instanceof UnauthorizedResponseError, String(refused));
    assert.equal((await admin.apiKeys.list()).data.length, 0);
    assert.equal((await admin.apiKeys.list({ includeDisabled: true })).data.length, 1);
    await admin.apiKeys.update({ hash: k.hash, requestBody: { disabled: false } });
    assert.equal((await sdk(created.key).apiKeys.getCurrentKeyMetadata()).data.label, k.label);

    assert.deepEqual(await admin.apiKeys.delete({ hash: k.hash }), { deleted: true });
    const gone = await rejection(admin.apiKeys.get({ hash: k.hash }));
    assert.ok(gone instanceof NotFoundResponseError, String(gone));
  });

  it("apiKeys: a key's own limit set on create and update, with limit_remaining, limit_reset and include_byok_in_limit, the same on getCurrentKeyMetadata (docs/api.md#keys)", async () => {
    const org = await bench.server.newOrg();
    const admin = sdk(org.key);
    const created = await admin.apiKeys.create({
      requestBody: { name: "capped", limit: 10, limitReset: "daily", includeByokInLimit: true },
    });
    const k = created.data;
    assert.equal(k.limit, 10);
    assert.equal(k.limitRemaining, 10);
    assert.equal(k.limitReset, "daily");
    assert.equal(k.includeByokInLimit, true);

    await sdk(created.key).chat.send({
      chatRequest: { model: LLAMA, messages: [{ role: "user", content: "hello there" }] },
    });
    const got = (await admin.apiKeys.get({ hash: k.hash })).data;
    assert.ok(got.usageDaily > 0);
    assert.equal(got.limitRemaining, Math.round((10 - got.usageDaily) * 1e6) / 1e6);
    const current = (await sdk(created.key).apiKeys.getCurrentKeyMetadata()).data;
    assert.equal(current.limit, 10);
    assert.equal(current.limitRemaining, got.limitRemaining);
    assert.equal(current.limitReset, "daily");

    const updated = (
      await admin.apiKeys.update({
        hash: k.hash,
        requestBody: { limit: 2.5, limitReset: null, includeByokInLimit: false },
      })
    ).data;
    assert.equal(updated.limit, 2.5);
    assert.equal(updated.limitReset, null, "null: the key's lifetime");
    assert.equal(updated.includeByokInLimit, false);
    const listed = (await admin.apiKeys.list()).data;
    assert.deepEqual(
      listed.map((x) => [x.hash, x.limit]),
      [[k.hash, 2.5]],
    );
    const removed = (await admin.apiKeys.update({ hash: k.hash, requestBody: { limit: null } })).data;
    assert.equal(removed.limit, null);
    assert.equal(removed.limitRemaining, null);

    const err = await rejection(admin.apiKeys.create({ requestBody: { name: "bad", limit: -1 } }));
    assert.ok(err instanceof BadRequestResponseError, String(err));
    assert.equal(err.error.message, "Invalid request parameters");
    assert.equal((await admin.apiKeys.list({ includeDisabled: true })).data.length, 1, "nothing stored");
  });

  it("workspaces: create with a slug, get by id and by slug, list, members listed, added and removed, delete (docs/api.md#workspace-members)", async () => {
    const org = await bench.server.newOrg();
    const admin = sdk(org.key);
    const steps = orgSteps(bench.server, org);
    await steps.member("ada");
    await steps.member("bob");

    const ws = (
      await admin.workspaces.create({ createWorkspaceRequest: { name: "Research", slug: "research" } })
    ).data;
    assert.equal(ws.slug, "research");
    assert.equal(ws.name, "Research");
    assert.equal(ws.defaultTextModel, null);
    assert.deepEqual((await admin.workspaces.get({ id: ws.id })).data, ws);
    assert.deepEqual((await admin.workspaces.get({ id: "research" })).data, ws);
    const taken = await rejection(
      admin.workspaces.create({ createWorkspaceRequest: { name: "Again", slug: "research" } }),
    );
    assert.ok(taken instanceof BadRequestResponseError, String(taken));

    const page = await admin.workspaces.list();
    assert.equal(page.result.totalCount, 2);
    assert.deepEqual(page.result.data.map((w) => w.slug).sort(), ["default", "research"]);

    const added = await admin.workspaces.bulkAddMembers({
      id: ws.id,
      bulkAddWorkspaceMembersRequest: { userIds: ["ada", "bob", "nobody"] },
    });
    assert.equal(added.addedCount, 2);
    assert.deepEqual(added.data.map((m) => [m.userId, m.workspaceId, m.role]).sort(), [
      ["ada", ws.id, "member"],
      ["bob", ws.id, "member"],
    ]);
    const members = await admin.workspaces.listMembers({ id: ws.id });
    assert.equal(members.result.totalCount, 2);
    assert.deepEqual(members.result.data.map((m) => m.userId).sort(), ["ada", "bob"]);

    // A member who owns a key there cannot leave it: nobody is removed.
    await steps.key({ workspace_id: ws.id, member_user_id: "bob" });
    const blocked = await rejection(
      admin.workspaces.bulkRemoveMembers({
        id: ws.id,
        bulkRemoveWorkspaceMembersRequest: { userIds: ["ada", "bob"] },
      }),
    );
    assert.ok(blocked instanceof BadRequestResponseError, String(blocked));
    assert.equal((await admin.workspaces.listMembers({ id: ws.id })).result.totalCount, 2);
    const removed = await admin.workspaces.bulkRemoveMembers({
      id: "research",
      bulkRemoveWorkspaceMembersRequest: { userIds: ["ada"] },
    });
    assert.equal(removed.removedCount, 1);
    assert.deepEqual(
      (await admin.workspaces.listMembers({ id: ws.id })).result.data.map((m) => m.userId),
      ["bob"],
    );

    assert.deepEqual(await admin.workspaces.delete({ id: ws.id }), { deleted: true });
    const gone = await rejection(admin.workspaces.get({ id: ws.id }));
    assert.ok(gone instanceof NotFoundResponseError, String(gone));
  });

  it("workspaces: setBudget, getBudget, listBudgets and deleteBudget validate, and the gateway enforces the budget over the workspace's keys (docs/api.md#workspace-budgets)", async () => {
    const org = await bench.server.newOrg();
    const admin = sdk(org.key);
    const ws = (
      await admin.workspaces.create({ createWorkspaceRequest: { name: "Budgeted", slug: "budgeted" } })
    ).data;
    const set = await admin.workspaces.setBudget({
      workspaceRef: ws.id,
      interval: "daily",
      upsertWorkspaceBudgetRequest: { limitUsd: 0.000001 },
    });
    assert.equal(set.data.workspaceId, ws.id);
    assert.equal(set.data.limitUsd, 0.000001);
    assert.equal(set.data.resetInterval, "daily");
    assert.equal(set.includeByokInBudgets, false);
    const lifetime = await admin.workspaces.setBudget({
      workspaceRef: "budgeted",
      interval: "lifetime",
      upsertWorkspaceBudgetRequest: { limitUsd: 50, includeByokInBudgets: true },
    });
    assert.equal(lifetime.data.resetInterval, null);
    assert.equal(lifetime.includeByokInBudgets, true);

    const got = await admin.workspaces.getBudget({ workspaceRef: ws.id, interval: "daily" });
    assert.deepEqual(got.data, set.data);
    assert.equal(got.includeByokInBudgets, true, "the setting is workspace-wide");
    const listed = await admin.workspaces.listBudgets({ workspaceRef: "budgeted" });
    assert.deepEqual(
      listed.data.map((b) => [b.resetInterval, b.limitUsd]),
      [
        ["daily", 0.000001],
        [null, 50],
      ],
    );

    // A key of the workspace is held by its daily budget, and the refusal names the layer.
    const key = (await admin.apiKeys.create({ requestBody: { name: "in budgeted", workspaceId: ws.id } }))
      .key;
    const refused = await rejection(
      sdk(key).chat.send({ chatRequest: { model: SONNET, messages: [{ role: "user", content: "hi" }] } }),
    );
    assert.ok(refused instanceof OpenRouterError, String(refused));
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /"layer":"workspace_budget"/);

    assert.deepEqual(await admin.workspaces.deleteBudget({ workspaceRef: ws.id, interval: "daily" }), {
      deleted: true,
    });
    const none = await rejection(admin.workspaces.getBudget({ workspaceRef: ws.id, interval: "daily" }));
    assert.ok(none instanceof NotFoundResponseError, String(none));
    const answer = (await sdk(key).chat.send({
      chatRequest: { model: SONNET, messages: [{ role: "user", content: "hi" }] },
    })) as ChatResult;
    assert.equal(answer.object, "chat.completion");

    const bad = await rejection(
      admin.workspaces.setBudget({
        workspaceRef: ws.id,
        interval: "weekly",
        upsertWorkspaceBudgetRequest: { limitUsd: 0 },
      }),
    );
    assert.ok(bad instanceof BadRequestResponseError, String(bad));
    const other = sdk((await bench.server.newOrg()).key);
    const hidden = await rejection(other.workspaces.listBudgets({ workspaceRef: ws.id }));
    assert.ok(hidden instanceof NotFoundResponseError, String(hidden));
  });

  it("organization.listMembers lists the members; endpoints.list and models.count describe the catalog (docs/api.md#the-reference-sdk)", async () => {
    const org = await bench.server.newOrg();
    const admin = sdk(org.key);
    await orgSteps(bench.server, org).member("ada", { name: "Ada Lovelace", email: "ada@example.com" });
    await orgSteps(bench.server, org).member("bob");
    const members = await admin.organization.listMembers();
    assert.equal(members.result.totalCount, 2);
    assert.deepEqual(
      members.result.data.map((m) => [m.id, m.email, m.firstName, m.role]),
      [
        ["ada", "ada@example.com", "Ada Lovelace", "org:member"],
        ["bob", "", null, "org:member"],
      ],
    );

    const catalog = (await clientFor(bench.server, null).get("/api/v1/models")).body.data;
    assert.equal((await admin.models.count()).data.count, catalog.length);
    const [author, name] = SONNET.split("/") as [string, string];
    const endpoints = (await admin.endpoints.list({ author, slug: name })).data;
    assert.equal(endpoints.id, SONNET);
    assert.ok(endpoints.endpoints.length > 0);
    for (const e of endpoints.endpoints) {
      assert.equal(e.modelId, SONNET);
      assert.ok(e.contextLength > 0);
      assert.match(e.pricing.prompt, /^\d/);
      assert.equal(e.uptimeLast30m, null);
    }
    const missing = await rejection(admin.endpoints.list({ author: "nobody", slug: "nothing" }));
    assert.ok(missing instanceof NotFoundResponseError, String(missing));
  });

  it("guardrails take the per-vendor ZDR flags under the vendors' names with the shipped configuration (docs/configuration.md#the-catalog-file)", async () => {
    const org = await bench.server.newOrg();
    const admin = sdk(org.key);
    const g = (
      await admin.guardrails.create({
        createGuardrailRequest: { name: "zdr", enforceZdrAnthropic: true, enforceZdrXai: true },
      })
    ).data;
    assert.equal(g.enforceZdrAnthropic, true);
    assert.equal(g.enforceZdrOpenai, false);
    assert.equal(g.enforceZdrGoogle, false);
    assert.equal(g.enforceZdrXai, true);
    assert.deepEqual((await admin.guardrails.get({ id: g.id })).data, g);
  });

  it("chat.send answers both ways, strictly validated: a completion, and a stream of chunks ending with usage (docs/gateway.md#answer-fields)", async () => {
    const org = await bench.server.newOrg();
    const key = await orgSteps(bench.server, org).key();
    const client = sdk(key.secret);
    const whole = (await client.chat.send({
      chatRequest: { model: LLAMA, messages: [{ role: "user", content: "say something" }] },
    })) as ChatResult;
    assert.equal(whole.object, "chat.completion");
    assert.equal(typeof whole.created, "number");
    assert.equal(whole.systemFingerprint, null);
    assert.equal(whole.choices[0]?.message.role, "assistant");

    const stream = await client.chat.send({
      chatRequest: {
        model: LLAMA,
        messages: [{ role: "user", content: "say something" }],
        stream: true,
        streamOptions: { includeUsage: true },
      },
    });
    const chunks: ChatStreamChunk[] = [];
    for await (const chunk of stream as AsyncIterable<ChatStreamChunk>) chunks.push(chunk);
    assert.ok(chunks.length > 2);
    assert.ok(chunks.every((c) => c.object === "chat.completion.chunk"));
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    assert.equal(text, whole.choices[0]?.message.content);
    assert.ok(chunks.at(-1)?.usage, "the usage chunk");
  });

  it("workspaces.update renames a workspace and changes its slug and description, by id or slug; a taken slug is 400, an unknown workspace 404 (docs/api.md#workspaces-and-keys)", async () => {
    const org = await bench.server.newOrg();
    const admin = sdk(org.key);
    const ws = (await admin.workspaces.create({ createWorkspaceRequest: { name: "Old", slug: "old" } })).data;
    const updated = (
      await admin.workspaces.update({
        id: "old",
        updateWorkspaceRequest: { name: "New", slug: "new", description: "renamed" },
      })
    ).data;
    assert.deepEqual(
      [updated.id, updated.name, updated.slug, updated.description],
      [ws.id, "New", "new", "renamed"],
    );
    assert.equal(typeof updated.updatedAt, "string");
    assert.deepEqual((await admin.workspaces.get({ id: "new" })).data, updated);
    const cleared = (
      await admin.workspaces.update({ id: ws.id, updateWorkspaceRequest: { description: null } })
    ).data;
    assert.equal(cleared.description, null);
    assert.equal(cleared.name, "New", "fields not sent are kept");

    const taken = await rejection(
      admin.workspaces.update({ id: ws.id, updateWorkspaceRequest: { slug: "default" } }),
    );
    assert.ok(taken instanceof BadRequestResponseError, String(taken));
    const unsupported = await rejection(
      admin.workspaces.update({ id: ws.id, updateWorkspaceRequest: { defaultTextModel: "openai/gpt-5" } }),
    );
    assert.ok(unsupported instanceof BadRequestResponseError, String(unsupported));
    assert.equal(
      (await admin.workspaces.get({ id: ws.id })).data.slug,
      "new",
      "a refused update changes nothing",
    );
    const other = await rejection(
      sdk((await bench.server.newOrg()).key).workspaces.update({
        id: ws.id,
        updateWorkspaceRequest: { name: "x" },
      }),
    );
    assert.ok(other instanceof NotFoundResponseError, String(other));
  });

  it("models.get reads one model of the catalog, variants included; an unknown one is a typed 404 (docs/api.md#the-reference-sdk)", async () => {
    const org = await bench.server.newOrg();
    const model = (await sdk(org.key).models.get({ author: "meta-llama", slug: "llama-3.1-8b-instruct" }))
      .data;
    assert.equal(model.id, LLAMA);
    assert.equal(model.contextLength, 131072);
    const free = (
      await sdk(org.key).models.get({ author: "meta-llama", slug: "llama-3.3-70b-instruct:free" })
    ).data;
    assert.equal(free.id, "meta-llama/llama-3.3-70b-instruct:free");
    const missing = await rejection(sdk(org.key).models.get({ author: "nobody", slug: "nothing" }));
    assert.ok(missing instanceof NotFoundResponseError, String(missing));
  });

  it("a call for something not served here is a 404 in the error envelope naming the route (docs/api.md#the-reference-sdk; docs/behaviour.md#unknown-routes)", async () => {
    const org = await bench.server.newOrg();
    const err = await rejection(sdk(org.key).credits.getCredits());
    assert.ok(err instanceof OpenRouterError, String(err));
    assert.equal(err.statusCode, 404);
    assert.deepEqual(JSON.parse(err.body), {
      error: {
        code: 404,
        message: "Resource not found",
        metadata: { reason: "no_such_route", method: "GET", path: "/api/v1/credits", api_reference: "/docs" },
      },
    });
  });
});
