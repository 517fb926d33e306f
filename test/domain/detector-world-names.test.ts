import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Faker,
  fakerAR,
  fakerCS_CZ,
  fakerDA,
  fakerDE,
  fakerDE_AT,
  fakerDE_CH,
  fakerEL,
  fakerEN_GB,
  fakerEN_US,
  fakerES,
  fakerES_MX,
  fakerFR,
  fakerIT,
  fakerJA,
  fakerKO,
  fakerNB_NO,
  fakerNE,
  fakerNL,
  fakerPL,
  fakerPT_BR,
  fakerPT_PT,
  fakerRU,
  fakerSV,
  fakerUK,
  fakerZH_CN,
} from "@faker-js/faker";
import "../helpers/property-seed.js";
import { findPersonNames } from "../../src/domain/detectors/person-name.js";
import {
  assertAtLeast,
  NAME_AFFIXES,
  spanPrecision as precision,
  spanRecall as recall,
  type SpanScore,
  spanTable,
  wordsCovered,
} from "./detection-report.js";

/**
 * Person names across languages, scripts and kinds of text (docs/detectors.md#person-name-world):
 * names from @faker-js/faker's locales (the evaluation's generator; the detector takes nothing from
 * it) put into our templates by locale group and context (tickets, mail headers, signatures,
 * greetings, honorifics, JSON, CSV, YAML, logs, all lower case, all capitals), with hard negatives
 * (firms made of surnames, products, places, `Will`/`Mark` as words, headings) in the same contexts.
 * A name counts as found when each of its words lies inside a span; a span that touches no name is
 * a false positive. The held-out part has its own seed and templates and was never used for tuning:
 * its misses are not printed.
 */

interface Cues {
  greet: string[];
  signOff: string[];
  title: string[];
  from: string[];
}

interface Group {
  name: string;
  locales: Faker[];
  /** Names written in the Latin script: these also run in all lower case and all capitals. */
  latin: boolean;
  cues: Cues;
  /** How a full name is written from faker's parts. */
  full: (f: Faker) => string;
}

const westernName = (f: Faker) => `${f.person.firstName()} ${f.person.lastName()}`;
const familyFirst = (f: Faker) => `${f.person.lastName()}${f.person.firstName()}`;

