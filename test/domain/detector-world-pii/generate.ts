import {
  type Faker,
  fakerCS_CZ,
  fakerDA,
  fakerDE,
  fakerDE_AT,
  fakerDE_CH,
  fakerEN_AU,
  fakerEN_GB,
  fakerEN_IE,
  fakerEN_IN,
  fakerEN_US,
  fakerES,
  fakerES_MX,
  fakerFI,
  fakerFR,
  fakerFR_BE,
  fakerIT,
  fakerJA,
  fakerNB_NO,
  fakerNL,
  fakerPL,
  fakerPT_BR,
  fakerPT_PT,
  fakerSV,
} from "@faker-js/faker";

/**
 * Labelled text for the world evaluation of the pattern PII slugs (docs/detectors.md#world-pii):
 * phone numbers, e-mail addresses, cards, IP addresses, US SSNs and secrets with values from
 * @faker-js/faker's locale for each country (the detectors take nothing from faker), written into
 * our templates of the contexts prompts carry them in, plus hard negatives of each locale group in
 * the same contexts.
 *
 * Phone numbers: faker's national formats are used where they are what the country writes; where
 * they are not (checked against the national numbering plans), the number is drawn here instead:
 * Mexico (faker writes 9-digit numbers and groups ten digits 3-3-4; Mexico dials ten digits, written
 * `55 1234 5678` or `222 123 4567`), Brazil (mobiles start with 9 after the area code since 2016;
 * faker's do not), Italy (faker writes bare ten digits starting 7, a range Italy does not use),
 * Finland (faker writes bare 10-11 digits; Finns write `040 123 4567`), India (faker writes
 * `077031 01335`; Indian mobiles are ten digits from 6-9, written `98765 43210`), Argentina and New
 * Zealand (no faker locale). faker's international formats put the trunk 0 after the country code
 * (`+490622...`) and give Italy a German code, so the international form is always derived here
 * from the national number: the country code, then the national number without its trunk 0 (Italy
 * keeps it, as its plan does).
 */

export type Slug = "phone" | "email" | "credit-card" | "ip-address" | "ssn" | "secrets";
export const SLUGS: Slug[] = ["phone", "email", "credit-card", "ip-address", "ssn", "secrets"];

export interface Entity {
  slug: Slug;
  start: number;
  end: number;
}

export interface Case {
  group: string;
  text: string;
  /** Empty for a hard negative. */
  entities: Entity[];
}

const pick = <T>(f: Faker, xs: readonly T[]): T => f.helpers.arrayElement(xs);
const maybe = (f: Faker, p: number) => f.number.float({ min: 0, max: 1 }) < p;
const digits = (f: Faker, n: number) => f.string.numeric({ length: n, allowLeadingZeros: true });
const from = (f: Faker, first: string, n: number) => pick(f, [...first]) + digits(f, n - 1);

/** A country: its faker locale, its calling code, and how it writes a number at home. */
interface Country {
  f: Faker;
  cc: string;
  /** Italy keeps the leading 0 after its country code. */
  keepZero?: boolean;
  national: (f: Faker) => string;
  /** A prefix the international form carries after the country code (Argentina's mobile 9). */
  mobileNine?: boolean;
}

/**
 * faker's national number, redrawn while it is one the plan does not issue: faker's de and de_AT
 * write area codes starting `00` (the international access prefix) and 13-digit numbers, while
 * German and Austrian numbers with the trunk 0 have at most 12 digits; faker's da and nb_NO write
 * numbers starting with 0 and of six digits, while Danish and Norwegian numbers are eight digits
 * starting 2-9; faker's sv writes some without the trunk 0 every Swedish national number has;
 * faker's fr_BE writes eleven digits, while Belgian numbers have nine or ten with the trunk 0.
 */
const fakerNational =
  (valid: (digits: string) => boolean = (d) => !d.startsWith("00") && d.length <= 12) =>
  (f: Faker) => {
    for (;;) {
      const n = f.phone.number({ style: "national" });
      if (valid(n.replace(/\D/g, ""))) return n;
    }
  };
