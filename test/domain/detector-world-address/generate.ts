import {
  type Faker,
  fakerCS_CZ,
  fakerDA,
  fakerDE,
  fakerDE_AT,
  fakerDE_CH,
  fakerEN_AU,
  fakerEN_CA,
  fakerEN_GB,
  fakerEN_IE,
  fakerEN_IN,
  fakerEN_US,
  fakerES,
  fakerES_MX,
  fakerFI,
  fakerFR,
  fakerFR_BE,
  fakerFR_CH,
  fakerIT,
  fakerNB_NO,
  fakerNL,
  fakerNL_BE,
  fakerPL,
  fakerPT_BR,
  fakerPT_PT,
  fakerSV,
} from "@faker-js/faker";

/**
 * Labelled text for the world address evaluation (docs/detectors.md#address-countries): each
 * country's address written in the order its post describes (UPU and the posts' addressing guides),
 * with street names, numbers, postcodes and places from @faker-js/faker's locale for that country
 * (the detector takes nothing from faker), placed in the contexts prompts carry them in: tickets,
 * e-mail signatures, letterheads, JSON, CSV, YAML, logs and curl commands.
 */

export type Group =
  | "en-NA"
  | "en-GB/IE"
  | "DACH"
  | "FR/BE/CH-fr"
  | "Benelux-nl"
  | "Iberia"
  | "IT"
  | "Nordics"
  | "CEE"
  | "LatAm"
  | "India"
  | "Japan"
  | "Oceania";

export interface Case {
  group: Group;
  text: string;
  /** Where the address stands; none for a hard negative. */
  entity: { start: number; end: number } | null;
}

/** An address as its lines; a one-line context joins them with ", ", a block with line breaks. */
type Lines = string[];
type Country = (f: Faker) => Lines;

const pick = <T>(f: Faker, xs: readonly T[]): T => f.helpers.arrayElement(xs);
const maybe = (f: Faker, p: number) => f.number.float({ min: 0, max: 1 }) < p;
const num = (f: Faker, min: number, max: number) => String(f.number.int({ min, max }));
/** faker's street names sometimes carry a stray leading comma or space (es). */
const street = (f: Faker) => f.location.street().replace(/^[ ,]+/, "");
/** A surname as an address writes it: faker's es_MX joins some in lower case (`Quintero de la cruz`). */
const surname = (f: Faker) =>
  f.person
    .lastName()
    .replace(/(^|[ -])(?!(?:de|la|del|y)\b)(\p{Ll})/gu, (_, a, b: string) => a + b.toUpperCase());

const US: Country = (f) => {
  const lines = [
    `${num(f, 1, 9999)} ${street(f)}${maybe(f, 0.3) ? ` ${f.location.secondaryAddress()}` : ""}`,
    `${f.location.city()}, ${f.location.state({ abbreviated: true })} ${f.location.zipCode()}`,
  ];
  if (maybe(f, 0.3)) lines.push(pick(f, ["USA", "United States"]));
  return lines;
};
const CA: Country = (f) => {
  const lines = [
    `${num(f, 1, 9999)} ${street(f)}`,
    `${f.location.city()}, ${f.location.state({ abbreviated: true })} ${f.location.zipCode()}`,
  ];
  if (maybe(f, 0.3)) lines.push("Canada");
  return lines;
};
/** faker's inward codes hold letters Royal Mail never uses (O, I, ...): the inward part is drawn here. */
const INWARD = "ABDEFGHJLNPQRSTUWXYZ";
const ukPostcode = (f: Faker) =>
  `${f.location.zipCode().split(" ")[0]} ${num(f, 0, 9)}${pick(f, [...INWARD])}${pick(f, [...INWARD])}`;
/** An Eircode: a routing key and four characters of the letters An Post uses. */
const EIR = "0123456789ACDEFHKNPRTVWXY";
const eircode = (f: Faker) =>
  `${pick(f, [..."ACDEFHKNPRTVWXY"])}${num(f, 10, 99)} ${Array.from({ length: 4 }, () => pick(f, [...EIR])).join("")}`;
