import { AppError } from "../domain/errors.js";
import { findKeyByHash } from "../storage/key-repo.js";
import type { Principal, ServiceDeps } from "./context.js";
import { hashSecret } from "./keys.js";

/**
 * Resolves an Authorization header to its caller (docs/behaviour.md#authentication). The secret is hashed before the
 * lookup, so the comparison is on a digest the caller cannot steer byte by byte.
 */
/** The hash of the key in an Authorization header; throws the 401s of docs/behaviour.md#bearer-keys. */
function keyHashOf(header: string | undefined): string {
  if (header === undefined || header.trim() === "") throw new AppError("missing_authentication");
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match?.[1] || match[1].length > 512) throw new AppError("invalid_api_key");
  return hashSecret(match[1]);
}

/**
 * The caller from the warm cache, without a round trip through a promise: undefined when the key
 * is not cached (then `authenticate` looks it up). Throws the 401s for a missing or malformed header.
 */
export function authenticateCached(deps: ServiceDeps, header: string | undefined): Principal | undefined {
  return deps.caches.principals.get(keyHashOf(header)) ?? undefined;
}

export async function authenticate(deps: ServiceDeps, header: string | undefined): Promise<Principal> {
  const hash = keyHashOf(header);
  // A key already found unknown is refused without another lookup.
  if (deps.caches.unknownKeys.get(hash)) throw new AppError("invalid_api_key");
  const principal = await principalOfKey(deps, hash);
  if (!principal) {
    await deps.caches.unknownKeys.getOrCompute(hash, async () => true);
    throw new AppError("invalid_api_key");
  }
  return principal;
}

/** The caller a stored key stands for, through the warm cache; undefined once it is revoked or disabled. */
export async function principalOfKey(deps: ServiceDeps, hash: string): Promise<Principal | undefined> {
  const principal = await deps.caches.principals.getOrCompute(
    hash,
    async () => {
      const key = await findKeyByHash(deps.db, hash);
      if (!key || key.disabled === 1) return null;
      return {
        organizationId: key.organization_id,
        keyHash: key.hash,
        kind: key.kind,
        workspaceId: key.workspace_id,
        memberUserId: key.member_user_id,
      };
    },
    (found) => found !== null,
  );
  return principal ?? undefined;
}

export function requireManagement(principal: Principal): void {
  if (principal.kind !== "management") throw new AppError("management_key_required");
}

/** Model requests and the key's own view are for inference keys (docs/behaviour.md#key-kinds). */
export function requireInference(principal: Principal): void {
  if (principal.kind !== "inference") throw new AppError("inference_key_required");
}
