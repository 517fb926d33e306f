import type { ServiceDeps } from "./context.js";
import { type presentKey, presentKeys } from "./keys.js";

/**
 * Keys as this API serves them. Only inference keys are served here, and they always belong to a
 * workspace; the stored type allows none because management keys have none.
 */
export async function presentServedKeys(
  deps: ServiceDeps,
  organizationId: string,
  keys: readonly Parameters<typeof presentKey>[0][],
) {
  return (await presentKeys(deps, organizationId, keys)).map((k) => {
    if (k.workspace_id === null) throw new Error("a management key cannot be served as an inference key");
    return { ...k, workspace_id: k.workspace_id };
  });
}

export async function presentServedKey(
  deps: ServiceDeps,
  organizationId: string,
  key: Parameters<typeof presentKey>[0],
) {
  const [served] = await presentServedKeys(deps, organizationId, [key]);
  if (served === undefined) throw new Error("a key presented is a key served");
  return served;
}
