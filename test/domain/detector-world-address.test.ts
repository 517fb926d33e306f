import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtinLabel } from "../../src/domain/content-filters.js";
import { findAddresses } from "../../src/domain/detectors/address.js";
import type { LabelledSpan } from "../../src/domain/overlaps.js";
import { redactAll } from "./detection-report.js";
import { type Case, type Contexts, GROUPS, type Group, generate } from "./detector-world-address/generate.js";

/**
 * Addresses of 26 countries by locale group (docs/detectors.md#address-countries), in the contexts
 * real prompts carry them. Every builtin runs on `redact` and overlaps are labelled as the gateway
 * labels them; an address counts as found only when every word of it (street, number, unit,
 * postcode, place, region, a trailing country) is redacted as `[ADDRESS]`; an `[ADDRESS]` redaction
 * that touches no address is a false positive. The development part was used while building the
 * detector; the held-out part (another seed, other context templates) never was: only its table is
 * read, never its misses.
 */

const development: Contexts = {
  positives: [
    "Hi, please update my shipping address to {} before the next order. Thanks!",
    "Kind regards,\nCustomer Support\n{ml}\n",
    "{ml}\n\nDear customer,\nyour order has shipped.",
    '{"customer_id": 4471, "address": "{}", "tier": "gold"}',
    'id,company,address,plan\n1043,Acme,"{}",pro',
    'shipping:\n  address: "{}"\n  method: express',
    '2026-11-27T09:12:44Z INFO geocode ok address="{}" latency=12ms',
    `curl -X POST https://api.example.com/v1/customers -d '{"address": "{}"}'`,
  ],
  negatives: [
    "Total due: 1,250.00 EUR, invoice 2026-0042, paid on 12.03.2026.",
    "Order {n} shipped on 2026-03-15 at 14:30.",
    "We upgraded to version 2.14.3 and build 4471 passed.",
    "See Section 12 and Table 3 of the {n} contract.",
    "The {n} team grew to 1200 people in 2025.",
    "SKU 4471-BX and part 00-950 are back in stock.",
    "Meeting in Room 204 at 10:15, then flight LH 1234 to {n}.",
    '{"order_id": 10023, "amount": 1500, "currency": "EUR", "city": "{n}"}',
    "2026-11-27T09:12:44Z WARN retry=3 status=503 region=eu-west-1 item={n}",
    "We sold 1500 units in {n} last quarter, up 12 % on 2024.",
    "7-Eleven and 3M Company reported Q3 2025 results; 20th Century Fox too.",
    "Call between 9:00 and 17:30, ticket #48213, priority 2.",
    "Results, 2024 Berlin Marathon: 2:01:09, then 1500 Runners finished.",
    "Chapter 4, 1200 Copenhagen residents replied to survey 2026-11.",
    "Room 12, 2500 Guests expected; Model 3, 2023 Tesla on display.",
    "Mix 2 cups flour, 1500 Calories a day, 150 g sugar.",
    "Phone +48 22 123 45 67, fax 123 45 678, ext. 2000 Sales.",
    "Between 1990 and 2010 {n} grew by 12.5 %, see figure 4-12.",
    "Lot 12-345, batch 1015 CJ, pallet 110 00 in bay 7.",
    '{"sku": "4471-120", "qty": 12, "warehouse": "{n}", "eta": "2026-12-01"}',
  ],
};

const heldOut: Contexts = {
  positives: [
    "Could you send the replacement to {} instead? The old place is closed.",
    "Best,\nThe billing team\n{ml}\nwww.example.com",
    "Invoice to:\n{ml}\nPayment within 30 days.",
    '{"shipTo": {"line": "{}", "country_code": "XX"}, "items": 3}',
    'ref;name;addr\n88;Orbit GmbH;"{}"',
    "billing_address: {}\nvat: exempt",
    'level=info msg="address changed" addr="{}" user=8812',
    'curl https://maps.example.com/geocode --data-urlencode "q={}"',
  ],
  negatives: [
    "Payment of 3.499,00 EUR received on 01.02.2026 for order 77812.",
    "The {n} release 4.2 ships 12 fixes; see chapter 7.",
    'items: [{"sku": "AB-1203", "qty": 12}, {"sku": "CX-9911", "qty": 3}]',
    "Our 2026 roadmap for {n} has 3 phases and 14 milestones.",
    "ERROR 2026-11-27 08:01:12 worker-7 job=5512 took 1430 ms",
    "Flight 2207 to {n} boards at gate 4, seat 12C.",
  ],
};

/**
 * Groups below the floor, with the figure measured when that was written down: the test holds them
 * to it (less 0.02) instead of the floor (docs/detectors.md#address-countries).
 */
const KNOWN_BELOW: Partial<Record<string, { recall: number }>> = {};