/**
 * The other separators a country writes besides faker's spaces: dots in France (`06.12.34.56.78`),
 * a slash after the area code and dots in Belgium (`0470/12.34.56`), a slash after the area code
 * in Germany and Austria (`0711/1234567`, DIN 5008's older form).
 */
const restyled =
  (national: (f: Faker) => string, style: "dots" | "slash-dots" | "slash") =>
  (f: Faker): string => {
    const n = national(f);
    if (!n.includes(" ") || !maybe(f, 0.35)) return n;
    if (style === "dots") return n.replace(/ /g, ".");
    const [area, ...rest] = n.split(" ");
    if (style === "slash") return `${area}/${rest.join("")}`;
    return `${area}/${rest.join(".")}`;
  };
const BELGIAN = (d: string) => /^0[1-9]\d{7,8}$/.test(d);
const EIGHT = (d: string) => /^[2-9]\d{7}$/.test(d);
const SWEDISH = (d: string) => /^0[1-9]\d{6,8}$/.test(d);

const MX = (f: Faker) =>
  maybe(f, 0.5)
    ? `${pick(f, ["55", "33", "81"])} ${digits(f, 4)} ${digits(f, 4)}`
    : `${from(f, "2345679", 3)} ${from(f, "23456789", 3)} ${digits(f, 4)}`;
const AR = (f: Faker) =>
  maybe(f, 0.5)
    ? `${maybe(f, 0.3) ? "0" : ""}11 ${from(f, "2345", 4)}-${digits(f, 4)}`
    : `${maybe(f, 0.3) ? "0" : ""}${pick(f, ["351", "341", "261", "381"])} ${from(f, "2345", 3)}-${digits(f, 4)}`;
const BR_AREA = "123456789";
const BR = (f: Faker) => {
  const area = `${pick(f, [...BR_AREA])}${pick(f, [...BR_AREA])}`;
  return maybe(f, 0.6)
    ? `(${area}) 9${digits(f, 4)}-${digits(f, 4)}`
    : `(${area}) ${from(f, "2345", 4)}-${digits(f, 4)}`;
};
const IT = (f: Faker) =>
  maybe(f, 0.6)
    ? `3${from(f, "2456789", 2)} ${digits(f, 3)} ${digits(f, 4)}`
    : `0${pick(f, ["2", "6", "11", "51", "55", "81"])} ${from(f, "2345678", 4)} ${digits(f, 4)}`;
const FI = (f: Faker) =>
  maybe(f, 0.6)
    ? `0${pick(f, ["40", "50", "44", "45"])} ${digits(f, 3)} ${digits(f, 4)}`
    : `0${pick(f, ["9", "2", "3"])} ${from(f, "123456789", 4)} ${digits(f, 3)}`;
const IN = (f: Faker) =>
  maybe(f, 0.7)
    ? `${from(f, "6789", 5)} ${digits(f, 5)}`
    : `0${pick(f, ["11", "22", "33", "44", "80"])} ${from(f, "2345", 4)} ${digits(f, 4)}`;
const NZ = (f: Faker) =>
  maybe(f, 0.6)
    ? `02${pick(f, ["1", "2", "7"])} ${from(f, "23456789", 3)} ${digits(f, 4)}`
    : `0${pick(f, ["3", "4", "6", "7", "9"])} ${from(f, "23456789", 3)} ${digits(f, 4)}`;

/** The international form of a national number (see the module comment). */
function international(c: Country, national: string, f: Faker): string {
  let rest = national.replace(/[()]/g, "");
  const trunk = !c.keepZero && rest.startsWith("0");
  if (!c.keepZero) rest = rest.replace(/^0/, "");
  if (c.mobileNine && rest.startsWith("11")) rest = `9 ${rest}`;
  rest = rest.replace(/[-./]/g, " ");
  if (maybe(f, 0.25)) return `+${c.cc}${rest.replace(/ /g, "")}`;
  // The trunk 0 in parentheses, as British, German and Swiss letterheads write it: `+44 (0)20 ...`.
  if (trunk && maybe(f, 0.2)) return `+${c.cc} (0)${rest}`;
  return `+${c.cc} ${rest}`;
}

