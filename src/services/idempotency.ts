import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import { invalidRequest } from "../domain/errors.js";
import {
  findIdempotencyRecord,
  purgeIdempotencyRecords,
  saveIdempotencyRecord,
} from "../storage/idempotency-repo.js";
import type { Executor } from "../storage/schema.js";
import { inTransaction, type Principal, type ServiceDeps } from "./context.js";

/** How long a response is kept for retries. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_KEY_LENGTH = 255;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface IdempotencyRequest {
  /** The raw Idempotency-Key header. */
  key: string;
  /** Method, route and body of the request: a retry must send the same. */
  method: string;
  route: string;
  body: unknown;
}

/** JSON with sorted object keys, so the same body in another key order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * Stored responses can hold a key's secret (POST /keys). They are encrypted with a key derived from
 * the raw Idempotency-Key, which is itself stored only as a hash: the database alone reveals nothing.
 */
function cipherKey(rawKey: string, organizationId: string): Buffer {
  return Buffer.from(hkdfSync("sha256", rawKey, organizationId, "guardrails idempotency v1", 32));
}

function seal(response: StoredResponse, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(response), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64");
}

function open(sealed: string, key: Buffer): StoredResponse {
  const raw = Buffer.from(sealed, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  return JSON.parse(text) as StoredResponse;
}

export function checkIdempotencyKey(key: string): void {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw invalidRequest([
      {
        path: "/headers/idempotency-key",
        message: `must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters`,
      },
    ]);
  }
}

/**
 * Runs a creating request at most once per Idempotency-Key: the check, the work and the stored
 * response share one transaction, so two retries racing each other still create one thing (the
 * second waits for, or conflicts with, the first and then replays it).
 */
export async function runIdempotent(
  deps: ServiceDeps,
  principal: Principal,
  request: IdempotencyRequest | undefined,
  work: (tx: Executor) => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  if (request === undefined) {
    const response = await inTransaction(deps, work);
    return { ...response, replayed: false };
  }
  checkIdempotencyKey(request.key);
  const keyHash = sha256(request.key);
  const requestHash = sha256(`${request.method} ${request.route}\n${canonicalJson(request.body)}`);
  const key = cipherKey(request.key, principal.organizationId);
  return inTransaction(deps, async (tx) => {
    // Instances sharing a database: the second of two racing retries waits here for the first to
    // commit, then finds its record (SQLite runs transactions one at a time already).
    await deps.coordination?.lock(tx, `idempotency:${principal.organizationId}:${keyHash}`);
    const now = deps.now();
    const notBefore = new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString();
    const existing = await findIdempotencyRecord(tx, principal.organizationId, keyHash, notBefore);
    if (existing) {
      if (existing.request_hash !== requestHash) {
        throw invalidRequest(
          [
            {
              path: "/headers/idempotency-key",
              message: "this Idempotency-Key was used with another request body",
            },
          ],
          { reason: "idempotency_key_reused" },
        );
      }
      return { ...open(existing.response, key), replayed: true };
    }
    const response = await work(tx);
    await purgeIdempotencyRecords(tx, notBefore);
    await saveIdempotencyRecord(tx, {
      organization_id: principal.organizationId,
      key_hash: keyHash,
      request_hash: requestHash,
      response: seal(response, key),
      created_at: now.toISOString(),
    });
    return { ...response, replayed: false };
  });
}
