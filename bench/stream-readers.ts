/**
 * Benchmark: the stream readers alone, in one process, on the answer the bench upstream streams (the
 * 2,000-character echo of bench/shared.ts's prompt, a word an event): chat's chunk reader, the
 * Messages reader of a native provider's events, and the chat stream translated to Messages, each
 * event's data taken by the relay's own `eventData`. The CPU per stream of each, measured in turns
 * in the same process, so their ratios hold on a machine whose load moves (bench/README.md#stream-readers).
 * A report: exits 0.
 */
import { eventData } from "../src/gateway/relay.js";
import { ChunkReader } from "../src/gateway/surfaces/chat/stream-chunks.js";
import { MessagesEventReader } from "../src/gateway/surfaces/messages/answer.js";
import { ChatToMessagesStream } from "../src/gateway/surfaces/messages/translate-stream.js";
import { BENCH_PROMPT, CHAT_ONLY_MODEL } from "./shared.js";

const STREAMS = Math.max(100, Math.round(Number(process.env.BENCH_STREAMS ?? 2000)));
const ROUNDS = 5;

const text = `Echo: ${BENCH_PROMPT.slice(0, 2000)}`;
// As the bench upstream (src/local-upstream/server.ts) splits its answer: a word an event.
const pieces = text.split(/(?<= )/);
const chatEvents = pieces.map(
  (p) =>
    `data: ${JSON.stringify({
      id: "chatcmpl-local",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: CHAT_ONLY_MODEL,
      choices: [{ index: 0, delta: { content: p }, finish_reason: null }],
    })}`,
);
const messagesEvents = pieces.map(
  (p) =>
    `event: content_block_delta\ndata: ${JSON.stringify({
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: p },
    })}`,
);
const defaults = { id: "gen-bench", created: 1_700_000_000, model: CHAT_ONLY_MODEL };

const readers: { name: string; run: () => number }[] = [
  {
    name: "chat (chunk reader)",
    run: () => {
      const reader = new ChunkReader(defaults, false);
      let bytes = 0;
      for (const e of chatEvents) bytes += reader.read(eventData(e)).contentBytes;
      return bytes;
    },
  },
  {
    name: "messages, native events",
    run: () => {
      const reader = new MessagesEventReader(defaults);
      let bytes = 0;
      for (const e of messagesEvents) bytes += reader.read(eventData(e)).contentBytes;
      return bytes;
    },
  },
  {
    name: "messages, translated from chat",
    run: () => {
      const reader = new ChatToMessagesStream({ model: CHAT_ONLY_MODEL }, defaults);
      let sent = 0;
      for (const e of chatEvents) sent += reader.read(eventData(e)).send?.length ?? 0;
      return sent + reader.end().length;
    },
  },
];

const cpu = new Map<string, number[]>(readers.map((r) => [r.name, []]));
let sink = 0;
for (const r of readers) for (let i = 0; i < 200; i++) sink += r.run();
for (let round = 0; round < ROUNDS; round++) {
  for (const r of round % 2 === 0 ? readers : [...readers].reverse()) {
    const start = process.cpuUsage();
    for (let i = 0; i < STREAMS; i++) sink += r.run();
    const used = process.cpuUsage(start);
    cpu.get(r.name)?.push((used.user + used.system) / STREAMS);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const chat = median(cpu.get(readers[0]?.name ?? "") ?? []);
console.log(
  `stream readers: ${pieces.length} events a stream, ${STREAMS} streams × ${ROUNDS} rounds (${sink > 0})`,
);
console.log("reader                            CPU µs/stream  ÷chat");
for (const r of readers) {
  const m = median(cpu.get(r.name) ?? []);
  console.log(`${r.name.padEnd(32)} ${m.toFixed(1).padStart(14)}  ${(m / chat).toFixed(2).padStart(5)}`);
}