export interface Group {
  name: string;
  countries: Country[];
  /** The words a text of this language writes before a phone number. */
  phoneCues: string[];
  /** The key a JSON or YAML record of this language gives a phone number. */
  phoneKey: string;
  /** Whether the detector reads passwords told in this group's prose (English only). */
  prose: boolean;
  /** How an amount is written here. */
  amount: (f: Faker) => string;
  /** How a date is written here. */
  date: (f: Faker) => string;
}

const day = (f: Faker) => String(f.number.int({ min: 1, max: 28 })).padStart(2, "0");
const month = (f: Faker) => String(f.number.int({ min: 1, max: 12 })).padStart(2, "0");
const year = (f: Faker) => String(f.number.int({ min: 2019, max: 2027 }));
const dmy = (sep: string) => (f: Faker) => `${day(f)}${sep}${month(f)}${sep}${year(f)}`;
const int = (f: Faker, min: number, max: number) => f.number.int({ min, max });
/** Thousands grouped by `thousands`, decimals after `decimal`. */
const money = (thousands: string, decimal: string, before: string, after: string) => (f: Faker) => {
  const whole = String(int(f, 1000, 99_999_999)).replace(/\B(?=(\d{3})+(?!\d))/g, thousands);
  return `${before}${whole}${decimal}${digits(f, 2)}${after}`;
};

