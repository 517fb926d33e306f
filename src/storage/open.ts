import { type DatabaseHandle, type DatabaseOptions, DEFAULT_POSTGRES_OPTIONS } from "./ports.js";
import { openPostgres } from "./postgres/database.js";
import { openSqlite } from "./sqlite/database.js";

/** Parses DATABASE_URL: a path, `sqlite:<path>`, or a `postgres://` / `postgresql://` address. */
export function parseDatabaseUrl(
  url: string,
): { kind: "sqlite"; path: string } | { kind: "postgres"; url: string } {
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) return { kind: "postgres", url };
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
  if (path.length === 0) throw new Error("DATABASE_URL names no SQLite file");
  return { kind: "sqlite", path };
}

/** Opens (and migrates) the database DATABASE_URL names, with the adapter its address calls for. */
export async function openDatabase(url: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  const target = parseDatabaseUrl(url);
  if (target.kind === "postgres")
    return openPostgres(target.url, options.postgres ?? DEFAULT_POSTGRES_OPTIONS);
  return openSqlite(target.path, options.sqliteSynchronous, options.server === true);
}
