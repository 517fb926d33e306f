/**
 * The baseline: a bare Fastify app whose POST inserts a guardrail-sized row (same columns, same JSON
 * text) with one prepared better-sqlite3 statement, and whose PATCH updates one by id. Same file
 * setup and pragmas as src/storage/sqlite/database.ts; no auth, validation, audit or transactions.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import Fastify from "fastify";
import { serveChild } from "../shared.js";
import { BASELINE_TABLE, type BaselineBody, insertRow, updateRow } from "./baseline-row.js";

const dir = mkdtempSync(join(tmpdir(), "guardrails-baseline-"));
const sqlite = new SqliteDatabase(join(dir, "baseline.db"));
sqlite.pragma("journal_mode = WAL");
sqlite.pragma("synchronous = NORMAL");
sqlite.pragma("foreign_keys = ON");
sqlite.pragma("busy_timeout = 5000");
sqlite.exec(BASELINE_TABLE);

const insert = sqlite.prepare(`
  INSERT INTO guardrails VALUES (
    @id, @organization_id, @workspace_id, @name, @description, NULL, @allowed_models, NULL, NULL, NULL,
    @content_filter_builtins, NULL, 0, 0, 1, @enforce_zdr, 0, @limit_micros, @reset_interval, 0, 1,
    @created_at, NULL
  )`);
const update = sqlite.prepare(`
  UPDATE guardrails SET description = @description, allowed_models = @allowed_models,
    limit_micros = @limit_micros, reset_interval = @reset_interval, version = version + 1,
    updated_at = @updated_at
  WHERE id = @id RETURNING *`);

const app = Fastify({ logger: false });

app.post("/api/v1/guardrails", async (request, reply) => {
  const row = insertRow(request.body as BaselineBody);
  insert.run(row);
  reply.code(201);
  return { data: row };
});

app.patch("/api/v1/guardrails/:id", async (request, reply) => {
  const row = update.get(updateRow((request.params as { id: string }).id, request.body as BaselineBody));
  if (row === undefined) return reply.code(404).send({ error: { code: 404, message: "Not found" } });
  return { data: row };
});

const origin = await app.listen({ port: 0, host: "127.0.0.1" });

serveChild({ type: "ready", origin, key: null }, async () => {
  await app.close();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});