export const GROUPS: Group[] = [
  {
    name: "en-US",
    countries: [{ f: fakerEN_US, cc: "1", national: fakerNational() }],
    phoneCues: ["Phone:", "Tel:", "Cell:", "call me at"],
    phoneKey: "phone",
    prose: true,
    amount: money(",", ".", "$", ""),
    date: (f) => `${month(f)}/${day(f)}/${year(f)}`,
  },
  {
    name: "en-GB/IE",
    countries: [
      { f: fakerEN_GB, cc: "44", national: fakerNational() },
      { f: fakerEN_IE, cc: "353", national: fakerNational() },
    ],
    phoneCues: ["Tel:", "Mobile:", "Phone", "ring me on"],
    phoneKey: "phone",
    prose: true,
    amount: money(",", ".", "£", ""),
    date: dmy("/"),
  },
  {
    name: "DACH",
    countries: [
      { f: fakerDE, cc: "49", national: restyled(fakerNational(), "slash") },
      { f: fakerDE_AT, cc: "43", national: restyled(fakerNational(), "slash") },
      { f: fakerDE_CH, cc: "41", national: fakerNational() },
    ],
    phoneCues: ["Tel.", "Telefon:", "Handy:", "Mobil:"],
    phoneKey: "telefon",
    prose: false,
    amount: money(".", ",", "", " €"),
    date: dmy("."),
  },
  {
    name: "FR/BE",
    countries: [
      { f: fakerFR, cc: "33", national: restyled(fakerNational(), "dots") },
      { f: fakerFR_BE, cc: "32", national: restyled(fakerNational(BELGIAN), "slash-dots") },
    ],
    phoneCues: ["Tél. :", "Téléphone :", "Portable :", "Tel :"],
    phoneKey: "telephone",
    prose: false,
    amount: money(" ", ",", "", " €"),
    date: dmy("/"),
  },
  {
    name: "ES",
    countries: [{ f: fakerES, cc: "34", national: fakerNational() }],
    phoneCues: ["Teléfono:", "Móvil:", "Tfno.:", "Tel."],
    phoneKey: "telefono",
    prose: false,
    amount: money(".", ",", "", " €"),
    date: dmy("/"),
  },
  {
    name: "LatAm",
    countries: [
      { f: fakerES_MX, cc: "52", national: MX },
      { f: fakerES_MX, cc: "54", national: AR, mobileNine: true },
    ],
    phoneCues: ["Teléfono:", "Celular:", "Cel.", "Tel."],
    phoneKey: "telefono",
    prose: false,
    amount: money(",", ".", "$", ""),
    date: dmy("/"),
  },
  {
    name: "PT/BR",
    countries: [
      { f: fakerPT_PT, cc: "351", national: fakerNational() },
      { f: fakerPT_BR, cc: "55", national: BR },
    ],
    phoneCues: ["Telefone:", "Tel.:", "Celular:", "Telemóvel:"],
    phoneKey: "telefone",
    prose: false,
    amount: money(".", ",", "R$ ", ""),
    date: dmy("/"),
  },
  {
    name: "IT",
    countries: [{ f: fakerIT, cc: "39", keepZero: true, national: IT }],
    phoneCues: ["Tel.", "Telefono:", "Cellulare:", "Cell."],
    phoneKey: "telefono",
    prose: false,
    amount: money(".", ",", "€ ", ""),
    date: dmy("/"),
  },
  {
    name: "NL",
    countries: [{ f: fakerNL, cc: "31", national: fakerNational() }],
    phoneCues: ["Tel.", "Telefoon:", "Mobiel:", "T:"],
    phoneKey: "telefoon",
    prose: false,
    amount: money(".", ",", "€ ", ""),
    date: dmy("-"),
  },
  {
    name: "PL/CZ",
    countries: [
      { f: fakerPL, cc: "48", national: fakerNational() },
      { f: fakerCS_CZ, cc: "420", national: fakerNational() },
    ],
    phoneCues: ["Tel.", "Telefon:", "komórka:", "Mobil:"],
    phoneKey: "telefon",
    prose: false,
    amount: money(" ", ",", "", " zł"),
    date: dmy("."),
  },
  {
    name: "Nordics",
    countries: [
      { f: fakerSV, cc: "46", national: fakerNational(SWEDISH) },
      { f: fakerDA, cc: "45", national: fakerNational(EIGHT) },
      { f: fakerNB_NO, cc: "47", national: fakerNational(EIGHT) },
      { f: fakerFI, cc: "358", national: FI },
    ],
    phoneCues: ["Tel.", "Telefon:", "Mobil:", "Tlf.:"],
    phoneKey: "telefon",
    prose: false,
    amount: money(" ", ",", "", " kr"),
    date: dmy("."),
  },
  {
    name: "IN",
    countries: [{ f: fakerEN_IN, cc: "91", national: IN }],
    phoneCues: ["Mobile:", "Phone:", "फ़ोन:", "मोबाइल नंबर:"],
    phoneKey: "phone",
    prose: true,
    amount: (f) => `₹${int(f, 1, 99)},${digits(f, 2)},${digits(f, 3)}.00`,
    date: dmy("-"),
  },
  {
    name: "JA",
    countries: [{ f: fakerJA, cc: "81", national: fakerNational() }],
    phoneCues: ["TEL:", "Tel.", "電話:", "携帯:"],
    phoneKey: "tel",
    prose: false,
    amount: (f) => `¥${String(int(f, 1000, 9_999_999)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")}`,
    date: (f) => `${year(f)}/${month(f)}/${day(f)}`,
  },
  {
    name: "AU/NZ",
    countries: [
      { f: fakerEN_AU, cc: "61", national: fakerNational() },
      { f: fakerEN_AU, cc: "64", national: NZ },
    ],
    phoneCues: ["Ph:", "Mobile:", "Phone:", "Tel:"],
    phoneKey: "phone",
    prose: true,
    amount: money(",", ".", "$", ""),
    date: dmy("/"),
  },
];

/**
 * A template: `{v}` takes a value with no cue beside it (a phone number in international form, an
 * SSN with hyphens), `{cv}` a value beside a cue the template or `{cue}` gives (a phone number in
 * the national form, an SSN in any form). `{cue}` is a phone cue of the group's language, `{key}`
 * its JSON or YAML key for a phone number, `{name}` a person of the locale.
 */
