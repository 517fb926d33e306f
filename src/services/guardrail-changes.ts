import {
  applyGuardrailBody,
  defaultPolicy,
  type Guardrail,
  type GuardrailBody,
  type GuardrailPolicy,
  presentGuardrail,
} from "../domain/guardrail.js";
import { newId } from "../domain/ids.js";
import { type AuditChange, isoNow, type Principal, type ServiceDeps } from "./context.js";

/**
 * What a guardrail change is, whichever path writes it (guardrails.ts in a transaction,
 * guardrail-one-statement.ts in one statement): the policy of a body, the new row or version, and
 * its audit entry. Both paths build them here, so they cannot drift apart.
 */

export interface UpdateOptions {
  /** The If-Match header, when the caller sent one. */
  ifMatch?: string;
}

/** The policy of a create body; its 400s come before anything is read. */
export function createPolicy(deps: ServiceDeps, body: GuardrailBody): GuardrailPolicy {
  const name = body.name ?? "";
  return applyGuardrailBody(defaultPolicy(name, deps.catalog.familyIds()), body, deps.catalog, {
    isCreate: true,
  });
}

/** A new guardrail of `policy` in a workspace. */
export function newGuardrail(
  deps: ServiceDeps,
  principal: Principal,
  policy: GuardrailPolicy,
  workspaceId: string,
): Guardrail {
  return {
    ...policy,
    id: newId(),
    organization_id: principal.organizationId,
    workspace_id: workspaceId,
    is_workspace_default: false,
    version: 1,
    created_at: isoNow(deps),
    updated_at: null,
  };
}

/** A guardrail's next version after a PATCH body (its 400s), as updateGuardrail computes it. */
export function nextVersion(
  deps: ServiceDeps,
  current: Guardrail,
  body: GuardrailBody,
  now: string,
): Guardrail {
  const fixedName = current.is_workspace_default ? current.name : undefined;
  const policy = applyGuardrailBody(current, body, deps.catalog, { isCreate: false, fixedName });
  return { ...current, ...policy, version: current.version + 1, updated_at: now };
}

/** The audit entry of a guardrail change. */
export function auditOf(
  deps: ServiceDeps,
  action: string,
  before: Guardrail | undefined,
  after: Guardrail | undefined,
): AuditChange {
  const families = deps.catalog.familyIds();
  const subject = (after ?? before) as Guardrail;
  const b = before ? presentGuardrail(before, families) : null;
  const a = after ? presentGuardrail(after, families) : null;
  // An update records the properties it changed, before and after; create and delete the whole.
  if (b && a) {
    const changed = Object.keys(a).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
    return {
      action,
      resource_type: "guardrail",
      resource_id: subject.id,
      before: Object.fromEntries(changed.map((k) => [k, b[k]])),
      after: Object.fromEntries(changed.map((k) => [k, a[k]])),
    };
  }
  return { action, resource_type: "guardrail", resource_id: subject.id, before: b, after: a };
}
