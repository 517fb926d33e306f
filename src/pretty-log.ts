/**
 * Human log lines for a terminal. pino writes one JSON object per line; this stream turns each into
 * `time LEVEL message key=value ...`; a request's line (the service writes one, when it completes)
 * reads `method path → status duration`. What reaches it was already redacted by the logger.
 */

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: "TRACE", color: "90" },
  20: { name: "DEBUG", color: "36" },
  30: { name: "INFO ", color: "32" },
  40: { name: "WARN ", color: "33" },
  50: { name: "ERROR", color: "31" },
  60: { name: "FATAL", color: "35" },
};

/** Fields every line has, or that a request line already shows in its own words. */
const SHOWN = new Set(["level", "time", "pid", "hostname", "msg", "reqId", "req", "res", "responseTime"]);

export interface PrettyOptions {
  color: boolean;
  write: (text: string) => void;
}

function clock(time: unknown): string {
  const date = typeof time === "number" ? new Date(time) : new Date();
  return date.toISOString().slice(11, 23);
}

function value(v: unknown): string {
  if (typeof v === "string") return /[\s"=]/.test(v) || v === "" ? JSON.stringify(v) : v;
  return JSON.stringify(v) ?? String(v);
}

export function prettyLogStream(options: PrettyOptions): { write(line: string): void } {
  const paint = (code: string, text: string) => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  return {
    write(line: string) {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        options.write(line.endsWith("\n") ? line : `${line}\n`);
        return;
      }
      const reqId = typeof entry.reqId === "string" ? entry.reqId : undefined;
      const req = entry.req as { method?: string; url?: string } | undefined;
      const level = LEVELS[entry.level as number] ?? { name: String(entry.level), color: "0" };
      let message = typeof entry.msg === "string" ? entry.msg : "";
      const res = entry.res as { statusCode?: number } | undefined;
      if (entry.msg === "request completed" && reqId) {
        const what = req ? `${req.method ?? "?"} ${req.url ?? "?"}` : "request";
        const status = res?.statusCode ?? 0;
        const ms = typeof entry.responseTime === "number" ? ` ${entry.responseTime.toFixed(1)} ms` : "";
        const statusText =
          status >= 500
            ? paint("31", String(status))
            : status >= 400
              ? paint("33", String(status))
              : String(status);
        message = `${what} → ${statusText}${ms}`;
      }
      const rest = Object.entries(entry)
        .filter(([k]) => !SHOWN.has(k))
        .map(([k, v]) => `${paint("90", `${k}=`)}${value(v)}`);
      const id = reqId ? paint("90", ` ${reqId.slice(0, 8)}`) : "";
      options.write(
        `${paint("90", clock(entry.time))} ${paint(level.color, level.name)} ${message}${rest.length ? ` ${rest.join(" ")}` : ""}${id}\n`,
      );
    },
  };
}