export interface Templates {
  positives: Record<Exclude<Slug, "secrets">, string[]>;
  /** `{pw}` a password, `{tok}` an API token; `prose` only where the group's language is read. */
  secrets: string[];
  prose: string[];
  /** Kinds of look-alike: `{amount}`, `{date}`, `{time}`, `{order}`, `{invoice}`, `{tracking}`, `{version}`, `{isbn}`, `{uuid}`, `{sha}`, `{hash}`, `{b64}`, `{postcode}`. */
  negatives: string[];
}

function ssn(f: Faker, sep: string): string {
  let area = int(f, 1, 899);
  if (area === 666) area = 667;
  return `${String(area).padStart(3, "0")}${sep}${String(int(f, 1, 99)).padStart(2, "0")}${sep}${String(int(f, 1, 9999)).padStart(4, "0")}`;
}

function password(f: Faker): string {
  const body = f.string.alphanumeric({ length: int(f, 9, 18), casing: "mixed" });
  // People add a digit and a symbol when a form asks them to.
  return `${body}${digits(f, 1)}${maybe(f, 0.4) ? pick(f, ["!", "_", "*", "#"]) : ""}`;
}

function token(f: Faker): string {
  const alnum = (n: number) => f.string.alphanumeric({ length: n, casing: "mixed" });
  return pick(f, [
    () => `sk-proj-${alnum(48)}`,
    () => `ghp_${alnum(36)}`,
    () => `AKIA${f.string.alphanumeric({ length: 16, casing: "upper" })}`,
    () => `xoxb-${f.string.numeric(11)}-${f.string.numeric(12)}-${alnum(24)}`,
    () => `sk_live_${alnum(24)}`,
    () => `glpat-${alnum(20)}`,
    () => alnum(int(f, 24, 40)),
  ])();
}

/** faker writes IPv6 with all eight groups; networks are written with `::` (`2001:db8:4a::1f`). */
function compressedIpv6(f: Faker): string {
  const groups = f.internet.ipv6().split(":");
  const head = groups.slice(0, int(f, 1, 4)).map((g) => g.replace(/^0+(?=.)/, ""));
  const tail = groups.slice(8 - int(f, 1, 2)).map((g) => g.replace(/^0+(?=.)/, ""));
  return `${head.join(":")}::${tail.join(":")}`;
}

function isbn(f: Faker): string {
  const d = `978${digits(f, 9)}`;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  const check = (10 - (sum % 10)) % 10;
  return `${d.slice(0, 3)}-${d.slice(3, 4)}-${d.slice(4, 7)}-${d.slice(7, 12)}-${check}`;
}

function lookAlike(kind: string, f: Faker, g: Group): string {
  switch (kind) {
    case "amount":
      return g.amount(f);
    case "date":
      return g.date(f);
    case "time":
      return `${String(int(f, 0, 23)).padStart(2, "0")}:${String(int(f, 0, 59)).padStart(2, "0")}`;
    case "order":
      return pick(f, [
        () => `${digits(f, 3)}-${digits(f, 7)}-${digits(f, 7)}`,
        () => `${int(f, 10_000, 9_999_999)}`,
        () => `${f.string.alpha({ length: 2, casing: "upper" })}-${digits(f, 6)}`,
      ])();
    case "invoice":
      return pick(f, [
        `INV-${year(f)}-${digits(f, 5)}`,
        `RE-${year(f)}-${digits(f, 4)}`,
        `${year(f)}/${digits(f, 5)}`,
      ]);
    case "tracking":
      return pick(f, [
        () => `1Z${f.string.alphanumeric({ length: 16, casing: "upper" })}`,
        () => `00${digits(f, 18)}`,
        () => `JJD${digits(f, 16)}`,
      ])();
    case "version":
      return `${int(f, 0, 20)}.${int(f, 0, 40)}.${int(f, 0, 120)}`;
    case "isbn":
      return isbn(f);
    case "uuid":
      return f.string.uuid();
    case "sha":
      return f.git.commitSha();
    case "hash":
      return f.string.hexadecimal({ length: 64, casing: "lower", prefix: "" });
    case "b64":
      return Buffer.from(f.string.alphanumeric(int(f, 30, 60))).toString("base64");
    case "postcode":
      return (g.countries[0] as Country).f.location.zipCode();
    default:
      throw new Error(`unknown look-alike ${kind}`);
  }
}