const GB: Country = (f) => {
  const lines = [`${num(f, 1, 300)} ${street(f)}`, f.location.city(), ukPostcode(f)];
  if (maybe(f, 0.3)) lines.push(pick(f, ["United Kingdom", "UK"]));
  return lines;
};
const IE: Country = (f) => {
  const county = pick(f, [
    "Dublin",
    "Cork",
    "Galway",
    "Kerry",
    "Mayo",
    "Wicklow",
    "Meath",
    "Clare",
    "Limerick",
  ]);
  const lines = [`${num(f, 1, 300)} ${street(f)}`, f.location.city(), `Co. ${county}`];
  lines.push(eircode(f));
  if (maybe(f, 0.4)) lines.push("Ireland");
  return lines;
};
/** Street name, then the number: most of continental Europe. */
const numberAfter = (f: Faker, unit = "") => `${street(f)} ${f.location.buildingNumber()}${unit}`;
const DE: Country = (f) => {
  const lines = [numberAfter(f), `${f.location.zipCode()} ${f.location.city()}`];
  if (maybe(f, 0.3)) lines.push("Deutschland");
  return lines;
};
const AT: Country = (f) => {
  const lines = [
    numberAfter(f, maybe(f, 0.4) ? `/${num(f, 1, 12)}` : ""),
    `${f.location.zipCode()} ${f.location.city()}`,
  ];
  if (maybe(f, 0.4)) lines.push(pick(f, ["Österreich", "Austria"]));
  return lines;
};
const CH: Country = (f) => {
  const lines = [numberAfter(f), `${maybe(f, 0.3) ? "CH-" : ""}${f.location.zipCode()} ${f.location.city()}`];
  if (maybe(f, 0.3)) lines.push(pick(f, ["Schweiz", "Switzerland"]));
  return lines;
};
const FR: Country = (f) => {
  const lines = [
    `${num(f, 1, 180)}${maybe(f, 0.1) ? " bis" : ""} ${street(f)}`,
    `${f.location.zipCode()} ${f.location.city()}`,
  ];
  if (maybe(f, 0.3)) lines.push("France");
  return lines;
};
const BE_FR: Country = (f) => {
  const lines = [numberAfter(f), `${f.location.zipCode().replace(/^0/, "1")} ${f.location.city()}`];
  if (maybe(f, 0.3)) lines.push(pick(f, ["Belgique", "Belgium"]));
  return lines;
};
const CH_FR: Country = (f) => [
  `${street(f)} ${num(f, 1, 120)}`,
  `${f.location.zipCode()} ${f.location.city()}`,
];
const NL: Country = (f) => {
  const lines = [numberAfter(f), `${f.location.zipCode()} ${f.location.city()}`];
  if (maybe(f, 0.3)) lines.push(pick(f, ["Nederland", "Netherlands"]));
  return lines;
};
const BE_NL: Country = (f) => {
  const lines = [
    numberAfter(f, maybe(f, 0.2) ? ` bus ${num(f, 1, 20)}` : ""),
    `${f.location.zipCode().replace(/^0/, "2")} ${f.location.city()}`,
  ];
  if (maybe(f, 0.3)) lines.push(pick(f, ["België", "Belgium"]));
  return lines;
};
const ES: Country = (f) => {
  const unit = maybe(f, 0.5) ? `, ${num(f, 1, 9)}º ${pick(f, ["A", "B", "C", "Izda.", "Dcha."])}` : "";
  const lines = [`${street(f)}, ${num(f, 1, 200)}${unit}`, `${f.location.zipCode()} ${f.location.city()}`];
  if (maybe(f, 0.3)) lines.push(pick(f, ["España", "Spain"]));
  return lines;
};
const PT: Country = (f) => {
  const lines = [
    `${street(f)}, ${num(f, 1, 400)}${maybe(f, 0.3) ? ` ${num(f, 1, 9)}º ${pick(f, ["Esq.", "Dto.", "A"])}` : ""}`,
    `${f.location.zipCode()} ${f.location.city()}`,
  ];
  if (maybe(f, 0.3)) lines.push("Portugal");
  return lines;
};
const IT: Country = (f) => {
  const lines = [
    `${street(f)} ${num(f, 1, 200)}`,
    `${f.location.zipCode()} ${f.location.city()} (${f.location.state({ abbreviated: true })})`,
  ];
  if (maybe(f, 0.3)) lines.push("Italia");
  return lines;
};
const SE: Country = (f) => {
  const zip = f.location.zipCode();
  const lines = [numberAfter(f), `${zip.slice(0, 3)} ${zip.slice(3)} ${f.location.city()}`];
  if (maybe(f, 0.3)) lines.push(pick(f, ["Sverige", "Sweden"]));
  return lines;
};
const DK: Country = (f) => {
  const lines = [
    `${street(f)} ${f.location.buildingNumber()}${maybe(f, 0.4) ? `, ${num(f, 1, 6)}. ${pick(f, ["th", "tv", "mf"])}` : ""}`,
    `${f.location.zipCode()} ${f.location.city()}`,
  ];
  if (maybe(f, 0.3)) lines.push(pick(f, ["Danmark", "Denmark"]));
  return lines;
};
const NO: Country = (f) => {
  const lines = [numberAfter(f), `${f.location.zipCode()} ${f.location.city().toUpperCase()}`];
  if (maybe(f, 0.3)) lines.push(pick(f, ["Norge", "Norway"]));
  return lines;
};
const FI: Country = (f) => {
  const lines = [
    `${street(f)} ${num(f, 1, 90)}${maybe(f, 0.5) ? ` ${pick(f, ["A", "B", "C"])} ${num(f, 1, 40)}` : ""}`,
    `${f.location.zipCode()} ${f.location.city()}`,
  ];
  if (maybe(f, 0.3)) lines.push(pick(f, ["Suomi", "Finland"]));
  return lines;
};
const PL: Country = (f) => {
  const name = f.location.street().replace(/^\p{Ll}+\.? /u, "");
  const no = `${f.location.buildingNumber()}${maybe(f, 0.5) ? `/${num(f, 1, 80)}` : ""}`;
  const lines = [
    `${pick(f, ["ul.", "ul.", "al.", "pl.", "os."])} ${name} ${no}`,
    `${f.location.zipCode()} ${f.location.city()}`,
  ];
  if (maybe(f, 0.3)) lines.push(pick(f, ["Polska", "Poland"]));
  return lines;
};
const CZ: Country = (f) => {
  const zip = f.location.zipCode().replace(/ /g, "");
  const no = maybe(f, 0.5) ? `${num(f, 100, 2999)}/${num(f, 1, 90)}` : num(f, 1, 999);
  const lines = [`${street(f)} ${no}`, `${zip.slice(0, 3)} ${zip.slice(3)} ${f.location.city()}`];
  if (maybe(f, 0.3)) lines.push(pick(f, ["Česká republika", "Czech Republic", "Czechia"]));
  return lines;
};
const BR: Country = (f) => {
  const unit = maybe(f, 0.5) ? ` - ${pick(f, ["apto", "apto.", "sala", "casa"])} ${num(f, 1, 300)}` : "";
  const lines = [
    `${street(f)}, ${num(f, 1, 3000)}${unit}`,
    `${f.location.city()} - ${f.location.state({ abbreviated: true })}`,
    f.location.zipCode(),
  ];
  if (maybe(f, 0.3)) lines.push("Brasil");
  return lines;
};
const MX: Country = (f) => {
  const lines = [
    `${street(f)} ${num(f, 1, 999)}${maybe(f, 0.3) ? ` Int. ${num(f, 1, 40)}` : ""}`,
    `Col. ${surname(f)}`,
    `${pick(f, ["CP", "C.P."])} ${f.location.zipCode()} ${f.location.city()}, ${f.location.state()}`,
  ];
  if (maybe(f, 0.3)) lines.push("México");
  return lines;
};
const AR: Country = (f) => {
  const province = pick(f, [
    "Buenos Aires",
    "Córdoba",
    "Santa Fe",
    "Mendoza",
    "Tucumán",
    "Salta",
    "Neuquén",
    "Chubut",
  ]);
  const cpa = `${f.string.alpha({ length: 1, casing: "upper" })}${num(f, 1000, 9999)}${f.string.alpha({ length: 3, casing: "upper" })}`;
  const lines = [
    `${pick(f, ["Av.", "Avenida", "Calle"])} ${f.person.lastName()} ${num(f, 1, 5000)}${maybe(f, 0.4) ? `, Piso ${num(f, 1, 20)}, Depto. ${pick(f, ["A", "B", "C", "D"])}` : ""}`,
    `${cpa} ${f.location.city()}`,
    province,
  ];
  if (maybe(f, 0.4)) lines.push("Argentina");
  return lines;
};
const IN: Country = (f) => {
  // India Post's PIN codes start with 1-9 (the first digit is the postal region); faker draws a 0 too.
  const pin = f.location
    .zipCode()
    .replace(/ /g, "")
    .replace(/^0/, num(f, 1, 9));
  const lines = [
    `${pick(f, ["Flat", "House No.", "Plot"])} ${num(f, 1, 400)}${maybe(f, 0.5) ? `, ${f.person.lastName()} ${pick(f, ["Apartments", "Residency", "Towers", "Nagar"])}` : ""}`,
    street(f),
    `${f.location.city()} - ${pin}`,
    f.location.state(),
  ];
  if (maybe(f, 0.4)) lines.push("India");
  return lines;
};
/** Romanized Japanese: block numbers, district, ward or city, prefecture and postcode (Japan Post's English guide). */
const JP_DISTRICTS = [
  "Jingumae",
  "Roppongi",
  "Umeda",
  "Sakae",
  "Tenjin",
  "Nishishinjuku",
  "Marunouchi",
  "Higashiyama",
  "Kita",
  "Minamiaoyama",
  "Honcho",
  "Chuo",
  "Nakamachi",
  "Ekimae",
  "Kamiyacho",
  "Shiba",
  "Namba",
  "Kawaramachi",
];
const JP_WARDS = [
  "Shibuya-ku",
  "Minato-ku",
  "Chiyoda-ku",
  "Shinjuku-ku",
  "Kita-ku",
  "Naka-ku",
  "Chuo-ku",
  "Nishi-ku",
  "Sakyo-ku",
  "Aoba-ku",
  "Higashi-ku",
  "Hakata-ku",
];
const JP_PLACES: [string | null, string][] = [
  [null, "Tokyo"],
  ["Osaka", "Osaka"],
  ["Yokohama", "Kanagawa"],
  ["Nagoya", "Aichi"],
  ["Kyoto", "Kyoto"],
  ["Sapporo", "Hokkaido"],
  ["Fukuoka", "Fukuoka"],
  ["Sendai", "Miyagi"],
  ["Kobe", "Hyogo"],
];
const JP: Country = (f) => {
  const [city, pref] = pick(f, JP_PLACES);
  const block = `${num(f, 1, 9)}-${num(f, 1, 30)}${maybe(f, 0.7) ? `-${num(f, 1, 20)}` : ""}`;
  const lines = [`${block} ${pick(f, JP_DISTRICTS)}`, pick(f, JP_WARDS)];
  if (city !== null) lines.push(city);
  lines.push(`${pref} ${num(f, 100, 999)}-${num(f, 1000, 9999)}`);
  if (maybe(f, 0.4)) lines.push("Japan");
  if (maybe(f, 0.3)) lines.unshift(`${pick(f, ["Room", "Apt."])} ${num(f, 101, 1203)}`);
  return lines;
};
const AU: Country = (f) => {
  const lines = [
    `${maybe(f, 0.3) ? `Unit ${num(f, 1, 40)}, ` : ""}${num(f, 1, 400)} ${street(f)}`,
    `${f.location.city()} ${f.location.state({ abbreviated: true })} ${f.location.zipCode()}`,
  ];
  if (maybe(f, 0.3)) lines.push("Australia");
  return lines;
};
const NZ_CITIES = [
  "Auckland",
  "Wellington",
  "Christchurch",
  "Hamilton",
  "Tauranga",
  "Dunedin",
  "Napier",
  "Nelson",
];
const NZ: Country = (f) => {
  const lines = [
    `${num(f, 1, 400)} ${street(f)}`,
    f.location.city(),
    `${pick(f, NZ_CITIES)} ${num(f, 1010, 9893)}`,
  ];
  if (maybe(f, 0.5)) lines.push("New Zealand");
  return lines;
};

