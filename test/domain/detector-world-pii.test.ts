import assert from "node:assert/strict";
import { describe, it } from "node:test";
import "../helpers/property-seed.js";
import { builtinLabel } from "../../src/domain/content-filters.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";
import {
  assertAtLeast,
  spanPrecision as precisionOf,
  spanRecall as recallOf,
  redactAll,
  type SpanScore,
  spanTable,
  wordsCovered,
} from "./detection-report.js";
import {
  type Case,
  GROUPS,
  generate,
  SLUGS,
  type Slug,
  type Templates,
} from "./detector-world-pii/generate.js";

/**
 * The pattern PII slugs (phone, email, credit-card, ip-address, ssn, secrets) by locale group and
 * context (docs/detectors.md#world-pii): values from @faker-js/faker's locales (the detectors take
 * nothing from faker) in our templates of support tickets, mail headers and signatures, JSON, CSV,
 * YAML, log lines, `.env` files and curl commands; hard negatives of each group (amounts, order,
 * invoice and tracking numbers, dates, times, versions, ISBNs, UUIDs, hashes, git SHAs, base64,
 * postcodes, placeholder secrets, public keys) in the same contexts. Every builtin runs on `redact`
 * and overlaps are labelled as the gateway labels them; a value is found only when every word of it
 * is redacted under its slug's label, and a redaction under a slug's label covering no value of that
 * slug is a false positive. The held-out part (its own seed and templates, written before the first
 * run) was never used for tuning: only its table is printed, never its misses.
 */

const development: Templates = {
  positives: {
    phone: [
      "Hi, I still can't log in since the update. Please call me back: {cue} {cv}",
      "Kind regards,\n{name}\nCustomer Success\n{cue} {cv}\nwww.example.com",
      '{"customer_id": 4471, "{key}": "{cv}", "plan": "pro"}',
      "contact:\n  {key}: {cv}\n  locale: en",
      "2026-11-27T09:12:44Z INFO sms queued to={v} status=accepted",
      "id,company,phone,plan\n1043,Acme,{v},pro",
      "SUPPORT_HOTLINE={v}",
      `curl -X POST https://api.example.com/v1/sms -d '{"to": "{v}", "body": "Your code is ready"}'`,
    ],
    email: [
      "Hello, please send the invoice to {v} instead of my old address.",
      "From: {name} <{v}>\nSubject: Refund for order 4471",
      "Best,\n{name}\n{v}\nSent from my phone",
      '{"user": {"email": "{v}", "verified": true}}',
      "id,name,email\n7,{name},{v}",
      "notify:\n  to: {v}\n  on: failure",
      '2026-11-27 08:01:12 WARN login failed user="{v}" attempts=3',
      "SMTP_USER={v}",
      `curl -u api: https://api.example.com/v3/messages -F to={v} -F subject=Hello`,
    ],
    "credit-card": [
      "My card {v} was charged twice for the same order, can you refund one?",
      '{"payment": {"card_number": "{v}", "exp": "09/28"}}',
      'order,card,amount\n4471,"{v}",19.99',
      "payment:\n  pan: {v}\n  holder: {name}",
      "2026-11-27T10:00:01Z ERROR charge declined card={v} reason=insufficient_funds",
      `curl https://pay.example.com/v1/charges -d number={v} -d amount=1999`,
    ],
    "ip-address": [
      "Our server at {v} stopped answering after the maintenance window.",
      '{"client_ip": "{v}", "status": 403}',
      "ts,ip,path\n1732700000,{v},/login",
      "allow:\n  - {v}\ndeny: all",
      "2026-11-27T09:12:44Z WARN blocked request from {v} path=/admin",
      "DB_HOST={v}",
      'curl -H "X-Forwarded-For: {v}" https://api.example.com/health',
    ],
    ssn: [
      "Please check {v} against the payroll record before Friday.",
      "My SSN: {cv}, date of birth on file.",
      '{"employee": 4471, "ssn": "{cv}"}',
      "{cv} is my SSN, please update the W-2.",
      "id,ssn,state\n88,{v},CA",
      "applicant:\n  ssn: {cv}\n  status: pending",
      '2026-11-27 INFO kyc ok ssn="{v}" score=0.97',
    ],
  },
  secrets: [
    "DB_PASSWORD={pw}",
    "OPENAI_API_KEY={tok}",
    'curl -H "Authorization: Bearer {tok}" https://api.example.com/v1/models',
    "DATABASE_URL=postgres://app:{pw}@db.internal.example.com:5432/app",
    "mysql://root:{pw}@mysql.example.com:3306/shop",
    "MONGO_URI=mongodb+srv://admin:{pw}@cluster0.example.mongodb.net/test?retryWrites=true",
    "redis://:{pw}@cache.example.com:6379/0",
    "amqp://guest:{pw}@mq.example.com:5672/",
    "Server=tcp:sql.example.com,1433;Database=shop;User Id=app;Password={pw};Encrypt=True;",
    "jdbc:postgresql://db.example.com:5432/app?user=app&password={pw}&ssl=true",
    "mysql -u root -p'{pw}' shop < dump.sql",
    "database:\n  user: app\n  password: {pw}\n  pool: 10",
    '{"client_id": "web-app", "client_secret": "{tok}"}',
  ],
  prose: ["Hi, I can't get into the admin panel, my password is {pw} if that helps."],
  negatives: [
    "Hi, order {order} was charged {amount} on {date} at {time}, tracking number {tracking}.",
    "Kind regards\nBilling team\nInvoice {invoice} | {date}\nTotal due: {amount}",
    '{"order_id": "{order}", "amount": "{amount}", "created": "{date} {time}", "request_id": "{uuid}"}',
    'invoice,date,total,postcode\n{invoice},{date},"{amount}",{postcode}',
    "release:\n  version: {version}\n  commit: {sha}\n  checksum: sha256:{hash}",
    "2026-11-27T09:12:44Z INFO build={version} commit={sha} request_id={uuid} took=1432ms",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder an .env file writes
    "DB_PASSWORD=changeme\nAPI_KEY=${API_KEY}\nOPENAI_API_KEY=<your key>\nAPP_VERSION={version}",
    'curl -H "X-Request-Id: {uuid}" "https://api.example.com/v1/orders/{order}?since={date}"',
    "The book (ISBN {isbn}) costs {amount}, shipping {tracking}.",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64} deploy@ci",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{b64}\n-----END PUBLIC KEY-----",
    '{"avatar": "data:image/png;base64,{b64}", "etag": "{hash}", "zip": "{postcode}"}',
  ],
};

