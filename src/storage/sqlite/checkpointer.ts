import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * Moves SQLite's WAL checkpoints off the event loop. By default the connection that commits also
 * copies the WAL back into the database (and fsyncs it) every 1000 pages, stalling every request
 * queued behind that commit. A worker thread with its own connection checkpoints passively instead
 * (it never blocks writers); the main connection keeps a far larger automatic checkpoint as a
 * backstop, so the WAL stays bounded even if the worker stops.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma("busy_timeout = 1000");
let stopped = false;
parentPort.on("message", () => { stopped = true; });
function tick() {
  if (stopped) { db.close(); parentPort.postMessage("closed"); return; }
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch {}
  setTimeout(tick, workerData.intervalMs);
}
tick();
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(file: string, intervalMs = 50): Checkpointer {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver, intervalMs } });
  // The process may exit without waiting for it: it holds no state of its own.
  worker.unref();
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        const done = () => resolve();
        worker.once("message", () => void worker.terminate().then(done, done));
        worker.once("error", done);
        worker.once("exit", done);
        worker.postMessage("stop");
      });
      return stopping;
    },
  };
}
