import assert from "node:assert/strict";
import { describe, it } from "node:test";
import "../helpers/property-seed.js";
import {
  ENGLISH_WORD_SET,
  FOREIGN_WORD_SET,
  GIVEN_NAME_SET,
  nameKey,
  SURNAME_SET,
  WIDER_WORD_SET,
} from "../../src/domain/detectors/name-data.js";
import {
  FILLER,
  INSTITUTION,
  NOT_FIRST,
  SURNAME_STOP,
  WORD_FLAGS,
} from "../../src/domain/detectors/name-lists.js";
import { findPersonNames } from "../../src/domain/detectors/person-name.js";
import { BERLIN_GIVEN_NAMES_DATA } from "../../src/domain/detectors/word-data/berlin-given-names.js";
import { GIVEN_NAMES_DATA } from "../../src/domain/detectors/word-data/given-names.js";
import { NATIONAL_GIVEN_NAMES_DATA } from "../../src/domain/detectors/word-data/national-given-names.js";
import { NATIONAL_SURNAMES_DATA } from "../../src/domain/detectors/word-data/national-surnames.js";
import { SURNAMES_DATA } from "../../src/domain/detectors/word-data/surnames.js";

/**
 * The given names and surnames of national statistics offices and registries
 * (docs/detectors.md#national-names): a name that only these lists hold is read where no cue
 * stands before it, as the SSA's, Berlin's and the US Census's names are; and none of their names
 * is a common word of the word lists.
 */

const NATIONAL_GIVEN = new Set(NATIONAL_GIVEN_NAMES_DATA.split(" "));
const NATIONAL_SURNAMES = new Set(NATIONAL_SURNAMES_DATA.split(" "));
const OLDER_GIVEN = new Set(`${GIVEN_NAMES_DATA} ${BERLIN_GIVEN_NAMES_DATA}`.split(" "));
const OLDER_SURNAMES = new Set(SURNAMES_DATA.split(" "));

/** One given name per source, each with a surname of the Spanish, Finnish or Argentine lists. */
const BY_SOURCE: [source: string, name: string][] = [
  ["INSEE, France", "Huguette Blazquez"],
  ["INE, Spain", "Inmaculada Exposito"],
  ["DVV, Finland", "Kaarina Virtanen"],
  ["SSB, Norway", "Ragnhild Saarinen"],
  ["SCB, Sweden", "Hampus Salonen"],
  ["DST, Denmark", "Preben Turunen"],
  ["Statistik Austria", "Waltraude Gimeno"],
  ["BFS, Switzerland", "Regula Asensio"],
  ["Statbel, Belgium", "Godelieve Llorente"],
  ["ONS, United Kingdom", "Bethan Sanchis"],
  ["CSO, Ireland", "Aoibheann Herranz"],
  ["IRN, Portugal", "Margarida Arranz"],
  ["Montevideo, Uruguay", "Elbio Moyano"],
  ["South Australia", "Narelle Mansilla"],
  ["Alberta, Canada", "Aganetha Barrionuevo"],
  ["DIA, New Zealand", "Raewyn Tuominen"],
  ["SRCeI, Chile", "Javiera Moyano"],
  ["SURS, Slovenia", "Mojca Gimeno"],
  ["Statistics Iceland", "Hrafnhildur Salonen"],
];

/** Sentences where no cue (`by`, `Dear`, `name:`) says that a name follows. */
const FRAMES = [
  (n: string) => `Yesterday ${n} said the build failed.`,
  (n: string) => `The ${n} account is overdue.`,
];

function reads(text: string, name: string): boolean {
  return findPersonNames(text).some((s) => text.slice(s.start, s.end).includes(name));
}

describe("given names and surnames of national statistics offices (docs/detectors.md#national-names)", () => {
  it("the test's names come from the national lists only, not from the older ones", () => {
    for (const [source, name] of BY_SOURCE) {
      const [given, surname] = name.split(" ").map(nameKey) as [string, string];
      assert.ok(NATIONAL_GIVEN.has(given) && !OLDER_GIVEN.has(given), `${source}: ${given}`);
      assert.ok(NATIONAL_SURNAMES.has(surname) && !OLDER_SURNAMES.has(surname), `${source}: ${surname}`);
      assert.ok(GIVEN_NAME_SET.has(given) && SURNAME_SET.has(surname), `${source}: wired into the sets`);
    }
  });

  for (const [source, name] of BY_SOURCE) {
    it(`${source}: ${name} is read without a cue`, () => {
      for (const frame of FRAMES) assert.ok(reads(frame(name), name), frame(name));
    });
  }

  it("a given name that is also a word or a product reads as a name beside a national surname", () => {
    // Such names need a clear surname (docs/detectors.md#national-names): the surname lists supply it.
    for (const name of ["Claude Virtanen", "Will Llorente", "Mark Karjalainen", "Grace Saarinen"]) {
      for (const frame of FRAMES) assert.ok(reads(frame(name), name), frame(name));
    }
  });

  it("phrases of common words of the countries' languages stay unread", () => {
    for (const phrase of [
      "Uusi Versio",
      "Informe Trimestral",
      "Reunión Anual",
      "Hyvää Huomenta",
      "Plaza Mayor",
    ]) {
      for (const frame of FRAMES) assert.deepEqual(findPersonNames(frame(phrase)), [], frame(phrase));
    }
  });

  it("no name of the national lists is a common word or a word of the hand-written lists", () => {
    const words = (key: string) =>
      ENGLISH_WORD_SET.has(key) ||
      FOREIGN_WORD_SET.has(key) ||
      WIDER_WORD_SET.has(key) ||
      ((WORD_FLAGS.get(key[0]?.toUpperCase() + key.slice(1)) ?? 0) &
        (SURNAME_STOP | INSTITUTION | FILLER | NOT_FIRST)) !==
        0;
    const clashes = [...NATIONAL_GIVEN, ...NATIONAL_SURNAMES].filter(words);
    assert.deepEqual(clashes, []);
    assert.ok(NATIONAL_GIVEN.size > 4500 && NATIONAL_SURNAMES.size > 11_000);
  });
});
