import { defaultPolicy, type Guardrail, type GuardrailPolicy } from "../../src/domain/guardrail.js";
import type { AppliedGuardrail } from "../../src/domain/policy.js";

/** Guardrails as stored, for the pure tests of policy combination (docs/behaviour.md#combination). */

/** The families of config/default.json plus the literal "other" (Catalog.familyIds()). */
export const FAMILIES = ["vendor_a", "vendor_b", "vendor_c", "vendor_d", "other"];
export const SONNET = "anthropic/claude-4.5-sonnet-20250929";
export const GPT5 = "openai/gpt-5-2025-08-07";
export const GEMINI = "google/gemini-2.5-pro-20250617";
export const GROK = "x-ai/grok-4-07-09";

let sequence = 0;
/** A stored guardrail: the defaults (docs/behaviour.md#guardrail-defaults) overridden by `policy`. */
export function guardrail(policy: Partial<GuardrailPolicy> = {}, id?: string): Guardrail {
  sequence += 1;
  return {
    ...defaultPolicy(`g${sequence}`, FAMILIES),
    id: id ?? `00000000-0000-4000-8000-${String(sequence).padStart(12, "0")}`,
    organization_id: "00000000-0000-4000-8000-00000000000a",
    workspace_id: "00000000-0000-4000-8000-00000000000b",
    is_workspace_default: false,
    version: 1,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: null,
    ...policy,
  };
}

export const key = (g: Guardrail): AppliedGuardrail => ({ layer: "key", guardrail: g });
export const member = (g: Guardrail): AppliedGuardrail => ({ layer: "member", guardrail: g });
export const workspaceDefault = (g: Guardrail): AppliedGuardrail => ({
  layer: "workspace_default",
  guardrail: { ...g, is_workspace_default: true },
});
