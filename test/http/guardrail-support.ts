import assert from "node:assert/strict";
import type { ApiResponse, TestServer } from "../helpers/server.js";
import { clientFor } from "../helpers/server.js";

/**
 * Shared expectations of the guardrail create/update tests. The family ids are the default catalog's
 * (docs/behaviour.md#zdr-flags; config/default.json), plus the literal `other`.
 */
export const FAMILIES = ["anthropic", "openai", "google", "xai", "other"] as const;

/** Every field of a guardrail as returned (docs/behaviour.md#guardrail-fields), with the wire names of the default catalog. */
export const GUARDRAIL_FIELDS = [
  "id",
  "name",
  "description",
  "workspace_id",
  "created_at",
  "updated_at",
  "allowed_data_regions",
  "allowed_models",
  "allowed_providers",
  "ignored_models",
  "ignored_providers",
  "content_filter_builtins",
  "content_filters",
  "enable_free_model_publication",
  "enable_free_model_training",
  "enable_paid_model_training",
  "enforce_zdr",
  ...FAMILIES.map((f) => `enforce_zdr_${f}`),
  "include_byok_in_budgets",
  "limit_usd",
  "reset_interval",
  "alert_thresholds",
].sort();

/** Models of config/default.json: slug and canonical slug. */
export const SONNET = {
  slug: "anthropic/claude-sonnet-4.5",
  canonical: "anthropic/claude-4.5-sonnet-20250929",
};
export const GPT5 = { slug: "openai/gpt-5", canonical: "openai/gpt-5-2025-08-07" };
export const GEMINI = { slug: "google/gemini-2.5-pro", canonical: "google/gemini-2.5-pro-20250617" };

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/** The defaults (docs/behaviour.md#guardrail-defaults), for every field but id, name, workspace_id and created_at. */
export function defaultFields(): Record<string, unknown> {
  const out: Record<string, unknown> = {
    description: null,
    updated_at: null,
    allowed_data_regions: null,
    allowed_models: null,
    allowed_providers: null,
    ignored_models: null,
    ignored_providers: null,
    content_filter_builtins: null,
    content_filters: null,
    enable_free_model_publication: false,
    enable_free_model_training: true,
    enable_paid_model_training: true,
    enforce_zdr: null,
    include_byok_in_budgets: false,
    limit_usd: null,
    reset_interval: null,
    alert_thresholds: null,
  };
  for (const f of FAMILIES) out[`enforce_zdr_${f}`] = false;
  return out;
}

/** The ZDR flags of a guardrail as {family: flag}. */
export function zdrFlags(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(FAMILIES.map((f) => [f, data[`enforce_zdr_${f}`]]));
}

/**
 * A 400 with the exact error body (docs/behaviour.md#error-body) whose metadata.issues names every given path.
 */
export function assertInvalid(res: ApiResponse, ...paths: string[]): void {
  const context = JSON.stringify(res.body);
  assert.equal(res.status, 400, context);
  assert.equal(res.body.error.code, 400, context);
  assert.equal(res.body.error.message, "Invalid request parameters", context);
  assert.ok(Array.isArray(res.body.error.metadata?.issues), context);
  const named: string[] = res.body.error.metadata.issues.map((i: { path: string }) => i.path);
  for (const path of paths) assert.ok(named.includes(path), `issues should name ${path}: ${context}`);
}

/** The issue messages for one path, joined (to check that a 400 names the offending value). */
export function issueText(res: ApiResponse, path: string): string {
  return res.body.error.metadata.issues
    .filter((i: { path: string }) => i.path === path)
    .map((i: { message: string }) => i.message)
    .join(" | ");
}

/** The guardrails of a workspace (the default one without workspaceId), as the list returns them. */
export async function listGuardrails(
  server: TestServer,
  key: string,
  workspaceId?: string,
): Promise<Record<string, unknown>[]> {
  const query = workspaceId ? `?limit=100&workspace_id=${workspaceId}` : "?limit=100";
  const res = await clientFor(server, key).get(`/api/v1/guardrails${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

/** Creates a guardrail and returns the response (asserting 201). */
export async function createGuardrail(server: TestServer, key: string, body: Record<string, unknown>) {
  const res = await clientFor(server, key).post("/api/v1/guardrails", body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res;
}

/** GET one guardrail's data (asserting 200). */
export async function getGuardrail(server: TestServer, key: string, id: string) {
  const res = await clientFor(server, key).get(`/api/v1/guardrails/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data as Record<string, unknown>;
}

/** A create with this body is a 400 naming `paths`, and the fresh organization still has no guardrail. */
export async function assertCreateRefused(
  server: TestServer,
  body: Record<string, unknown>,
  ...paths: string[]
) {
  const org = await server.newOrg();
  const res = await clientFor(server, org.key).post("/api/v1/guardrails", body);
  assertInvalid(res, ...paths);
  assert.deepEqual(await listGuardrails(server, org.key), [], "nothing is stored");
  return res;
}
