import { BERLIN_GIVEN_NAMES_DATA } from "./word-data/berlin-given-names.js";
import { COUNTRIES_DATA } from "./word-data/countries.js";
import { ENGLISH_WORDS_DATA } from "./word-data/english-words.js";
import { FOREIGN_WORDS_DATA } from "./word-data/foreign-words.js";
import { GIVEN_NAMES_DATA } from "./word-data/given-names.js";
import { NATIONAL_GIVEN_NAMES_DATA } from "./word-data/national-given-names.js";
import { NATIONAL_SURNAMES_DATA } from "./word-data/national-surnames.js";
import { NORDIC_WORDS_DATA } from "./word-data/nordic-words.js";
import { SPANISH_WORDS_DATA } from "./word-data/spanish-words.js";
import { SURNAMES_DATA } from "./word-data/surnames.js";

/**
 * The public name statistics behind the person-name detector (word-data/SOURCES.md): about 40,000 US
 * given names (Social Security Administration), 11,000 more registered in Berlin and 4,800 more from
 * the statistics offices and registries of other countries (national-given-names.ts), 88,799 US
 * surnames (Census Bureau, 1990) with 12,000 of Spain, Finland and Argentina (national-surnames.ts),
 * and 40,000 common English words (SCOWL) with the commonest words of six other European languages.
 * All lower case, ASCII; looked up with `nameKey`.
 */

function setOf(data: string): Set<string> {
  return new Set(data.split(" "));
}

export const GIVEN_NAME_SET = setOf(
  `${GIVEN_NAMES_DATA} ${BERLIN_GIVEN_NAMES_DATA} ${NATIONAL_GIVEN_NAMES_DATA}`,
);
export const SURNAME_SET = setOf(`${SURNAMES_DATA} ${NATIONAL_SURNAMES_DATA}`);
/** Words of ordinary writing: a capitalized one starts a sentence or a title more often than a name. */
export const ENGLISH_WORD_SET = setOf(ENGLISH_WORDS_DATA);
/**
 * The same in six other languages. Many given names are words there (`Blanca`, `Leone`, `Paula`), so
 * this set judges only the words after a given name, and names from outside the lists.
 */
export const FOREIGN_WORD_SET = setOf(FOREIGN_WORDS_DATA);
/**
 * Common words of Swedish, Norwegian and Danish, and the Spanish ones past the commonest 10,000,
 * that the sets above lack. Their subtitles also use many Dutch, German and French surnames as words
 * (`prinsen`, `horna`), so this set only says that a phrase which starts with no given name is a
 * thing (`Otrolig Granit Skor`, `Bicicleta Rústico de Hormigón` after `name:`;
 * docs/detectors.md#person-name-floors), never that a word after a given name is no surname.
 */
export const WIDER_WORD_SET = setOf(`${NORDIC_WORDS_DATA} ${SPANISH_WORDS_DATA}`);

/**
 * The form an Arabic word is looked up in: short vowels and the elongation mark dropped, the forms
 * of alef, a final `ة` and `ى` written one way (`فاطمة` and `فاطمه` are one name).
 */
export function arabicKey(word: string): string {
  return word
    .replace(/[\u064b-\u065f\u0670\u0640]/g, "")
    .replace(/[\u0622\u0623\u0625\u0671]/g, "\u0627")
    .replace(/\u0629/g, "\u0647")
    .replace(/\u0649/g, "\u064a");
}

/** The form a Greek word is looked up in: lower case, accents and diaeresis dropped. */
export function greekKey(word: string): string {
  return word
    .toLowerCase()
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "");
}

/** Country names in seven languages, words as `nameKey` writes them, joined by a space. */
export const COUNTRY_SET = new Set(COUNTRIES_DATA.split("|"));
/** The first word of every country's name: a phrase that starts with none of them is no country. */
export const COUNTRY_START_SET = new Set([...COUNTRY_SET].map((name) => name.split(" ")[0] as string));

/** Whether a capitalized phrase is a country's name (`Sierra Leone`, `Tunisia`, `Costa Rica`). */
export function isCountry(phrase: string): boolean {
  return COUNTRY_SET.has(
    phrase
      .split(/[^\p{L}'’]+/u)
      .filter((w) => w !== "")
      .map(nameKey)
      .join(" "),
  );
}

/**
 * The form a word is looked up in: lower case, a possessive `'s` dropped, accents and apostrophes
 * removed (`José` → `jose`, `O'Brien` → `obrien`, as the census writes it).
 */
export function nameKey(word: string): string {
  let w = word;
  const n = w.length;
  if (
    n > 2 &&
    (w.charCodeAt(n - 2) === 39 || w.charCodeAt(n - 2) === 0x2019) &&
    (w.charCodeAt(n - 1) | 32) === 115
  )
    w = w.slice(0, n - 2);
  w = w.toLowerCase();
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    if (c > 122 || c < 97) return w.normalize("NFD").replace(/[^a-z]/g, "");
  }
  return w;
}
