/**
 * The model and provider catalog: what models exist, who made them, which provider endpoints serve
 * them and with which data-handling attributes. Loaded from the configuration file (see config.ts);
 * pure lookups here.
 */
export const REGIONS = ["global", "europe", "us"] as const;
export type Region = (typeof REGIONS)[number];

/**
 * The APIs a provider may speak (docs/gateway.md#provider-apis): a request on one is sent only to
 * endpoints whose provider speaks it, and only for a model that serves it.
 */
export const APIS = ["chat", "messages", "responses", "embeddings"] as const;
export type Api = (typeof APIS)[number];
/** What a provider speaks, and a model serves, when the catalog does not say. */
export const DEFAULT_API: Api = "chat";

export interface ZdrFamily {
  /** Wire id: the flag is `enforce_zdr_<id>`. */
  id: string;
  name: string;
  /** Model authors (the slug prefix) that belong to the family. */
  authors: string[];
  /**
   * Ids this family had in earlier configurations: flags stored under them are moved to `id` at
   * start, so renaming a family never changes what a stored guardrail enforces.
   */
  formerly?: string[];
}

export interface Provider {
  id: string;
  name: string;
  base_url: string;
  /** The environment variable holding the provider's API key; null for a provider that needs none. */
  api_key_env: string | null;
  byok: boolean;
  timeout_ms: number;
  /** The APIs it speaks (absent: chat only). */
  apis?: Api[];
  /** The header its API key goes in (docs/gateway.md#provider-auth); absent: `Authorization: Bearer`. */
  auth?: ProviderAuth;
}

/** How a provider takes its API key: `Authorization: Bearer <key>`, or `x-api-key: <key>` (Anthropic). */
export const PROVIDER_AUTHS = ["bearer", "x-api-key"] as const;
export type ProviderAuth = (typeof PROVIDER_AUTHS)[number];

export interface Endpoint {
  provider: string;
  region: Region;
  zdr: boolean;
  trains_on_data: boolean;
  publishes_prompts: boolean;
  free: boolean;
  byok: boolean;
  /** The provider's own id for the model, when it differs from the catalog slug. */
  model_id?: string;
}

export interface Model {
  slug: string;
  canonical_slug: string;
  name: string;
  author: string;
  context_length: number;
  max_output_tokens: number;
  /** The API the model is served on (absent: chat). */
  api?: Api;
  /**
   * Other names a request may give the model, as its vendor's own ids (dated or not): resolved to
   * this model like its slugs, never shown in its place (docs/gateway.md#model-aliases).
   */
  aliases?: string[];
  pricing: ModelPricing;
  endpoints: Endpoint[];
}

/** Prices in USD per million tokens. */
export interface ModelPricing {
  prompt_usd_per_million_tokens: number;
  completion_usd_per_million_tokens: number;
  /**
   * Prompt tokens written to the provider's prompt cache, and read from it, when they are priced
   * apart (absent: the prompt price) (docs/gateway.md#cache-prices).
   */
  cache_write_usd_per_million_tokens?: number;
  cache_read_usd_per_million_tokens?: number;
}

export interface CatalogData {
  zdr_families: ZdrFamily[];
  providers: Provider[];
  models: Model[];
}

export class Catalog {
  readonly families: readonly ZdrFamily[];
  readonly providers: readonly Provider[];
  readonly models: readonly Model[];
  private readonly bySlug = new Map<string, Model>();
  private readonly providerIds = new Set<string>();
  private readonly providerApis = new Map<string, ReadonlySet<Api>>();

  constructor(data: CatalogData) {
    this.families = data.zdr_families;
    this.providers = data.providers;
    this.models = data.models;
    for (const p of data.providers) {
      this.providerIds.add(p.id);
      this.providerApis.set(p.id, new Set(p.apis ?? [DEFAULT_API]));
    }
    for (const m of data.models) {
      for (const alias of m.aliases ?? []) this.bySlug.set(alias, m);
      this.bySlug.set(m.slug, m);
      this.bySlug.set(m.canonical_slug, m);
    }
  }

  /**
   * Finds a model by slug, canonical slug or alias (docs/behaviour.md#model-lists,
   * docs/gateway.md#model-aliases).
   */
  findModel(slugOrCanonical: string): Model | undefined {
    return this.bySlug.get(slugOrCanonical);
  }

  hasProvider(id: string): boolean {
    return this.providerIds.has(id);
  }

  /** Whether the provider speaks `api` (docs/gateway.md#provider-apis). */
  speaks(providerId: string, api: Api): boolean {
    return this.providerApis.get(providerId)?.has(api) === true;
  }

  /** The ZDR family id of a model, or "other" when its author is in none of the families. */
  familyOf(model: Model): string {
    for (const f of this.families) if (f.authors.includes(model.author)) return f.id;
    return "other";
  }

  /** Every family id including the literal "other", in wire order. */
  familyIds(): string[] {
    return [...this.families.map((f) => f.id), "other"];
  }
}

/** Checks the catalog's own consistency; returns a list of problems (empty when sound). */
export function checkCatalog(data: CatalogData): string[] {
  const problems: string[] = [];
  const providers = new Set<string>();
  for (const p of data.providers) {
    if (providers.has(p.id)) problems.push(`provider ${p.id} listed twice`);
    providers.add(p.id);
  }
  const familyIds = new Set<string>();
  for (const f of data.zdr_families) {
    if (!/^[a-z][a-z0-9_]*$/.test(f.id) || f.id === "other")
      problems.push(`zdr family id ${f.id} is not usable`);
    if (familyIds.has(f.id)) problems.push(`zdr family ${f.id} listed twice`);
    familyIds.add(f.id);
  }
  const former = new Set<string>();
  for (const f of data.zdr_families) {
    for (const old of f.formerly ?? []) {
      // A former id that is current, or former for two families, would give one stored flag two meanings.
      if (familyIds.has(old) || old === "other" || former.has(old))
        problems.push(`zdr family ${f.id}: former id ${old} is ambiguous`);
      former.add(old);
    }
  }
  const slugs = new Set<string>();
  for (const m of data.models) {
    // An alias naming two models, or another model's slug, would route a request to either.
    for (const s of new Set([m.slug, m.canonical_slug, ...(m.aliases ?? [])])) {
      if (slugs.has(s)) problems.push(`model slug ${s} is not unique`);
      slugs.add(s);
    }
    for (const e of m.endpoints) {
      if (!providers.has(e.provider)) problems.push(`model ${m.slug} names unknown provider ${e.provider}`);
    }
    // Only a chat model answers in output tokens; an embedding model produces none.
    if ((m.api ?? DEFAULT_API) !== "embeddings" && m.max_output_tokens < 1)
      problems.push(`model ${m.slug} allows no output tokens`);
  }
  return problems;
}
