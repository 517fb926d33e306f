import { parentPort } from "node:worker_threads";
import type { ChatText } from "../domain/chat-texts.js";
import { type ContentFilters, compileFilters, scanTexts } from "../domain/content-scan.js";
import { DETECTORS } from "../domain/detectors/index.js";
import { type ScanJob, type ScanReply, type ScanStarted, unpackTexts } from "./scan-pool.js";

/**
 * A scan worker (scan-pool.ts): compiles each policy's filters once, with the same function as the
 * event loop, and scans the texts it is sent with the shipped detectors.
 */

/** Compiled filters by spec key, least recently used first; a handful of policies are hot at a time. */
const compiled = new Map<string, ContentFilters>();
const MAX_COMPILED = 32;

function filtersFor(job: ScanJob): ContentFilters {
  let filters = compiled.get(job.key);
  if (filters) compiled.delete(job.key);
  else filters = compileFilters(job.spec, DETECTORS);
  compiled.set(job.key, filters);
  if (compiled.size > MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
  return filters;
}

function scan(job: ScanJob): ScanReply {
  try {
    // The scan reads a text's text, role, json, message and kind only, and hands the same objects back.
    const texts = unpackTexts(job.texts) as unknown as ChatText[];
    const filters = filtersFor(job);
    // The scan's time budget starts now, not while the filters compiled (scan-pool.ts).
    const started: ScanStarted = { id: job.id, started: true };
    parentPort?.postMessage(started);
    const result = scanTexts(filters, texts);
    const index = new Map(texts.map((t, i) => [t, i]));
    return {
      id: job.id,
      ok: true,
      hits: result.hits,
      block: result.block,
      replacements: result.replacements.map((r) => ({ index: index.get(r.text) as number, value: r.value })),
    };
  } catch (err) {
    return { id: job.id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

parentPort?.on("message", (job: ScanJob) => parentPort?.postMessage(scan(job)));
// Loaded: jobs may come, and their time budgets count from here.
parentPort?.postMessage("ready");
