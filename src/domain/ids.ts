import { v5 as uuidv5, v7 as uuidv7, validate } from "uuid";

/** Namespace of the derived ids of workspace default guardrails (decisions §7). Never change it. */
const WORKSPACE_DEFAULT_NAMESPACE = "6f0f3a52-3c1e-4e43-9d61-0b7e5f2f9a11";

/**
 * Time-ordered UUIDs (v7): new rows land at the end of the primary-key index instead of on a random
 * page, so a commit writes a few pages rather than one per row (and PostgreSQL indexes stay compact).
 */
export function newId(): string {
  return uuidv7();
}

/** The id of a workspace's default guardrail: UUIDv5 of the workspace id, so it is known before it exists. */
export function workspaceDefaultGuardrailId(workspaceId: string): string {
  return uuidv5(workspaceId, WORKSPACE_DEFAULT_NAMESPACE);
}

export function isUuid(value: string): boolean {
  return validate(value);
}