const heldOut: Templates = {
  positives: {
    phone: [
      "Could someone ring me today about the delivery? {cue} {cv}",
      "Thanks,\n{name}\n{cue} {cv}",
      '[{"type": "mobile", "{key}": "{cv}"}]',
      "owner:\n  name: {name}\n  {key}: {cv}",
      'level=warn msg="callback requested" number="{v}"',
      "ref;phone;country\n88;{v};XX",
      'curl https://api.example.com/calls --data-urlencode "to={v}"',
    ],
    email: [
      "Can you add {v} to the shared mailbox? Thanks.",
      "Reply-To: {name} <{v}>\nDate: Fri, 27 Nov 2026 09:12:44 +0100",
      '[{"id": 3, "contact": "{v}"}]',
      "ref;mail;tier\n3;{v};gold",
      'level=info msg="invite sent" to={v}',
      "ADMIN_EMAIL={v}",
    ],
    "credit-card": [
      "Please remove the saved card {v} from my account.",
      '{"pan": "{v}", "cvc_checked": true}',
      "txn;card;eur\n991;{v};45,00",
      'level=error msg="refund failed" card="{v}"',
    ],
    "ip-address": [
      "The VPN gives me {v} but the firewall still drops it.",
      '[{"addr": "{v}", "port": 443}]',
      "upstream:\n  host: {v}\n  port: 8080",
      'level=info msg="connected" remote={v}',
      "curl --interface {v} https://example.com/",
    ],
    ssn: [
      "The form shows {v}, is that right?",
      "social security number {cv} on the application",
      "ssn: {cv}",
      "{cv} (SSN) for the background check",
    ],
  },
  secrets: [
    "export GITHUB_TOKEN={tok}",
    "STRIPE_SECRET_KEY={tok}",
    "psql postgresql://report:{pw}@warehouse.example.com/analytics",
    "amqps://worker:{pw}@rabbit.example.com/vhost",
    "Data Source=db.example.com;Initial Catalog=crm;User ID=sa;Pwd={pw};",
    "mysqldump -h db.example.com -u backup -p{pw} crm",
    'smtp:\n  host: mail.example.com\n  password: "{pw}"',
    '{"service": "billing", "api_key": "{tok}"}',
    'curl https://api.example.com/v2/me -H "Authorization: Bearer {tok}"',
  ],
  prose: ["fyi the staging db password is {pw}, please rotate it after the demo"],
  negatives: [
    "Your refund of {amount} for order {order} was issued on {date}.",
    'level=info msg="deploy done" version={version} sha={sha} at={time}',
    "isbn;title;price\n{isbn};Handbook;{amount}",
    '{"id": "{uuid}", "sha256": "{hash}", "postcode": "{postcode}"}',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder an .env file writes
    "PASSWORD=<your key>\nSECRET_KEY=${SECRET_KEY}\nTOKEN=changeme",
    "artifact:\n  digest: {hash}\n  payload: {b64}",
    "Parcel {tracking} left the depot at {time}, invoice {invoice}.",
    'curl "https://api.example.com/v1/invoices/{invoice}?from={date}" -H "If-None-Match: {sha}"',
  ],
};

/**
 * Slug and group pairs below the floors, with the figure measured when that was written down: the
 * test holds them to it less 0.02 (docs/detectors.md#world-pii).
 */
const MEASURED: Partial<Record<string, { recall?: number; precision?: number }>> = {};

const FLOOR = 0.95;

interface Score extends SpanScore {
  group: string;
  slug: Slug;
  misses: string[];
  wrong: string[];
}