/** Fills every `{...}` but the one marking the value, whose place is returned. */
function fill(template: string, value: string, c: { f: Faker; g: Group; cue: string; name: string }) {
  let at = -1;
  let text = "";
  let last = 0;
  // Lower-case marks only: `${API_KEY}` is a placeholder the negatives carry.
  const marks = /\{([a-z0-9]+)\}/g;
  for (let m = marks.exec(template); m !== null; m = marks.exec(template)) {
    text += template.slice(last, m.index);
    last = m.index + m[0].length;
    const kind = m[1] as string;
    if (kind === "v" || kind === "cv" || kind === "pw" || kind === "tok") {
      at = text.length;
      text += value;
    } else if (kind === "cue") text += c.cue;
    else if (kind === "key") text += c.g.phoneKey;
    else if (kind === "name") text += c.name;
    else text += lookAlike(kind, c.f, c.g);
  }
  return { text: text + template.slice(last), at };
}

function value(slug: Slug, template: string, country: Country): string {
  const f = country.f;
  const cued = template.includes("{cv}");
  switch (slug) {
    case "phone": {
      const national = country.national(f);
      return cued ? national : international(country, national, f);
    }
    case "email":
      return f.internet.email();
    case "credit-card": {
      // faker groups every card with hyphens; people and forms also write spaces or no separator.
      const card = f.finance.creditCardNumber(
        pick(f, ["visa", "mastercard", "american_express", "discover", "jcb", "diners_club"]),
      );
      return card.replace(/-/g, pick(f, ["-", " ", " ", ""]));
    }
    case "ip-address":
      return pick(f, [() => f.internet.ipv4(), () => f.internet.ipv6(), () => compressedIpv6(f)])();
    case "ssn":
      return cued ? ssn(f, pick(f, ["-", ".", " ", ""])) : ssn(f, "-");
    case "secrets":
      return template.includes("{tok}") ? token(f) : password(f);
  }
}

/** `rounds` values per country and template, and `rounds` of each negative template per group. */
export function generate(t: Templates, seed: number, rounds: number): Case[] {
  const cases: Case[] = [];
  for (const g of GROUPS) {
    g.countries.forEach((country, i) => {
      const f = country.f;
      f.seed(seed + i * 7919 + g.name.length * 104_729);
      const work: [Slug, string][] = [
        ...(Object.entries(t.positives) as [Slug, string[]][])
          .filter(([slug]) => slug !== "ssn" || g.name === "en-US")
          .flatMap(([slug, ts]) => ts.map((x): [Slug, string] => [slug, x])),
        ...t.secrets.map((x): [Slug, string] => ["secrets", x]),
        ...(g.prose ? t.prose.map((x): [Slug, string] => ["secrets", x]) : []),
      ];
      for (let r = 0; r < rounds; r++) {
        // SSNs come from one group only: three draws each, so that their part is not a handful.
        for (const [slug, template] of work)
          for (let k = 0; k < (slug === "ssn" ? 3 : 1); k++) {
            const v = value(slug, template, country);
            const { text, at } = fill(template, v, {
              f,
              g,
              cue: pick(f, g.phoneCues),
              name: `${f.person.firstName()} ${f.person.lastName()}`,
            });
            cases.push({ group: g.name, text, entities: [{ slug, start: at, end: at + v.length }] });
          }
      }
    });
    const f = (g.countries[0] as Country).f;
    f.seed(seed + 15_485_863);
    for (let r = 0; r < rounds; r++) {
      for (const template of t.negatives) {
        const { text } = fill(template, "", { f, g, cue: "", name: "" });
        cases.push({ group: g.name, text, entities: [] });
      }
    }
  }
  return cases;
}
