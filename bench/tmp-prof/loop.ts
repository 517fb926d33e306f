import { PassThrough } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { startLocalUpstream } from "../../src/local-upstream/server.js";
import { eventData } from "../../src/gateway/relay.js";
import { ChunkReader } from "../../src/gateway/surfaces/chat/stream-chunks.js";
import { ChatToMessagesStream } from "../../src/gateway/surfaces/messages/translate-stream.js";
import { BENCH_PROMPT } from "../shared.js";
const up = await startLocalUpstream({ port: 0 });
const res = await fetch(`${up.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer x" }, body: JSON.stringify({ model: "m", stream: true, stream_options: { include_usage: true }, max_tokens: 200, messages: [{ role: "system", content: "You are a concise assistant." }, { role: "user", content: BENCH_PROMPT }] }) });
const raw = Buffer.from(await res.arrayBuffer());
await up.close();
const READ = Number(process.env.READ ?? 16384);
const pieces: Buffer[] = []; for (let i = 0; i < raw.length; i += READ) pieces.push(raw.subarray(i, i + READ));
const defaults = { id: "gen", created: 1, model: "m" };
function relay(reader: { read(d: string): { send: string | null } }): number {
  const out = new PassThrough({ highWaterMark: 1 << 20 }); let n = 0; out.on("data", (b: Buffer) => { n += b.length; });
  const decoder = new StringDecoder("utf8"); let buffer = "";
  for (const piece of pieces) {
    buffer = (buffer + decoder.write(piece)).replaceAll("\r\n", "\n");
    let reply = ""; let run = 0; let start = 0;
    for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n", start)) {
      const data = eventData(buffer.slice(start, at));
      const instead = data === "[DONE]" ? "" : reader.read(data).send;
      if (instead !== null) { reply += buffer.slice(run, start) + instead; run = at + 2; }
      start = at + 2;
    }
    reply += buffer.slice(run, start); buffer = buffer.slice(start);
    if (reply !== "") out.write(reply);
  }
  out.end(); return n;
}
const runs = { chat: () => relay(new ChunkReader(defaults, false)), msg: () => relay(new ChatToMessagesStream({} as never, defaults)) };
for (let round = 0; round < 6; round++) for (const [name, f] of Object.entries(runs)) {
  const t = process.cpuUsage(); for (let i = 0; i < 2000; i++) f(); const u = process.cpuUsage(t);
  if (round > 0) console.log(name, ((u.user + u.system) / 2000).toFixed(1), "µs/stream");
}
