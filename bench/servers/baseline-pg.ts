/**
 * The PostgreSQL baseline (bench/postgres.ts): a bare Fastify app whose POST inserts a guardrail-sized
 * row (the columns and JSON text of ./baseline-row.ts) with one prepared statement through a `pg`
 * pool of the service's default size, and whose PATCH updates one by id. No auth, validation, audit,
 * transaction or change notice. The database is BENCH_DATABASE_URL (an empty scratch database).
 */
import Fastify from "fastify";
import pg from "pg";
import { DEFAULT_POSTGRES_OPTIONS } from "../../src/storage/ports.js";
import { serveChild } from "../shared.js";
import { BASELINE_TABLE, type BaselineBody, insertRow, updateRow } from "./baseline-row.js";

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error("BENCH_DATABASE_URL is required");
const pool = new pg.Pool({ connectionString: url, max: DEFAULT_POSTGRES_OPTIONS.poolMax });
await pool.query(BASELINE_TABLE);

const INSERT = `
  INSERT INTO guardrails VALUES (
    $1, $2, $3, $4, $5, NULL, $6, NULL, NULL, NULL, $7, NULL, 0, 0, 1, $8, 0, $9, $10, 0, 1, $11, NULL
  )`;
const UPDATE = `
  UPDATE guardrails SET description = $2, allowed_models = $3, limit_micros = $4, reset_interval = $5,
    version = version + 1, updated_at = $6
  WHERE id = $1 RETURNING *`;

const app = Fastify({ logger: false });

app.post("/api/v1/guardrails", async (request, reply) => {
  const row = insertRow(request.body as BaselineBody);
  await pool.query({ name: "baseline-insert", text: INSERT, values: Object.values(row) });
  reply.code(201);
  return { data: row };
});

app.patch("/api/v1/guardrails/:id", async (request, reply) => {
  const values = Object.values(
    updateRow((request.params as { id: string }).id, request.body as BaselineBody),
  );
  const result = await pool.query({ name: "baseline-update", text: UPDATE, values });
  const row = result.rows[0];
  if (row === undefined) return reply.code(404).send({ error: { code: 404, message: "Not found" } });
  return { data: row };
});

const origin = await app.listen({ port: 0, host: "127.0.0.1" });

serveChild({ type: "ready", origin, key: null }, async () => {
  await app.close();
  await pool.end();
});