const RECALL_FLOOR = 0.9;
const PRECISION_FLOOR = 0.95;
const LABEL = builtinLabel("address");

function covered(spans: LabelledSpan[], start: number, end: number, text: string): boolean {
  const words = /[\p{L}\p{N}]+/gu;
  const value = text.slice(start, end);
  for (let m = words.exec(value); m !== null; m = words.exec(value)) {
    const a = start + m.index;
    const b = a + m[0].length;
    if (!spans.some((s) => s.label === LABEL && s.start <= a && s.end >= b)) return false;
  }
  return true;
}

interface Row {
  group: Group;
  values: number;
  found: number;
  predicted: number;
  falsePositives: number;
  misses: string[];
  wrong: string[];
}

function score(cases: Case[]): Row[] {
  const rows = new Map<Group, Row>();
  for (const g of Object.keys(GROUPS) as Group[])
    rows.set(g, { group: g, values: 0, found: 0, predicted: 0, falsePositives: 0, misses: [], wrong: [] });
  for (const c of cases) {
    const row = rows.get(c.group) as Row;
    const spans = redactAll(c.text);
    if (c.entity !== null) {
      row.values++;
      if (covered(spans, c.entity.start, c.entity.end, c.text)) row.found++;
      else row.misses.push(JSON.stringify(c.text));
    }
    for (const s of spans) {
      if (s.label !== LABEL) continue;
      row.predicted++;
      const e = c.entity;
      if (e === null || !(e.start < s.end && s.start < e.end)) {
        row.falsePositives++;
        row.wrong.push(`${JSON.stringify(c.text.slice(s.start, s.end))} in ${JSON.stringify(c.text)}`);
      }
    }
  }
  return [...rows.values()];
}

const recallOf = (r: Row) => (r.values === 0 ? 1 : r.found / r.values);
const precisionOf = (r: Row) => (r.predicted === 0 ? 1 : (r.predicted - r.falsePositives) / r.predicted);

function table(title: string, rows: Row[]): string {
  const lines = rows.map((r) => {
    const known = KNOWN_BELOW[`${title}:${r.group}`];
    return [
      r.group.padEnd(12),
      String(r.values).padStart(6),
      recallOf(r).toFixed(3).padStart(7),
      precisionOf(r).toFixed(3).padStart(10),
      String(r.predicted).padStart(10),
      known ? `  below floor, known (${known.recall.toFixed(2)})` : "",
    ].join(" ");
  });
  return [title, "group         n     recall  precision  predicted", ...lines].join("\n");
}

for (const [part, contexts, seed, rounds] of [
  ["development", development, 7, 4],
  ["held-out", heldOut, 20261127, 4],
] as const) {
  describe(`world addresses by locale group, ${part} part (docs/detectors.md#address-countries)`, () => {
    const rows = score(generate(contexts, seed, rounds));
    it("prints recall and precision per locale group", () => {
      console.log(`\n${table(part, rows)}\n`);
      assert.ok(rows.every((r) => r.values > 0));
    });
    for (const r of rows) {
      const known = KNOWN_BELOW[`${part}:${r.group}`];
      const floor = known ? known.recall - 0.02 : RECALL_FLOOR;
      it(`${r.group}: recall at least ${floor.toFixed(2)}${known ? " (below floor, known)" : ""}, precision at least ${PRECISION_FLOOR}`, () => {
        const show = part === "development";
        assert.ok(
          recallOf(r) >= floor,
          `recall ${recallOf(r).toFixed(3)}${show ? `; missed, for example:\n${r.misses.slice(0, 12).join("\n")}` : ""}`,
        );
        assert.ok(
          precisionOf(r) >= PRECISION_FLOOR,
          `precision ${precisionOf(r).toFixed(3)}${show ? `; wrongly redacted, for example:\n${r.wrong.slice(0, 12).join("\n")}` : ""}`,
        );
      });
    }
  });
}