const GROUPS: Group[] = [
  {
    name: "en",
    locales: [fakerEN_US, fakerEN_GB],
    latin: true,
    cues: {
      greet: ["Hi", "Hello", "Dear"],
      signOff: ["Thanks", "Best regards", "Kind regards"],
      title: ["Mr.", "Ms.", "Dr."],
      from: ["From", "To", "Cc"],
    },
    full: westernName,
  },
  {
    name: "DACH",
    locales: [fakerDE, fakerDE_AT, fakerDE_CH],
    latin: true,
    cues: {
      greet: ["Hallo", "Liebe", "Lieber"],
      signOff: ["Mit freundlichen Grüßen", "Viele Grüße", "Beste Grüße"],
      title: ["Herr", "Frau"],
      from: ["Von", "An"],
    },
    full: westernName,
  },
  {
    name: "FR",
    locales: [fakerFR],
    latin: true,
    cues: {
      greet: ["Bonjour", "Cher", "Chère"],
      signOff: ["Cordialement", "Bien à vous"],
      title: ["M.", "Mme"],
      from: ["De", "À"],
    },
    full: westernName,
  },
  {
    name: "ES/LatAm",
    locales: [fakerES, fakerES_MX],
    latin: true,
    cues: {
      greet: ["Hola", "Estimado", "Estimada"],
      signOff: ["Saludos", "Atentamente", "Un saludo"],
      title: ["Sr.", "Sra."],
      from: ["De", "Para"],
    },
    full: westernName,
  },
  {
    name: "IT",
    locales: [fakerIT],
    latin: true,
    cues: {
      greet: ["Ciao", "Gentile", "Caro"],
      signOff: ["Cordiali saluti", "Saluti", "Distinti saluti"],
      title: ["Dott.", "Sig."],
      from: ["Da", "A"],
    },
    full: westernName,
  },
  {
    name: "PT/BR",
    locales: [fakerPT_BR, fakerPT_PT],
    latin: true,
    cues: {
      greet: ["Olá", "Oi", "Prezado", "Prezada"],
      signOff: ["Atenciosamente", "Abraços", "Cumprimentos"],
      title: ["Sr.", "Sra."],
      from: ["De", "Para"],
    },
    full: westernName,
  },
  {
    name: "Nordics",
    locales: [fakerSV, fakerNB_NO, fakerDA],
    latin: true,
    cues: {
      greet: ["Hej", "Hei", "Hallå"],
      signOff: ["Med vänliga hälsningar", "Vennlig hilsen", "Med venlig hilsen", "Mvh"],
      title: ["Fru", "Hr."],
      from: ["Från", "Fra", "Till"],
    },
    full: westernName,
  },
  {
    name: "PL/CZ",
    locales: [fakerPL, fakerCS_CZ],
    latin: true,
    cues: {
      greet: ["Cześć", "Witam", "Ahoj", "Dobrý den"],
      signOff: ["Pozdrawiam", "Z poważaniem", "S pozdravem"],
      title: ["Pan", "Pani"],
      from: ["Od", "Do"],
    },
    full: westernName,
  },
  {
    name: "NL",
    locales: [fakerNL],
    latin: true,
    cues: {
      greet: ["Hallo", "Beste", "Hoi"],
      signOff: ["Met vriendelijke groet", "Groeten"],
      title: ["Dhr.", "Mevr."],
      from: ["Van", "Aan"],
    },
    full: westernName,
  },
  {
    name: "Cyrillic",
    locales: [fakerRU, fakerUK],
    latin: false,
    cues: {
      greet: ["Уважаемый", "Уважаемая", "Здравствуйте,", "Привет,"],
      signOff: ["С уважением", "З повагою"],
      title: ["господин", "госпожа"],
      from: ["От", "Кому"],
    },
    full: westernName,
  },
  {
    name: "Greek",
    locales: [fakerEL],
    latin: false,
    cues: {
      greet: ["Αγαπητέ", "Αγαπητή", "Γεια σου"],
      signOff: ["Με εκτίμηση", "Φιλικά"],
      title: ["κύριε", "κυρία"],
      from: ["Από", "Προς"],
    },
    full: westernName,
  },
  {
    name: "Arabic",
    locales: [fakerAR],
    latin: false,
    cues: {
      greet: ["مرحبا", "عزيزي"],
      signOff: ["مع التحيات"],
      title: ["السيد", "السيدة"],
      from: ["من", "إلى"],
    },
    full: westernName,
  },
  {
    name: "Devanagari",
    locales: [fakerNE],
    latin: false,
    cues: { greet: ["नमस्ते", "प्रिय"], signOff: ["धन्यवाद"], title: ["श्री", "श्रीमती"], from: ["From", "To"] },
    full: westernName,
  },
  {
    name: "CJK",
    locales: [fakerZH_CN, fakerJA],
    latin: false,
    cues: { greet: ["尊敬的", "你好，"], signOff: [], title: [], from: ["From", "To"] },
    full: familyFirst,
  },
  {
    name: "Hangul",
    locales: [fakerKO],
    latin: false,
    cues: { greet: ["안녕하세요,"], signOff: [], title: [], from: ["From", "To"] },
    full: familyFirst,
  },
];

/** A template: `{N}` is the name, `{G}` `{S}` `{T}` `{F}` the group's greeting, sign-off, honorific, header. */
interface Template {
  context: string;
  text: string;
  /** Only for groups whose names are in the Latin script. */
  latinOnly?: boolean;
  /** For the CJK and Hangul groups, which write honorifics after the name. */
  eastAsian?: boolean;
}

const DEVELOPMENT: Template[] = [
  { context: "ticket", text: "Ticket #4411\nCustomer: {N}\nIssue: cannot log in since Tuesday." },
  { context: "greeting", text: "{G} {N},\nyour refund was approved this morning." },
  { context: "signature", text: "The report is attached.\n\n{S},\n{N}" },
  { context: "honorific", text: "{T} {N} will join the call at ten." },
  { context: "e-mail headers", text: "{F}: {N} <user@example.com>\nSubject: invoice 2231" },
  {
    context: "e-mail headers",
    text: 'From: "{L}, {P}" <user@example.com>\nSubject: contract',
    latinOnly: true,
  },
  { context: "JSON", text: '{"id": 42, "customer_name": "{N}", "plan": "pro"}' },
  { context: "CSV", text: "id,name,email\n7,{N},user@example.com\n8,{N2},other@example.com" },
  { context: "YAML", text: "owner:\n  name: {N}\n  team: billing" },
  { context: "logs", text: '2026-11-27T10:00:00Z INFO login ok user_id=881 full_name="{N}" ip=10.0.0.1' },
  { context: "all-lower", text: "{g} {n},\ncan you check the order?", latinOnly: true },
  { context: "all-lower", text: "ok, sending it now.\n\n{s},\n{n}", latinOnly: true },
  { context: "ALL-CAPS", text: "{GG} {NN},\nYOUR ACCOUNT IS READY.", latinOnly: true },
  { context: "ALL-CAPS", text: "PLEASE REVIEW.\n\n{SS},\n{NN}", latinOnly: true },
  { context: "honorific", text: "{N}先生您好，合同已经发出。", eastAsian: true },
  { context: "honorific", text: "{N}様\nお世話になっております。", eastAsian: true },
  { context: "honorific", text: "{N} 님, 주문이 확인되었습니다.", eastAsian: true },
];

