import type { ServiceDeps } from "./context.js";
import { type presentKey, presentKeys } from "./keys.js";

/**
 * Keys as this API serves them. Only inference keys are served here, and they always belong to a
 * workspace; the stored type allows none because management keys have none.
 */
export async function presentServedKeys(
  deps: ServiceDeps,
  keys: readonly Parameters<typeof presentKey>[0][],
) {
  return (await presentKeys(deps, keys)).map((k) => {
    if (k.workspace_id === null) throw new Error("a management key cannot be served as an inference key");
    // presentKeys reads every key's spend, so each served key carries its list of budgets.
    return { ...k, workspace_id: k.workspace_id, budgets: k.budgets ?? [] };
  });
}

export async function presentServedKey(deps: ServiceDeps, key: Parameters<typeof presentKey>[0]) {
  const [served] = await presentServedKeys(deps, [key]);
  if (served === undefined) throw new Error("a key presented is a key served");
  return served;
}