/** The forms of each country as its post writes them, with what must be redacted of each. */
const FORMS: [string, string][] = [
  [
    "Please ship to Keizersgracht 123, 1015 CJ Amsterdam, Netherlands.",
    "Keizersgracht 123, 1015 CJ Amsterdam, Netherlands",
  ],
  ["Ship to Keizersgracht 123 tomorrow.", "Keizersgracht 123"],
  ["Adres: ul. Marszałkowska 10/12, 00-950 Warszawa", "ul. Marszałkowska 10/12, 00-950 Warszawa"],
  ["ul. Marszałkowska 10/12 is the office", "ul. Marszałkowska 10/12"],
  ["Dirección: Calle Mayor 5, 3º B, 28013 Madrid", "Calle Mayor 5, 3º B, 28013 Madrid"],
  [
    "Endereço: Rua Augusta, 1500 - apto 12, 01310-100 São Paulo - SP",
    "Rua Augusta, 1500 - apto 12, 01310-100 São Paulo - SP",
  ],
  [
    "Rua Augusta, 1500 - apto 12\nSão Paulo - SP\n01310-100",
    "Rua Augusta, 1500 - apto 12\nSão Paulo - SP\n01310-100",
  ],
  ["Václavské náměstí 837/11\n110 00 Praha 1", "Václavské náměstí 837/11\n110 00 Praha 1"],
  ["Drottninggatan 53\n114 55 Stockholm\nSweden\n\nBest,", "Drottninggatan 53\n114 55 Stockholm\nSweden"],
  [
    "Av. Insurgentes Sur 1602, Col. Crédito Constructor, CP 06600 Ciudad de México, CDMX",
    "Av. Insurgentes Sur 1602, Col. Crédito Constructor, CP 06600 Ciudad de México, CDMX",
  ],
  [
    "Office: 1-2-3 Shibuya, Shibuya-ku, Tokyo 150-0002, Japan",
    "1-2-3 Shibuya, Shibuya-ku, Tokyo 150-0002, Japan",
  ],
  [
    "Flat 12, Sai Apartments, MG Road, Mumbai 400001, Maharashtra",
    "Flat 12, Sai Apartments, MG Road, Mumbai 400001, Maharashtra",
  ],
  ["22 Marine Drive, Mumbai - 400001", "22 Marine Drive, Mumbai - 400001"],
  [
    "Level 5, 1 Martin Place, Sydney NSW 2000, Australia",
    "Level 5, 1 Martin Place, Sydney NSW 2000, Australia",
  ],
  ["Bahnhofstrasse 12, 8001 Zürich", "Bahnhofstrasse 12, 8001 Zürich"],
  ["Mannerheimintie 10 A 5, 00100 Helsinki", "Mannerheimintie 10 A 5, 00100 Helsinki"],
  ["Vesterbrogade 14, 2. tv, 1620 København V", "Vesterbrogade 14, 2. tv, 1620 København V"],
  ["Karl Johans gate 22, 0159 Oslo", "Karl Johans gate 22, 0159 Oslo"],
  [
    "Av. Corrientes 1234, Piso 5, Depto. B, C1043AAZ CABA, Argentina",
    "Av. Corrientes 1234, Piso 5, Depto. B, C1043AAZ CABA, Argentina",
  ],
  [
    "12 Queen Street, Auckland Central, Auckland 1010, New Zealand",
    "12 Queen Street, Auckland Central, Auckland 1010, New Zealand",
  ],
  ["Rue de la Loi 16, 1000 Bruxelles", "Rue de la Loi 16, 1000 Bruxelles"],
  ["Via del Corso 12, 00186 Roma (RM)", "Via del Corso 12, 00186 Roma (RM)"],
  ["Hauptstraße 5, A-1010 Wien", "Hauptstraße 5, A-1010 Wien"],
  ["1 Grand Canal Square, Dublin 2, D02 P820, Ireland", "1 Grand Canal Square, Dublin 2, D02 P820, Ireland"],
  [
    "Kind regards,\nSupport\n742 Evergreen Terrace\nSpringfield, IL 62704\nUSA",
    "742 Evergreen Terrace\nSpringfield, IL 62704\nUSA",
  ],
];

/** Numbers beside capitalized words that are no address. */
const NOT_ADDRESSES = [
  "Total due: 1,250.00 EUR, invoice 2026-0042, paid on 12.03.2026.",
  "We sold 1500 Units in 2025.",
  "The 2024 Amsterdam offsite was great.",
  "part 00-950 Warszawa warehouse",
  "Windows 2000 Server and Office 2019",
  "Order 12345 Berlin shipped",
  "Section 12, Paris 2024 Olympics",
  "version 10.2, build 4471 Release",
  "Version 123 456 Final",
  "call 555-0199 today",
  "Meeting at 14:30, Room 204",
  "Tokyo 2020 Olympics and 150-0002",
  "ticket 1015 CJ Smith",
  "Room 12, 2500 Guests expected",
  "Chapter 4, 1200 Copenhagen residents replied",
];

describe("the address forms of each country (docs/detectors.md#address-countries)", () => {
  it("redacts the whole address: street, number, unit, postcode, place, region and a trailing country", () => {
    for (const [text, expected] of FORMS)
      assert.deepEqual(
        findAddresses(text).map((s) => text.slice(s.start, s.end)),
        [expected],
        text,
      );
  });
  it("leaves amounts, dates, versions, counts and labels with numbers alone", () => {
    for (const text of NOT_ADDRESSES) assert.deepEqual(findAddresses(text), [], text);
  });
});