const HELD_OUT: Template[] = [
  { context: "ticket", text: "Case 90211 opened by support.\nContact: {N}\nPriority: high" },
  { context: "greeting", text: "{G} {N}, thanks for getting back to us so quickly." },
  { context: "signature", text: "Let me know if anything is missing.\n{S}\n{N}" },
  { context: "honorific", text: "As agreed with {T} {N}, the meeting moves to Friday." },
  { context: "e-mail headers", text: "Reply-To: {N} <reply@example.org>\n{F}: {N2} <x@example.org>" },
  { context: "JSON", text: '[{"author": "{N}", "stars": 5, "text": "great"}]' },
  { context: "CSV", text: "ticket;full_name;status\n311;{N};open" },
  { context: "YAML", text: "- assignee: {N}\n  due: 2026-12-01" },
  { context: "logs", text: 'level=warn msg="payment declined" customer_name="{N}" amount=12.50' },
  { context: "all-lower", text: "{g}, {n}\nquick question about the invoice", latinOnly: true },
  { context: "ALL-CAPS", text: "TO: {NN} <OPS@EXAMPLE.COM>\nRE: OUTAGE", latinOnly: true },
  { context: "honorific", text: "尊敬的{N}女士，您的订单已发货。", eastAsian: true },
  { context: "honorific", text: "{N}さん、資料をお送りします。", eastAsian: true },
  { context: "honorific", text: "{N}씨에게 전달했습니다.", eastAsian: true },
];

/** Hard negatives: `{C}` a firm, `{P}` a product, `{Y}` a city, all from the group's locale. */
const NEGATIVES_DEVELOPMENT: string[] = [
  "From: {C} <billing@example.com>\nSubject: your invoice",
  '{"name": "{P}", "price": 19.99}',
  "Hi team,\nthe build is green again.",
  "Thanks,\nThe {C} Team",
  "Best regards,\nCustomer Support",
  "Morgan Stanley and Goldman Sachs raised their forecasts.",
  "We buy from Procter & Gamble and Johnson & Johnson.",
  "Ernst & Young audited Merrill Lynch; Marks & Spencer reported.",
  "Hewlett-Packard shipped the printers.",
  "Will you send it today? Mark the ticket as done.",
  "Quarterly Report Overview\nRevenue grew in {Y}.",
  "{C} announced results today.",
  "name: {P}\nversion: 2.1.0",
];
const NEGATIVES_HELD_OUT: string[] = [
  "To: {C} <sales@example.org>",
  'customer_name="{C}" status=active',
  "Hello all,\nplease review the draft.",
  "Kind regards,\nThe Billing Department",
  "Wells Fargo and Charles Schwab cut fees.",
  "Smith & Wesson and Dolce & Gabbana were mentioned.",
  "Rolls-Royce and Mercedes-Benz lead the list.",
  "author: {P}",
  "Deploy to {Y} tonight.",
  "HELLO TEAM,\nTHE SERVER IS DOWN.",
];

interface Value {
  start: number;
  end: number;
}
interface Case {
  group: string;
  context: string;
  text: string;
  names: Value[];
}

function pick<T>(f: Faker, list: T[]): T {
  return f.helpers.arrayElement(list);
}

/** Fills `{…}` slots left to right; name slots are recorded where they land. */
function render(
  template: string,
  slots: Record<string, string>,
  nameSlots: Set<string>,
): { text: string; names: Value[] } {
  let text = "";
  const names: Value[] = [];
  const re = /\{([A-Za-z0-9]+)\}/g;
  let last = 0;
  for (let m = re.exec(template); m !== null; m = re.exec(template)) {
    const key = m[1] as string;
    text += template.slice(last, m.index);
    const value = slots[key] ?? m[0];
    if (nameSlots.has(key)) names.push({ start: text.length, end: text.length + value.length });
    text += value;
    last = m.index + m[0].length;
  }
  return { text: text + template.slice(last), names };
}

