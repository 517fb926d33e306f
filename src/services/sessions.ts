import { randomBytes } from "node:crypto";
import { AppError } from "../domain/errors.js";
import { findKeyByHash } from "../storage/key-repo.js";
import {
  deleteExpiredSessions,
  deleteSession,
  findLiveSession,
  insertSession,
  type SessionRecord,
} from "../storage/session-repo.js";
import { principalOfKey } from "./authenticate.js";
import { isoNow, type Principal, type ServiceDeps } from "./context.js";
import { hashSecret } from "./keys.js";

/** How long a console session lasts: a working day, after which the key is pasted again. */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;

export type { SessionRecord };

export interface StartedSession {
  /** The token for the cookie; it is stored only as its hash and never shown again. */
  token: string;
  record: SessionRecord;
}

/**
 * Exchanges a pasted management key for a console session. The key is checked like a Bearer key
 * (unknown: 401; an inference key: 403), so a session never grants more than its key does.
 */
export async function startSession(deps: ServiceDeps, secret: string): Promise<StartedSession> {
  const keyHash = hashSecret(secret);
  const key = await findKeyByHash(deps.db, keyHash);
  if (!key || key.disabled === 1) throw new AppError("invalid_api_key");
  if (key.kind !== "management") {
    throw new AppError("management_key_required", { reason: "a console session needs a management key" });
  }
  const now = deps.now();
  const token = randomBytes(32).toString("base64url");
  const record: SessionRecord = {
    token_hash: hashSecret(token),
    organization_id: key.organization_id,
    key_hash: key.hash,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + SESSION_TTL_SECONDS * 1000).toISOString(),
  };
  // Sweeping the ended sessions here keeps the table small without a timer of its own.
  await deleteExpiredSessions(deps.db, record.created_at);
  await insertSession(deps.db, record);
  return { token, record };
}

/**
 * Whether the secret is a management key this instance already found valid (from the warm cache, no
 * read): such a sign-in is not held back by the failed-authentication throttle, as a known key on
 * the API is not.
 */
export function isKnownManagementKey(deps: ServiceDeps, secret: string): boolean {
  return deps.caches.principals.get(hashSecret(secret))?.kind === "management";
}

/**
 * The caller a session token stands for: its management key's principal, while the session is
 * live and the key still exists. Throws 401 invalid_session otherwise.
 */
export async function resolveSession(
  deps: ServiceDeps,
  token: string,
): Promise<{ principal: Principal; session: SessionRecord }> {
  if (token.length === 0 || token.length > 256) throw new AppError("invalid_session");
  const session = await findLiveSession(deps.db, hashSecret(token), isoNow(deps));
  if (!session) throw new AppError("invalid_session");
  const principal = await principalOfKey(deps, session.key_hash);
  if (principal?.kind !== "management" || principal.organizationId !== session.organization_id) {
    throw new AppError("invalid_session", { reason: "the key this session came from was revoked" });
  }
  return { principal, session };
}

/** Signs out: the session is gone from the database, so its cookie opens nothing anywhere. */
export async function endSession(deps: ServiceDeps, token: string): Promise<void> {
  await deleteSession(deps.db, hashSecret(token));
}

/** The key a session was opened with, for the console to name it (null once the key is gone). */
export async function sessionKey(
  deps: Pick<ServiceDeps, "db">,
  keyHash: string,
): Promise<{ name: string; label: string } | null> {
  const key = await findKeyByHash(deps.db, keyHash);
  return key ? { name: key.name, label: key.label } : null;
}
