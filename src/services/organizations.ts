import { newId, workspaceDefaultGuardrailId } from "../domain/ids.js";
import { countManagementKeys, findKeyByHash } from "../storage/key-repo.js";
import {
  firstOrganization,
  insertOrganization,
  insertWorkspace,
  type Organization,
  setDefaultWorkspace,
  type Workspace,
} from "../storage/workspace-repo.js";
import { isoNow, recordAudit, type ServiceDeps } from "./context.js";
import { type CreatedKey, createManagementKey, hashSecret } from "./keys.js";

export const DEFAULT_WORKSPACE_NAME = "Default";

/**
 * Creates an organization with its default workspace and one management key, in one transaction,
 * with the audit entries of the organization and of its key (docs/behaviour.md#audit-log). `actor`
 * is who made it: `cli` for the command line, `system` (the default) for the service itself.
 */
export async function createOrganization(
  deps: ServiceDeps,
  name: string,
  actor = "system",
): Promise<{ organization: Organization; workspace: Workspace; key: CreatedKey }> {
  return deps.transact(async (tx) => {
    const now = isoNow(deps);
    const organization: Organization = { id: newId(), name, default_workspace_id: null, created_at: now };
    await insertOrganization(tx, organization);
    const wsId = newId();
    const workspace: Workspace = {
      id: wsId,
      organization_id: organization.id,
      name: DEFAULT_WORKSPACE_NAME,
      is_default: 1,
      default_guardrail_id: workspaceDefaultGuardrailId(wsId),
      created_at: now,
      slug: "default",
      description: null,
      updated_at: null,
    };
    await insertWorkspace(tx, workspace);
    await setDefaultWorkspace(tx, organization.id, wsId);
    organization.default_workspace_id = wsId;
    await recordAudit(
      deps,
      tx,
      { organizationId: organization.id, keyHash: actor, kind: "management", workspaceId: null },
      {
        action: "organization.create",
        resource_type: "organization",
        resource_id: organization.id,
        before: null,
        after: { ...organization },
      },
    );
    const key = await createManagementKey(deps, tx, organization.id, "Initial management key", actor);
    return { organization, workspace, key };
  });
}

export interface BootstrapResult {
  organization: Organization;
  /** Set when a management key was made now: its secret, to print once. */
  createdSecret?: string;
  /**
   * GUARDRAILS_MANAGEMENT_KEY names a key that was revoked: it stays revoked
   * (docs/behaviour.md#management-key-revocation), and the start says so.
   */
  configuredKeyRevoked?: true;
}

/**
 * Start-up: makes sure the default organization exists and that a management key can reach it.
 * GUARDRAILS_MANAGEMENT_KEY, when set, is registered (as its hash); otherwise a key is made only when
 * the database has none, and its secret is returned to be printed once.
 */
export async function bootstrap(
  deps: ServiceDeps,
  configuredKey: string | undefined,
): Promise<BootstrapResult> {
  let organization = await firstOrganization(deps.db);
  let createdSecret: string | undefined;
  if (!organization) {
    const made = await createOrganization(deps, "Default organization");
    organization = made.organization;
    if (configuredKey === undefined) createdSecret = made.key.secret;
  }
  let configuredKeyRevoked = false;
  if (configuredKey !== undefined) {
    // A revoked key is kept as a disabled row, so a leaked configured key is not made valid again here.
    const known = await findKeyByHash(deps.db, hashSecret(configuredKey));
    if (!known) {
      const id = organization.id;
      await deps.transact((tx) =>
        createManagementKey(deps, tx, id, "GUARDRAILS_MANAGEMENT_KEY", "system", configuredKey),
      );
    } else if (known.disabled === 1) configuredKeyRevoked = true;
  } else if (createdSecret === undefined && (await countManagementKeys(deps.db)) === 0) {
    const id = organization.id;
    const made = await deps.transact((tx) =>
      createManagementKey(deps, tx, id, "Initial management key", "system"),
    );
    createdSecret = made.secret;
  }
  return {
    organization,
    ...(createdSecret !== undefined ? { createdSecret } : {}),
    ...(configuredKeyRevoked ? { configuredKeyRevoked: true as const } : {}),
  };
}