export const GROUPS: Record<Group, [Faker, Country][]> = {
  "en-NA": [
    [fakerEN_US, US],
    [fakerEN_CA, CA],
  ],
  "en-GB/IE": [
    [fakerEN_GB, GB],
    [fakerEN_IE, IE],
  ],
  DACH: [
    [fakerDE, DE],
    [fakerDE_AT, AT],
    [fakerDE_CH, CH],
  ],
  "FR/BE/CH-fr": [
    [fakerFR, FR],
    [fakerFR_BE, BE_FR],
    [fakerFR_CH, CH_FR],
  ],
  "Benelux-nl": [
    [fakerNL, NL],
    [fakerNL_BE, BE_NL],
  ],
  Iberia: [
    [fakerES, ES],
    [fakerPT_PT, PT],
  ],
  IT: [[fakerIT, IT]],
  Nordics: [
    [fakerSV, SE],
    [fakerDA, DK],
    [fakerNB_NO, NO],
    [fakerFI, FI],
  ],
  CEE: [
    [fakerPL, PL],
    [fakerCS_CZ, CZ],
  ],
  LatAm: [
    [fakerPT_BR, BR],
    [fakerES_MX, MX],
    [fakerES, AR],
  ],
  India: [[fakerEN_IN, IN]],
  Japan: [[fakerEN_US, JP]],
  Oceania: [
    [fakerEN_AU, AU],
    [fakerEN_AU, NZ],
  ],
};

