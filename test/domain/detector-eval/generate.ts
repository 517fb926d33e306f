import {
  type Faker,
  fakerDE,
  fakerEN_CA,
  fakerEN_GB,
  fakerEN_US,
  fakerES,
  fakerFR,
  fakerIT,
} from "@faker-js/faker";
import type { EvalSlug, SentenceSet } from "./sentences.js";

/**
 * Labelled text for the detector evaluation (docs/detectors.md, "Evaluation on generated text"):
 * our sentences with values from @faker-js/faker in several locales. Each positive records where
 * its value stands, so the evaluation can check that redaction covered all of it.
 */

export interface Entity {
  slug: EvalSlug;
  start: number;
  end: number;
}

export interface Case {
  text: string;
  /** Empty for a hard negative. */
  entities: Entity[];
  /** The slug whose sentence this is (a negative counts against this slug's precision). */
  slug: EvalSlug;
}

const LOCALES: Record<string, Faker> = {
  en_US: fakerEN_US,
  en_GB: fakerEN_GB,
  en_CA: fakerEN_CA,
  de: fakerDE,
  fr: fakerFR,
  es: fakerES,
  it: fakerIT,
};
/** Names and addresses come from every locale; the other slugs are written the same way everywhere. */
const LOCALE_SLUGS: EvalSlug[] = ["person-name", "address"];

function ssn(f: Faker): string {
  let area = f.number.int({ min: 1, max: 899 });
  if (area === 666) area = 667;
  const group = f.number.int({ min: 1, max: 99 });
  const serial = f.number.int({ min: 1, max: 9999 });
  return `${String(area).padStart(3, "0")}-${String(group).padStart(2, "0")}-${String(serial).padStart(4, "0")}`;
}

function secret(f: Faker): string {
  const alnum = (n: number) => f.string.alphanumeric({ length: n, casing: "mixed" });
  const forms = [
    () => `sk-proj-${alnum(48)}`,
    () => `ghp_${alnum(36)}`,
    () => `AKIA${f.string.alphanumeric({ length: 16, casing: "upper" })}`,
    () => `xoxb-${f.string.numeric(11)}-${f.string.numeric(12)}-${alnum(24)}`,
    () => `sk_live_${alnum(24)}`,
    () => `glpat-${alnum(20)}`,
  ];
  return (f.helpers.arrayElement(forms) as () => string)();
}

function address(f: Faker, locale: string): string {
  const street = f.location.streetAddress(f.datatype.boolean());
  const city = f.location.city();
  switch (locale) {
    case "en_US":
      return f.helpers.arrayElement([
        street,
        `${street}, ${city}, ${f.location.state({ abbreviated: true })} ${f.location.zipCode()}`,
      ]);
    case "en_CA":
    case "en_GB":
      return f.helpers.arrayElement([street, `${street}, ${city} ${f.location.zipCode()}`]);
    default:
      return f.helpers.arrayElement([street, `${street}, ${f.location.zipCode()} ${city}`]);
  }
}

function personName(f: Faker): string {
  return f.helpers.arrayElement([
    () => f.person.fullName(),
    () => `${f.person.firstName()} ${f.person.lastName()}`,
  ])();
}

/** A value of the slug's kind. */
function value(slug: EvalSlug, f: Faker, locale: string): string {
  switch (slug) {
    case "email":
      return f.internet.email();
    case "phone":
      return f.phone.number();
    case "ssn":
      return ssn(f);
    case "credit-card":
      return f.finance.creditCardNumber();
    case "ip-address":
      return f.datatype.boolean() ? f.internet.ipv4() : f.internet.ipv6();
    case "secrets":
      return secret(f);
    case "person-name":
      return personName(f);
    case "address":
      return address(f, locale);
  }
}

/** A look-alike for a hard negative sentence of the slug. */
function lookAlike(slug: EvalSlug, f: Faker): string {
  switch (slug) {
    case "email":
      return f.internet.username();
    case "phone":
      return f.string.numeric({ length: f.number.int({ min: 5, max: 8 }) });
    case "ssn":
      return `${f.string.alpha({ length: 2, casing: "upper" })}-${f.string.numeric(3)}-${f.string.numeric(4)}`;
    case "credit-card":
      return f.string.numeric({ length: 7 });
    case "ip-address":
      return `${f.number.int(9)}.${f.number.int(20)}.${f.number.int(9)}`;
    case "secrets":
      return f.git.commitSha();
    case "person-name":
      return f.helpers.arrayElement([
        () => f.company.name(),
        () => f.commerce.productName(),
        () => f.person.jobTitle(),
        () => f.location.city(),
        () => f.vehicle.vehicle(),
        () => f.commerce.department(),
        () => f.music.songName(),
        () => f.location.country(),
      ])();
    case "address":
      return f.helpers.arrayElement([
        () => f.location.city(),
        () => f.commerce.productName(),
        () => f.company.name(),
        () => f.location.country(),
      ])();
  }
}

function fill(template: string, v: string): { text: string; start: number } {
  const at = template.indexOf("{}");
  return { text: template.slice(0, at) + v + template.slice(at + 2), start: at };
}

/**
 * `rounds` cases per positive sentence and per negative sentence and locale, from a seeded faker
 * (the same text on every run).
 */
export function generate(sets: Record<EvalSlug, SentenceSet>, seed: number, rounds: number): Case[] {
  const cases: Case[] = [];
  for (const [slug, set] of Object.entries(sets) as [EvalSlug, SentenceSet][]) {
    const locales = LOCALE_SLUGS.includes(slug) ? Object.keys(LOCALES) : ["en_US"];
    for (const locale of locales) {
      const f = LOCALES[locale] as Faker;
      f.seed(seed);
      for (let r = 0; r < rounds; r++) {
        for (const t of set.positives) {
          const v = value(slug, f, locale);
          const { text, start } = fill(t, v);
          cases.push({ text, slug, entities: [{ slug, start, end: start + v.length }] });
        }
        for (const t of set.negatives) {
          const text = t.includes("{}") ? fill(t, lookAlike(slug, f)).text : t;
          cases.push({ text, slug, entities: [] });
        }
      }
    }
  }
  return cases;
}