function score(cases: Case[]): Score[] {
  const scores = new Map<string, Score>();
  for (const g of GROUPS)
    for (const slug of SLUGS)
      scores.set(`${g.name}|${slug}`, {
        group: g.name,
        slug,
        name: g.name,
        values: 0,
        found: 0,
        predicted: 0,
        falsePositives: 0,
        misses: [],
        wrong: [],
      });
  for (const c of cases) {
    const spans = redactAll(c.text);
    for (const e of c.entities) {
      const s = scores.get(`${c.group}|${e.slug}`) as Score;
      s.values++;
      const label = builtinLabel(e.slug);
      const covered = wordsCovered(c.text, e.start, e.end, {
        word: /[\p{L}\p{N}]+/u,
        affixes: new Set(),
        covers: (a, b) => spans.some((x) => x.label === label && x.start <= a && x.end >= b),
      });
      if (covered) s.found++;
      else s.misses.push(`${c.text.slice(e.start, e.end)}  in  ${JSON.stringify(c.text)}`);
    }
    for (const span of spans) {
      const slug = SLUGS.find((x) => builtinLabel(x) === span.label);
      if (slug === undefined) continue;
      const s = scores.get(`${c.group}|${slug}`) as Score;
      s.predicted++;
      if (!c.entities.some((e) => e.slug === slug && e.start < span.end && span.start < e.end)) {
        s.falsePositives++;
        s.wrong.push(`${c.text.slice(span.start, span.end)}  in  ${JSON.stringify(c.text)}`);
      }
    }
  }
  return [...scores.values()];
}

for (const [part, templates, seed, rounds] of [
  ["development", development, 11, 3],
  ["held-out", heldOut, 20261128, 3],
] as const) {
  describe(`pattern PII slugs by locale group, ${part} part (docs/detectors.md#world-pii)`, () => {
    const rows = score(generate(templates, seed, rounds));
    const show = part === "development";
    it("prints recall and precision per slug and locale group", () => {
      for (const slug of SLUGS)
        console.log(
          `\n${spanTable(
            `${part}: ${slug}`,
            "group",
            rows.filter((r) => r.slug === slug && (r.values > 0 || r.predicted > 0)),
          )}`,
        );
      assert.ok(rows.filter((r) => r.slug !== "ssn").every((r) => r.values > 0));
    });
    for (const r of rows) {
      const known = MEASURED[`${part}:${r.slug}:${r.group}`];
      const recallFloor = known?.recall !== undefined ? known.recall - 0.02 : FLOOR;
      const precisionFloor = known?.precision !== undefined ? known.precision - 0.02 : FLOOR;
      it(`${r.slug}, ${r.group}: recall at least ${recallFloor.toFixed(2)}, precision at least ${precisionFloor.toFixed(2)}${known ? " (below floor, measured)" : ""}`, () => {
        assertAtLeast(
          "recall",
          recallOf(r),
          recallFloor,
          show ? `; missed, for example:\n${r.misses.slice(0, 12).join("\n")}` : "",
        );
        assertAtLeast(
          "precision",
          precisionOf(r),
          precisionFloor,
          show ? `; wrongly redacted, for example:\n${r.wrong.slice(0, 12).join("\n")}` : "",
        );
      });
    }
  });
}

describe("phone forms the world evaluation found (docs/detectors.md#world-pii)", () => {
  const found = (text: string) => DETECTORS.phone(text).map((s) => text.slice(s.start, s.end));
  it("reads Portugal's telemóvel as a cue and an eight-digit trunk number after a cue", () => {
    assert.deepEqual(found("Telemóvel: 936 611 704"), ["936 611 704"]);
    assert.deepEqual(found('{"telefon": "029-725 12"}'), ["029-725 12"]);
    assert.deepEqual(found("Tel. 08-725 12 34"), ["08-725 12 34"]);
  });
  it("reads a slash after the area code and the dotted pairs of France and Belgium", () => {
    assert.deepEqual(found("Telefon: 0711/1234567"), ["0711/1234567"]);
    assert.deepEqual(found("Portable : 06.12.34.56.78"), ["06.12.34.56.78"]);
    assert.deepEqual(found("Tél. : 0470/12.34.56"), ["0470/12.34.56"]);
    assert.deepEqual(found("Tel : 09/223.45.67"), ["09/223.45.67"]);
  });
  it("reads an international number whose national part is one group", () => {
    assert.deepEqual(found("to=+49 15112345678 status=ok"), ["+49 15112345678"]);
    assert.deepEqual(found("HOTLINE=+353 477062158"), ["+353 477062158"]);
  });
  it("leaves dotted dates and times, and dates with slashes", () => {
    assert.deepEqual(found("Termin am 05.11.2026 14.30 Uhr"), []);
    assert.deepEqual(found("Telefon: 05.11.2026"), []);
    assert.deepEqual(found("valid 02/03/2026 to 2026/02/03"), []);
  });
  it("leaves an eight-digit trunk number without a cue, and a date followed by a time", () => {
    assert.deepEqual(found("lot 029-725 12 is ready"), []);
    assert.deepEqual(found('"created": "06-06-2027 21:14"'), []);
    assert.deepEqual(found("due 04-08-2021 01:57, see ticket"), []);
  });
});