/**
 * Where an address stands. `{}` takes the address on one line, `{ml}` as a block of lines;
 * `{n}` takes a hard negative's look-alike value.
 */
export interface Contexts {
  positives: string[];
  negatives: string[];
}

/** Values that look like parts of an address and are none: amounts, codes, places without a street. */
function lookAlike(f: Faker): string {
  return pick(f, [
    () => f.location.city(),
    () => f.company.name(),
    () => `${f.number.int({ min: 2, max: 9999 })} ${f.location.city()}`,
    () => f.commerce.price({ min: 100, max: 99999 }),
    () => `${f.number.int({ min: 1000, max: 99999 })} ${f.commerce.product()}`,
    () => f.date.past().toISOString().slice(0, 10),
    () => `${f.location.country()}`,
    () => f.string.alphanumeric({ length: 8, casing: "upper" }),
  ])();
}

function place(template: string, value: string): { text: string; start: number } {
  const at = template.indexOf("{");
  const close = template.indexOf("}", at);
  return { text: template.slice(0, at) + value + template.slice(close + 1), start: at };
}

/** `rounds` addresses per country and context, and `rounds` negatives per group and negative context. */
export function generate(contexts: Contexts, seed: number, rounds: number): Case[] {
  const cases: Case[] = [];
  for (const [group, countries] of Object.entries(GROUPS) as [Group, [Faker, Country][]][]) {
    countries.forEach(([f, country], i) => {
      f.seed(seed + i * 7919);
      for (let r = 0; r < rounds; r++) {
        for (const t of contexts.positives) {
          const lines = country(f);
          const value = t.includes("{ml}") ? lines.join("\n") : lines.join(", ");
          const { text, start } = place(t, value);
          cases.push({ group, text, entity: { start, end: start + value.length } });
        }
      }
    });
    const f = countries[0]?.[0] as Faker;
    f.seed(seed + 104729);
    for (let r = 0; r < rounds; r++) {
      for (const t of contexts.negatives) {
        const text = t.includes("{n}") ? place(t, lookAlike(f)).text : t;
        cases.push({ group, text, entity: null });
      }
    }
  }
  return cases;
}
