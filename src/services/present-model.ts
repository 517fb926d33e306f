import { DEFAULT_API, type Model } from "../domain/catalog.js";

/** USD per token as a decimal string, the form OpenAI-style model lists use. */
function perToken(usdPerMillion: number): string {
  return (usdPerMillion / 1_000_000).toFixed(12).replace(/\.?0+$/, "") || "0";
}

const SUPPORTED_PARAMETERS = ["max_tokens", "temperature", "top_p", "stop", "stream"];

/**
 * A catalog model as the model list shows it: the OpenAI model object with the catalog's fields.
 * Each endpoint says whether its provider is configured here (docs/gateway.md#servable-models).
 */
export function presentModel(m: Model, familyOf: (m: Model) => string, unavailable: ReadonlySet<string>) {
  return {
    id: m.slug,
    // The OpenAI model object's fields, for OpenAI clients' models.list and models.retrieve.
    object: "model",
    owned_by: m.author,
    canonical_slug: m.canonical_slug,
    name: m.name,
    author: m.author,
    zdr_family: familyOf(m),
    created: 0,
    context_length: m.context_length,
    // The API it is served on (docs/gateway.md#provider-apis).
    api: m.api ?? DEFAULT_API,
    architecture: { input_modalities: ["text"], output_modalities: ["text"], modality: "text->text" },
    pricing: {
      prompt: perToken(m.pricing.prompt_usd_per_million_tokens),
      completion: perToken(m.pricing.completion_usd_per_million_tokens),
    },
    top_provider: {
      is_moderated: false,
      context_length: m.context_length,
      max_completion_tokens: m.max_output_tokens,
    },
    per_request_limits: null,
    default_parameters: null,
    supported_parameters: SUPPORTED_PARAMETERS,
    supported_voices: null,
    endpoints: m.endpoints.map((e) => ({ ...e, available: !unavailable.has(e.provider) })),
    links: { details: `/api/v1/models/${m.slug}/endpoints` },
  };
}

/**
 * A model's endpoints in the reference SDK's shape; statistics this service does not keep
 * (latency, throughput, uptime) are null.
 */
export function presentModelEndpoints(
  model: Model,
  providerNames: ReadonlyMap<string, string>,
  unavailable: ReadonlySet<string>,
) {
  const pricing = {
    prompt: perToken(model.pricing.prompt_usd_per_million_tokens),
    completion: perToken(model.pricing.completion_usd_per_million_tokens),
  };
  return {
    id: model.slug,
    canonical_slug: model.canonical_slug,
    name: model.name,
    created: 0,
    description: "",
    architecture: {
      input_modalities: ["text"],
      output_modalities: ["text"],
      modality: "text->text",
      instruct_type: null,
      tokenizer: null,
    },
    endpoints: model.endpoints.map((e) => ({
      ...e,
      name: `${providerNames.get(e.provider) ?? e.provider} | ${model.slug}`,
      model_id: model.slug,
      model_name: model.name,
      provider_name: providerNames.get(e.provider) ?? e.provider,
      tag: e.provider,
      context_length: model.context_length,
      max_completion_tokens: model.max_output_tokens,
      max_prompt_tokens: null,
      pricing,
      quantization: null,
      supported_parameters: SUPPORTED_PARAMETERS,
      supports_implicit_caching: false,
      supports_tool_choice: { auto: true, function: true, none: true, required: true },
      latency_last_30m: null,
      throughput_last_30m: null,
      uptime_last_5m: null,
      uptime_last_30m: null,
      uptime_last_1d: null,
      // A provider without its API key configured is never routed to (docs/gateway.md).
      available: !unavailable.has(e.provider),
    })),
  };
}