function generate(templates: Template[], negatives: string[], seed: number, rounds: number): Case[] {
  const cases: Case[] = [];
  for (const g of GROUPS) {
    g.locales.forEach((f, i) => {
      f.seed(seed + i);
      for (let r = 0; r < rounds; r++) {
        for (const t of templates) {
          if (t.latinOnly && !g.latin) continue;
          const eastAsian = g.name === "CJK" || g.name === "Hangul";
          if (t.eastAsian !== undefined && t.eastAsian !== eastAsian) continue;
          if (eastAsian && t.eastAsian === undefined && (t.text.includes("{T}") || t.text.includes("{S}")))
            continue;
          if (t.eastAsian && (g.name === "Hangul") !== /[가-힣]/.test(t.text)) continue;
          if (t.eastAsian && g.name === "CJK" && /[가-힣]/.test(t.text)) continue;
          const given = f.person.firstName();
          const family = f.person.lastName();
          const n = eastAsian ? `${family}${given}` : `${given} ${family}`;
          const n2 = g.full(f);
          const greet = g.cues.greet.length > 0 ? pick(f, g.cues.greet) : "";
          const signOff = g.cues.signOff.length > 0 ? pick(f, g.cues.signOff) : "";
          const slots: Record<string, string> = {
            N: n,
            N2: n2,
            L: family,
            P: given,
            G: greet,
            S: signOff,
            T: g.cues.title.length > 0 ? pick(f, g.cues.title) : "",
            F: pick(f, g.cues.from),
            g: greet.toLowerCase(),
            s: signOff.toLowerCase(),
            n: n.toLowerCase(),
            GG: greet.toUpperCase(),
            SS: signOff.toUpperCase(),
            NN: n.toUpperCase(),
          };
          // The quoted `"Last, First"` header names one person: its two parts are one value.
          const { text, names } = render(t.text, slots, new Set(["N", "N2", "L", "P", "n", "NN"]));
          const merged =
            t.text.includes('"{L}, {P}"') && names.length === 2
              ? [{ start: (names[0] as Value).start, end: (names[1] as Value).end }]
              : names;
          cases.push({ group: g.name, context: t.context, text, names: merged });
        }
        for (const neg of negatives) {
          const slots = { C: f.company.name(), P: f.commerce.productName(), Y: f.location.city() };
          cases.push({
            group: g.name,
            context: "negative",
            text: render(neg, slots, new Set()).text,
            names: [],
          });
        }
      }
    });
  }
  return cases;
}

interface Row extends SpanScore {
  /** The locale group, by name. */
  name: string;
  misses: string[];
  wrongly: string[];
}

function score(cases: Case[]): Row[] {
  const rows = new Map<string, Row>(
    GROUPS.map((g) => [
      g.name,
      { name: g.name, values: 0, found: 0, predicted: 0, falsePositives: 0, misses: [], wrongly: [] },
    ]),
  );
  for (const c of cases) {
    const row = rows.get(c.group) as Row;
    const spans = findPersonNames(c.text);
    for (const v of c.names) {
      row.values++;
      const ok = wordsCovered(c.text, v.start, v.end, {
        word: /[\p{L}\p{M}\p{N}]+/u,
        // Titles and generational or degree suffixes identify nobody: a name is found without them.
        affixes: NAME_AFFIXES,
        covers: (a, b) => spans.some((s) => s.start <= a && s.end >= b),
      });
      if (ok) row.found++;
      else row.misses.push(`[${c.context}] ${JSON.stringify(c.text)}`);
    }
    for (const s of spans) {
      row.predicted++;
      if (!c.names.some((v) => v.start < s.end && s.start < v.end)) {
        row.falsePositives++;
        row.wrongly.push(`${JSON.stringify(c.text.slice(s.start, s.end))} in ${JSON.stringify(c.text)}`);
      }
    }
  }
  return [...rows.values()];
}

const RECALL_FLOOR = 0.9;
const PRECISION_FLOOR = 0.95;
/**
 * Groups that do not reach a floor honestly, with the figure measured when this was written less
 * 0.02 (docs/detectors.md#person-name-world): they must not get worse. Empty: every group reaches
 * the floors.
 */
const MEASURED: Record<string, { recall?: number; precision?: number }> = {};

for (const [part, templates, negatives, seed, rounds] of [
  ["development", DEVELOPMENT, NEGATIVES_DEVELOPMENT, 7, 3],
  ["held-out", HELD_OUT, NEGATIVES_HELD_OUT, 20261127, 3],
] as const) {
  describe(`person names of the world, ${part} part (docs/detectors.md#person-name-world)`, () => {
    const rows = score(generate([...templates], [...negatives], seed, rounds));
    it("prints recall and precision per locale group", () => {
      console.log(`\n${spanTable(`person-name by locale group, ${part} part`, "group", rows)}\n`);
      assert.ok(rows.every((r) => r.values > 0));
    });
    for (const r of rows) {
      const floor = MEASURED[`${part}:${r.name}`] ?? {};
      const recallFloor = floor.recall ?? RECALL_FLOOR;
      const precisionFloor = floor.precision ?? PRECISION_FLOOR;
      it(`${r.name}: recall at least ${recallFloor}, precision at least ${precisionFloor}`, () => {
        // The held-out part's misses are not shown: reading them would make it a development set.
        const show = (list: string[]) => (part === "development" ? `\n${list.slice(0, 12).join("\n")}` : "");
        assertAtLeast("recall", recall(r), recallFloor, show(r.misses));
        assertAtLeast("precision", precision(r), precisionFloor, show(r.wrongly));
      });
    }
  });
}
