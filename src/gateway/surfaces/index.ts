import { chatSurface } from "./chat/index.js";
import { embeddingsSurface } from "./embeddings/index.js";
import { messagesSurface } from "./messages/index.js";
import { responsesSurface } from "./responses/index.js";
import type { Surface } from "./surface.js";

export { chatSurface } from "./chat/index.js";
export { embeddingsSurface } from "./embeddings/index.js";
export { messagesSurface } from "./messages/index.js";
export { responsesSurface } from "./responses/index.js";
export type { Surface } from "./surface.js";

/**
 * Every governed API the service serves: a new one is its folder beside chat/ and one line here
 * (CONTRIBUTING.md#adding-a-surface).
 */
export const SURFACES: readonly Surface<object>[] = [
  chatSurface,
  embeddingsSurface,
  responsesSurface,
  messagesSurface,
];

/** The routes whose JSON bodies are forwarded to a provider, never stored (json-parser.ts). */
export const FORWARDED_ROUTES: ReadonlySet<string> = new Set(SURFACES.map((s) => s.route));
