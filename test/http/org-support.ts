import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type ApiResponse, clientFor, type TestOrg, type TestServer } from "../helpers/server.js";

/**
 * Shared steps of the member, assignment, current-key, freshness and audit-log tests (docs/behaviour.md#members): each
 * step asserts its own success, so a test reads as the scenario it checks.
 */
export const NOT_FOUND = { error: { code: 404, message: "Resource not found" } };
export const INVALID_KEY = { error: { code: 401, message: "Invalid API key" } };
export const MISSING_AUTH = { error: { code: 401, message: "Missing Authentication header" } };
export const INFERENCE_ONLY = {
  error: { code: 403, message: "Only inference keys can perform this operation" },
};
export const UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000";
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

export const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

export interface MadeKey {
  secret: string;
  hash: string;
  name: string;
  label: string;
}

/** The steps of one organization, through its management key. */
export function orgSteps(server: TestServer, org: TestOrg) {
  const api = clientFor(server, org.key);
  const ok = (res: ApiResponse, status: number) => {
    assert.equal(res.status, status, JSON.stringify(res.body));
    return res;
  };
  return {
    api,
    async workspace(name = "second"): Promise<{ id: string; default_guardrail_id: string }> {
      return ok(await api.post("/api/v1/workspaces", { name }), 201).body.data;
    },
    async member(user_id: string, extra: Record<string, unknown> = {}) {
      return ok(await api.post("/api/v1/members", { user_id, ...extra }), 201).body.data;
    },
    async key(extra: Record<string, unknown> = {}): Promise<MadeKey> {
      const res = ok(await api.post("/api/v1/keys", { name: "key", ...extra }), 201);
      return { secret: res.body.key, ...res.body.data };
    },
    async guardrail(body: Record<string, unknown> = {}): Promise<Record<string, unknown> & { id: string }> {
      return ok(await api.post("/api/v1/guardrails", { name: "g", ...body }), 201).body.data;
    },
    async patchGuardrail(id: string, body: Record<string, unknown>) {
      return ok(await api.patch(`/api/v1/guardrails/${id}`, body), 200).body.data;
    },
    async assignKeys(id: string, key_hashes: string[]): Promise<number> {
      return ok(await api.post(`/api/v1/guardrails/${id}/assignments/keys`, { key_hashes }), 200).body
        .assigned_count;
    },
    async unassignKeys(id: string, key_hashes: string[]): Promise<number> {
      return ok(await api.post(`/api/v1/guardrails/${id}/assignments/keys/remove`, { key_hashes }), 200).body
        .unassigned_count;
    },
    async assignMembers(id: string, member_user_ids: string[]): Promise<number> {
      return ok(await api.post(`/api/v1/guardrails/${id}/assignments/members`, { member_user_ids }), 200).body
        .assigned_count;
    },
    async unassignMembers(id: string, member_user_ids: string[]): Promise<number> {
      return ok(
        await api.post(`/api/v1/guardrails/${id}/assignments/members/remove`, { member_user_ids }),
        200,
      ).body.unassigned_count;
    },
    /** The whole list of a GET list route (limit 100), asserting 200. */
    async list(path: string): Promise<{ data: Record<string, unknown>[]; total_count: number }> {
      const sep = path.includes("?") ? "&" : "?";
      return ok(await api.get(`${path}${sep}limit=100`), 200).body;
    },
    /** Everything assignment-related of the organization, to compare before and after a refused change. */
    async assignmentState() {
      const keys = ok(await api.get("/api/v1/guardrails/assignments/keys?limit=100"), 200).body;
      const members = ok(await api.get("/api/v1/guardrails/assignments/members?limit=100"), 200).body;
      return { keys, members };
    },
    async deleted(path: string) {
      const res = ok(await api.delete(path), 200);
      assert.deepEqual(res.body, { deleted: true });
    },
  };
}

/** GET /api/v1/key with an inference key. */
export async function currentKey(server: TestServer, secret: string): Promise<ApiResponse> {
  return clientFor(server, secret).get("/api/v1/key");
}

/** The layers and ids of GET /api/v1/key's guardrails, in order. */
export function layersOf(res: ApiResponse): [string, string][] {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.guardrails.map((g: { layer: string; id: string }) => [g.layer, g.id]);
}

/** The paths named by a 400's metadata.issues, after checking the exact error body (docs/behaviour.md#error-body). */
export function assertInvalid(res: ApiResponse, path: string): void {
  const context = JSON.stringify(res.body);
  assert.equal(res.status, 400, context);
  assert.equal(res.body.error.code, 400, context);
  assert.equal(res.body.error.message, "Invalid request parameters", context);
  const paths: string[] = (res.body.error.metadata?.issues ?? []).map((i: { path: string }) => i.path);
  assert.ok(paths.includes(path), `issues should name ${path}: ${context}`);
}

export function assertNotFound(res: ApiResponse): void {
  assert.equal(res.status, 404, JSON.stringify(res.body));
  assert.deepEqual(res.body, NOT_FOUND);
}
