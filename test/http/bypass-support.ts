import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A provider that records every byte it receives (a party outside the project, so a fake, and a
 * real HTTP server): the bypass tests read what reached it as raw text, never through JSON.parse,
 * which would hide a duplicated key's first copy (docs/behaviour.md#what-reaches-the-provider).
 */
export interface RecordingProvider {
  url: string;
  /** Every request body received, as raw text, oldest first. */
  bodies: string[];
  close(): Promise<void>;
}

export async function startRecordingProvider(): Promise<RecordingProvider> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      bodies.push(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "chatcmpl-recorded",
          object: "chat.completion",
          created: 1,
          model: "recorded",
          choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Answer {
  status: number;
  text: string;
}

/**
 * A POST of a raw JSON text. `chunked` sends it without a Content-Length, which the direct chat
 * path leaves to the app (docs/gateway.md#request-handling): the same request reaches both doors.
 */
export function postRaw(
  origin: string,
  path: string,
  key: string,
  text: string,
  chunked: boolean,
): Promise<Answer> {
  const { port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          ...(chunked ? {} : { "content-length": Buffer.byteLength(text) }),
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: body }));
      },
    );
    req.on("error", reject);
    if (chunked) {
      // Two writes, so the body really arrives in chunks.
      const half = Math.floor(text.length / 2);
      req.write(text.slice(0, half));
      req.end(text.slice(half));
    } else req.end(text);
  });
}

/** Every JSON string literal of a raw JSON text, decoded, in order, duplicates included. */
export function stringsOf(raw: string): string[] {
  const out: string[] = [];
  for (const m of raw.matchAll(/"(?:[^"\\]|\\.)*"/g)) out.push(JSON.parse(m[0]) as string);
  return out;
}

// \p{M} covers U+034F and the variation selectors.
const ZERO_WIDTH = /\p{Cf}|\p{M}/gu;

/**
 * What a reader could recover of a text: decoded from every encoding a hiding place might use
 * (HTML entities, base64 and percent-encoded data: URLs, UTF-16), folded to its compatibility
 * form, with format characters and combining marks removed, digits of any script made ASCII and
 * lower-cased; then only letters and digits are kept. A value that reached the provider in any of
 * the bypass tests' disguises shows up in this skeleton.
 */
export function skeleton(texts: string[]): string {
  const decoded: string[] = [];
  for (const t of texts) {
    decoded.push(t);
    for (const m of t.matchAll(/data:[^,]{0,200},([\s\S]*)/gi)) {
      const payload = m[1] as string;
      const b64 = payload.replace(/\s+/g, "").replaceAll("-", "+").replaceAll("_", "/");
      const bytes = Buffer.from(b64, "base64");
      decoded.push(bytes.toString("utf8"), bytes.toString("utf16le"), swapped(bytes));
      try {
        decoded.push(decodeURIComponent(payload));
      } catch {
        decoded.push(payload);
      }
    }
  }
  const joined = decoded
    .join("\n")
    .replace(/&#x([0-9a-f]+);?/gi, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);?/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&commat;/gi, "@")
    .replace(/&period;/gi, ".")
    .normalize("NFKD")
    .replace(ZERO_WIDTH, "")
    .replace(/\p{Nd}/gu, (d) => String(digitValue(d)))
    .toLowerCase();
  return joined.replace(/[^a-z0-9]/g, "");
}

function swapped(bytes: Buffer): string {
  const copy = Buffer.from(bytes);
  if (copy.length % 2 === 1) return "";
  return copy.swap16().toString("utf16le");
}

/** The value of a decimal digit of any script: the code point's offset in its run of ten. */
function digitValue(d: string): number {
  const cp = d.codePointAt(0) as number;
  for (let zero = cp; zero > cp - 10; zero--) {
    if (!/\p{Nd}/u.test(String.fromCodePoint(zero - 1))) return cp - zero;
  }
  return 0;
}

/** Whether any run of `width` characters of the value's skeleton appears in the received skeleton. */
export function leaks(received: string, value: string, width = 6): string | undefined {
  const v = skeleton([value]);
  for (let i = 0; i + width <= v.length; i++) {
    const run = v.slice(i, i + width);
    if (received.includes(run)) return run;
  }
  return undefined;
}
