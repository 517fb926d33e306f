import { AppError, ERROR_CODES, type Issue } from "../domain/errors.js";

/**
 * The one output convention of every command (README, Command line). A command has one result,
 * shaped like the HTTP API's answer for the same thing; `--json` prints it as it is, on one line,
 * and without `--json` it is rendered for a person. stdout carries only the result; notes and
 * errors go to stderr, so `$(guardrails ...)` captures exactly the result.
 */

export interface Out {
  stdout(text: string): void;
  stderr(text: string): void;
}

export const processOut: Out = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** A misuse of the command line: exit code 2, and a 400-shaped error with --json. */
export class UsageError extends Error {
  constructor(
    readonly issues: Issue[],
    readonly usage?: string,
  ) {
    super(issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; "));
  }
}

type Row = Record<string, unknown>;

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.length === 0 ? "-" : value.map(cell).join(",");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** A table with a header row; columns are padded to their widest cell. */
export function table(rows: Row[], columns: { key: string; title: string }[]): string {
  const cells = [columns.map((c) => c.title), ...rows.map((r) => columns.map((c) => cell(r[c.key])))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => (line[i] ?? "").length)));
  return cells
    .map((line) =>
      line
        .map((text, i) => (i === line.length - 1 ? text : text.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}

/** One object as `field: value` lines, fields aligned. */
export function fields(object: Row): string {
  const width = Math.max(...Object.keys(object).map((k) => k.length));
  return Object.entries(object)
    .map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${cell(v)}\n`)
    .join("");
}

export function printJson(out: Out, value: unknown): void {
  out.stdout(`${JSON.stringify(value)}\n`);
}

/** The error body of the HTTP API for any failure, so scripts read one shape from both. */
export function errorBody(err: unknown): { error: { code: number; message: string; metadata?: unknown } } {
  if (err instanceof UsageError) {
    return {
      error: { code: 400, message: ERROR_CODES.invalid_request.message, metadata: { issues: err.issues } },
    };
  }
  if (err instanceof AppError) {
    return {
      error: {
        code: err.status,
        message: err.message,
        ...(err.metadata !== undefined ? { metadata: err.metadata } : {}),
      },
    };
  }
  return { error: { code: 500, message: err instanceof Error ? err.message : String(err) } };
}

/** The same failure in one line for a person. */
export function describeError(err: unknown): string {
  if (err instanceof AppError) {
    const issues = (err.metadata?.issues as Issue[] | undefined) ?? [];
    const details = issues.map((i) => `${i.path.replace(/^\//, "") || "input"}: ${i.message}`);
    const reason = typeof err.metadata?.reason === "string" ? [err.metadata.reason] : [];
    // A refusal that says what to do instead (the last management key) says it on the command line too.
    const hint = typeof err.metadata?.hint === "string" ? [err.metadata.hint] : [];
    return [err.message, ...reason, ...details, ...hint].join("; ");
  }
  return err instanceof Error ? err.message : String(err);
}
