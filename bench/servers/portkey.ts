/**
 * The peer path of the gateway bench: Portkey's open-source gateway (`@portkey-ai/gateway` from npm,
 * a devDependency), started from its own Node entry in this process, so the bench reads its CPU
 * time the way it reads ours. It is configured per request, as its documentation describes, by the
 * `x-portkey-config` header this child hands the bench: the OpenAI provider with `custom_host` set
 * to BENCH_UPSTREAM_URL, and with BENCH_PORTKEY_GUARDRAILS=1 one `default.regexMatch` input
 * guardrail with `deny` per pattern of ../shared.ts (`not: true`: a match fails the check and the
 * request is refused), the closest it has to our custom patterns on block.
 */
import { createServer } from "node:net";
import { BENCH_PATTERNS, serveChild } from "../shared.js";

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
if (!upstreamUrl) throw new Error("BENCH_UPSTREAM_URL is required");
const guarded = process.env.BENCH_PORTKEY_GUARDRAILS === "1";

/** Its entry takes a port on the command line, not 0; a free one is asked of the system first. */
const port = await new Promise<number>((done, fail) => {
  const probe = createServer();
  probe.once("error", fail);
  probe.listen(0, "127.0.0.1", () => {
    const { port: free } = probe.address() as { port: number };
    probe.close(() => done(free));
  });
});
process.argv.push(`--port=${port}`, "--headless");
// The package's bin: it starts listening while it is imported. A resolved URL, since the package
// ships no type declarations for TypeScript to check an import of its name against.
await import(import.meta.resolve("@portkey-ai/gateway/build/start-server.js"));

const config = {
  provider: "openai",
  api_key: "bench",
  custom_host: upstreamUrl,
  ...(guarded
    ? {
        input_guardrails: BENCH_PATTERNS.map((rule) => ({
          "default.regexMatch": { rule, not: true },
          deny: true,
        })),
      }
    : {}),
};
const origin = `http://127.0.0.1:${port}`;
serveChild(
  { type: "ready", origin, key: null, headers: { "x-portkey-config": JSON.stringify(config) } },
  async () => {
    // Its entry keeps the server to itself; the process ends with the bench's stop.
  },
);
