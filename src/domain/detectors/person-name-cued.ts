import type { Span } from "../content-scan.js";
import {
  arabicKey,
  ENGLISH_WORD_SET,
  FOREIGN_WORD_SET,
  GIVEN_NAME_SET,
  greekKey,
  nameKey,
  SURNAME_SET,
  WIDER_WORD_SET,
} from "./name-data.js";
import { FILLER, GIVEN, NOT_FIRST, SURNAME_STOP, WORD_FLAGS } from "./name-lists.js";
import { ARABIC_GIVEN_NAMES_DATA } from "./word-data/arabic-names.js";
import { ARABIC_WORDS_DATA } from "./word-data/arabic-words.js";
import { GREEK_WORDS_DATA } from "./word-data/greek-words.js";

/**
 * Person names that the context marks, in any case and in scripts without capitals
 * (docs/detectors.md#person-name-world): after a greeting, a sign-off, an honorific, a mail header
 * or a field named for a person, and before the honorific suffixes of Japanese, Chinese and Korean.
 * The capitalized-word rules (person-name.ts) need a capital; these need the cue instead, so
 * `hi john`, `Dear MARIA GARCIA`, `From: "Doe, Jane" <...>`, `"customer_name": "li na"`,
 * `Уважаемый Иван Петров`, `السيد أحمد محمد`, `田中太郎様` and `김민준 님` are read.
 *
 * No pattern pass over the text: the Latin cues are read around a few characters found with
 * `indexOf` (`:`, `=`, line breaks), and the other scripts' cue words are searched only in a text
 * that holds their letters. Words in the Latin script must still look like a name: after a greeting
 * or sign-off the first word is a given name of the public lists (or the name fills its line);
 * after an honorific, a header or a field each word is a listed name or no common word of the seven
 * languages.
 */

enum Kind {
  /** A greeting or an introduction: the name follows, a given name of the lists first. */
  Greeting = 1,
  /** A sign-off: the name follows after a comma or on the next line. */
  SignOff = 2,
  /** A mail header: at a line's start, with a colon. */
  Header = 3,
  /** A field named for a person: `name:`, `"author": "`, `customer_name=`. */
  Field = 4,
  /** An honorific: the name follows, in the span. */
  Title = 5,
  /** An honorific written with a capital (`Herr`, `Pan`, `Miss`: words otherwise). */
  CapitalTitle = 6,
  /** An honorific written after the name (`様`, `先生`, `님`). */
  After = 7,
}

const GREETINGS =
  "hi|hello|hey|dear|hallo|liebe|lieber|bonjour|salut|cher|chère|hola|estimado|estimada|querido|querida|ciao|caro|cara|gentile|olá|ola|oi|prezado|prezada|hej|hei|hallå|moi|cześć|czesc|witam|ahoj|dobrý den|hoi|beste|sehr geehrter|sehr geehrte|geehrter|geehrte|geachte|kære|kjære|kära|käre|hyvä|vážený|vážená|vážení|szanowny|szanowna|szanowni|drogi|droga|my name is|je m'appelle|ich bin|me llamo|mi chiamo|meu nome é";
const SIGN_OFFS =
  "thanks|thank you|regards|best regards|kind regards|warm regards|best|cheers|sincerely|yours truly|mit freundlichen grüßen|mit freundlichen grüssen|viele grüße|beste grüße|liebe grüße|grüße|gruß|cordialement|bien à vous|salutations|bisous|saludos|atentamente|un saludo|cordiali saluti|distinti saluti|saluti|atenciosamente|abraços|cumprimentos|med vänliga hälsningar|vänliga hälsningar|hälsningar|mvh|med venlig hilsen|venlig hilsen|vennlig hilsen|hilsen|pozdrawiam|z poważaniem|s pozdravem|met vriendelijke groet|vriendelijke groet|groeten|signed";
const HEADERS = "from|to|cc|bcc|reply-to|sender|von|an|de|para|à|od|do|van|aan|från|till|fra|til|da|a";
const FIELDS =
  "name|full_name|fullname|full name|customer_name|customername|customer|contact_name|contact|author|owner|assignee|reporter|patient|employee|employee_name|client_name|display_name|displayname|first_name|firstname|last_name|lastname|recipient|requester|nombre|nom|nome|imię|imie|navn|namn|naam";
const TITLES =
  "mr|mrs|ms|mx|dr|prof|mme|mlle|sr|sra|srta|dott|dottssa|sig|sigra|dhr|mevr|hr|señor|señora|signor|signora|monsieur|madame|doña";
const CAPITAL_TITLES = "miss|herr|frau|m|pan|pani|don|fru|dona";

/** Cues in other scripts; their words carry no case, or only a capital that the rules need. */
const OTHER_GREETINGS =
  "уважаемый|уважаемая|дорогой|дорогая|здравствуйте|привет|шановний|шановна|αγαπητέ|αγαπητή|αγαπητε|αγαπητη|γεια σου|мене зовут|меня зовут|عزيزي|عزيزتي|مرحبا|नमस्ते|प्रिय|尊敬的|亲爱的|你好|안녕하세요|こんにちは";
const OTHER_SIGN_OFFS =
  "с уважением|з повагою|με εκτίμηση|φιλικά|مع التحيات|مع تحياتي|धन्यवाद|사랑합니다|감사합니다";
const OTHER_HEADERS = "от|кому|копия|από|προς|من|إلى";
const OTHER_FIELDS = "имя|фио|όνομα|الاسم|اسم|नाम|姓名|名前|氏名|이름|성명";
const OTHER_TITLES =
  "господин|госпожа|г-н|г-жа|пан|пані|κύριε|κύριος|κυρία|κ\\.|السيد|السيدة|الأستاذ|الدكتور|श्री|श्रीमती|सुश्री|डॉ\\.|डॉ";
const OTHER_AFTER = "様|さま|さん|先生|氏|ちゃん|殿|女士|小姐|老师|선생님|님|씨";

const KIND = new Map<string, Kind>();
for (const [list, kind] of [
  [GREETINGS, Kind.Greeting],
  [OTHER_GREETINGS, Kind.Greeting],
  [SIGN_OFFS, Kind.SignOff],
  [OTHER_SIGN_OFFS, Kind.SignOff],
  [HEADERS, Kind.Header],
  [OTHER_HEADERS, Kind.Header],
  [FIELDS, Kind.Field],
  [OTHER_FIELDS, Kind.Field],
  [TITLES, Kind.Title],
  [OTHER_TITLES, Kind.Title],
  [CAPITAL_TITLES, Kind.CapitalTitle],
  [OTHER_AFTER, Kind.After],
] as const) {
  for (const cue of list.split("|")) KIND.set(cue.replace(/\\/g, ""), kind);
}

/** A cue as people write it: lower case, capitalized, in capitals (the pattern is case-sensitive: a case-blind one costs more per character). */
function caseForms(w: string): string[] {
  const cap = (w[0] as string).toUpperCase() + w.slice(1);
  return [...new Set([w, cap, w.toUpperCase().replace(/\\\./g, "\\.")])];
}

/** Longest first, so that `best regards` wins over `best` and `kind regards` is one cue. */
function alternation(...lists: string[]): string {
  return lists
    .flatMap((l) => l.split("|"))
    .flatMap((w) => caseForms(w))
    .sort((a, b) => b.length - a.length)
    .map((w) => w.replace(/ /g, "[ \\t]{1,2}"))
    .join("|");
}

/** What must follow each kind of cue, checked in the pattern so that `to`, `de` or `best` in prose cost one failed lookahead. */
const FOLLOW: Record<Kind, string> = {
  [Kind.Greeting]: String.raw`(?=[ \t,:!])`,
  [Kind.SignOff]: String.raw`(?=[ \t]{0,2}[,\r\n!.-])`,
  [Kind.Header]: String.raw`(?=[ \t]?[:：])`,
  [Kind.Field]: String.raw`(?=["']?[ \t]{0,2}[:=：]|[,;\t\r\n"])`,
  [Kind.Title]: String.raw`(?=\.?[ \t\u00a0\u4e00-\u9fff])`,
  [Kind.CapitalTitle]: String.raw`(?=\.?[ \t\u00a0])`,
  [Kind.After]: "",
};

function cues(lists: [string, Kind][], keep: (word: string) => boolean): string {
  return lists
    .map(([list, kind]) => {
      const words = list.split("|").filter(keep);
      return words.length === 0 ? "" : `(?:${alternation(words.join("|"))})${FOLLOW[kind]}`;
    })
    .filter((a) => a !== "")
    .join("|");
}

const LISTS: [string, Kind][] = [
  [GREETINGS, Kind.Greeting],
  [SIGN_OFFS, Kind.SignOff],
  [HEADERS, Kind.Header],
  [FIELDS, Kind.Field],
  [TITLES, Kind.Title],
  [CAPITAL_TITLES, Kind.CapitalTitle],
  [OTHER_GREETINGS, Kind.Greeting],
  [OTHER_SIGN_OFFS, Kind.SignOff],
  [OTHER_HEADERS, Kind.Header],
  [OTHER_FIELDS, Kind.Field],
  [OTHER_TITLES, Kind.Title],
  [OTHER_AFTER, Kind.After],
];

enum Script {
  Latin = 1,
  Cyrillic = 2,
  Greek = 3,
  Arabic = 4,
  Devanagari = 5,
  Han = 6,
  Hangul = 7,
}

function scriptOf(c: number): Script | 0 {
  if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7))
    return Script.Latin;
  if (c >= 0x400 && c <= 0x52f) return Script.Cyrillic;
  if (c >= 0x370 && c <= 0x3ff) return Script.Greek;
  if (c >= 0x1f00 && c <= 0x1fff) return Script.Greek;
  if (c >= 0x600 && c <= 0x6ff) return Script.Arabic;
  if (c >= 0x900 && c <= 0x97f) return Script.Devanagari;
  if ((c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf))
    return Script.Han;
  if (c >= 0xac00 && c <= 0xd7a3) return Script.Hangul;
  return 0;
}

function isLetterOf(c: number, script: Script): boolean {
  if (script === Script.Latin) return scriptOf(c) === Script.Latin;
  if (script === Script.Arabic)
    return (c >= 0x620 && c <= 0x64a) || (c >= 0x64b && c <= 0x65f) || c === 0x670;
  if (script === Script.Devanagari) return c >= 0x900 && c <= 0x97f && c !== 0x964 && c !== 0x965;
  return scriptOf(c) === script;
}

/** A cue word written with a letter outside ASCII: the Latin cues of the other pass (`olá`, `señor`, `grüße`) and the other scripts' cue words. */
function isOtherCue(word: string): boolean {
  return !/^[\x20-\x7e]+$/.test(word.replace(/\\/g, ""));
}
function startsLatin(word: string): boolean {
  return scriptOf(word.charCodeAt(0)) === Script.Latin;
}
/**
 * The cue words of the other scripts, each with what must follow it (`\b` is ASCII only: their start
 * is checked in code), in two patterns: those that start with a Latin letter and those that start
 * with a letter of another script. No word starts in both, so at any position at most one pattern
 * can match, and the earlier of their matches is the one pattern of all of them would find. One
 * pattern of all of them, tried at every character of a long text, cost more than every other pass
 * of the detector together (docs/detectors.md#person-name-world): each is now tried only where a
 * cheap test says a cue can start.
 */
const FOREIGN_CUE = new RegExp(
  cues(LISTS, (w) => isOtherCue(w) && !startsLatin(w)),
  "uy",
);
const LATIN_CUE = new RegExp(
  cues(LISTS, (w) => isOtherCue(w) && startsLatin(w)),
  "uy",
);

/** Every cue word of a pass as the pattern spells it: each case form, spaces as written. */
function cueForms(keep: (word: string) => boolean): string[] {
  return LISTS.flatMap(([list]) => list.split("|").filter(keep))
    .flatMap((w) => caseForms(w))
    .map((w) => w.replace(/\\/g, ""));
}

/** The first letters of the other scripts' cue words: a cue of theirs starts only at one of them. */
const FOREIGN_FIRST = new RegExp(
  `[${[...new Set(cueForms((w) => isOtherCue(w) && !startsLatin(w)).map((w) => w[0] as string))].join("")}]`,
  "g",
);

/**
 * For the Latin cues written with a letter outside ASCII: the first such letter of each cue, and how
 * far after the cue's start it can stand (each space of the cue may be two). Before that letter the
 * cue is ASCII, so the first of these letters at or after a cue's start is the one its spelling holds:
 * a cue can start only a bounded distance before one of them.
 */
const LATIN_MARK_REACH = new Map<number, number>();
/** The first letters of those cues. */
const LATIN_CUE_FIRST = new Set<number>();
for (const form of cueForms((w) => isOtherCue(w) && startsLatin(w))) {
  LATIN_CUE_FIRST.add(form.charCodeAt(0));
  let reach = 0;
  for (let i = 0; i < form.length; i++) {
    const c = form.charCodeAt(i);
    if (c > 0x7e) {
      LATIN_MARK_REACH.set(c, Math.max(LATIN_MARK_REACH.get(c) ?? 0, reach));
      break;
    }
    reach += c === 32 ? 2 : 1;
  }
}
const LATIN_MARK = new RegExp(
  `[${[...LATIN_MARK_REACH.keys()].map((c) => String.fromCharCode(c)).join("")}]`,
  "g",
);
/** The Latin cues of this pass that a capital form writes in ASCII (`GRUSS` for `gruß`): found where they are spelled. */
const LATIN_ASCII_FORMS = cueForms((w) => isOtherCue(w) && startsLatin(w)).filter((f) =>
  /^[\x20-\x7e]+$/.test(f),
);
const LATIN_ASCII_START =
  LATIN_ASCII_FORMS.length === 0
    ? null
    : new RegExp(
        LATIN_ASCII_FORMS.map((f) =>
          f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ /g, "[ \\t]{1,2}"),
        ).join("|"),
        "g",
      );
for (const form of cueForms((w) => isOtherCue(w) && !startsLatin(w)))
  if (LATIN_CUE_FIRST.has(form.charCodeAt(0))) throw new Error(`cue ${form} starts both passes`);

/** Words that follow a cue in those scripts without being a name (`Уважаемые коллеги`, `مرحبا بكم`). */
const OTHER_STOP = new Set(
  "коллеги|клиент|клиенты|друзья|все|всем|команда|пользователь|κύριοι|φίλοι|όλοι|بكم|بك|جميعا|الجميع|في|من|على|إلى|عن|مع|सभी|आप|दोस्तों|जी".split(
    "|",
  ),
);

/** Honorifics and degrees after a name, kept in its span (docs/detectors.md#person-name-world). */
const SUFFIX =
  /^,?[ \t]{1,2}(?:Jr\.?|Sr\.?|II|III|IV|Ph\.?D\.?|M\.?D\.?|DDS|DVM|Esq\.?|CPA|RN|JR\.?|SR\.?|jr\.?|sr\.?|PHD|phd|ph\.d\.|md|ESQ\.?|esq\.?)(?![\p{L}\p{N}])/u;

interface Word {
  start: number;
  end: number;
}

/** The next word after `at` (spaces and tabs skipped): letters of one script, with `'` `’` `-` inside. */
function wordAt(text: string, at: number, script: Script | 0, max: number): Word | null {
  let i = at;
  while (i < at + 3 && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
  const first = text.charCodeAt(i);
  const s = script === 0 ? scriptOf(first) : script;
  if (s === 0 || !isLetterOf(first, s)) return null;
  const start = i;
  while (i < text.length && i - start < max) {
    const c = text.charCodeAt(i);
    if (isLetterOf(c, s)) i++;
    else if (
      (c === 39 || c === 0x2019 || c === 45) &&
      s !== Script.Han &&
      s !== Script.Hangul &&
      isLetterOf(text.charCodeAt(i + 1), s)
    )
      i += 2;
    else break;
  }
  if (i - start >= max) return null;
  return { start, end: i };
}

const PARTICLES = new Set([
  "van",
  "von",
  "der",
  "den",
  "de",
  "da",
  "do",
  "dos",
  "das",
  "di",
  "del",
  "della",
  "la",
  "le",
  "du",
  "y",
  "bin",
  "ibn",
  "al",
]);

/**
 * Words that end a name written in lower case or capitals after a cue, though many are census
 * surnames or given names too (`said`, `will`, `avant`, `lundi`): the closed classes of seven
 * languages (pronouns, articles, prepositions, conjunctions, auxiliaries and modals), days, times
 * and dates, thanks and greetings, and the verbs and adverbs that most often follow a name in a message (`mr smith said`,
 * `call mrs. jane doe tomorrow`, `thanks, will check`). Capitals tell a name from these words when
 * a text has them; in lower case these words do (docs/detectors.md#person-name-mid-line).
 */
const NOT_IN_NAME = new Set(
  `a an the and or but nor so if then than that this these those there here where when while who whom whose which what why how
  i me my you your he him his she her it its we us our they them their one ones
  is are was were be been being am do does did done has have had having will would shall should can could may might must
  not no yes ok okay please also too just only still already again now soon later today tonight tomorrow yesterday
  morning afternoon evening night week weekend month year
  monday tuesday wednesday thursday friday saturday sunday
  at by for from in into of off on onto out over to up with without about above after before below between during
  under until upon via per as like near since through
  said says say saying told tells tell asked asks ask wrote writes write sent sends send called calls call replied
  replies reply wants wanted want needs needed need thinks thought think knows knew know
  agreed agrees confirmed confirms approved approves signed signs left leaves joined joins came comes come went goes go
  got gets get gave gives give took takes take made makes make will check checked checks
  back away home all both each every any some many much more most very really well
  thanks thank hello hi hey merci bonjour salut danke bitte hallo gracias hola grazie ciao obrigado obrigada bedankt dank
  le la les un une des du de et ou mais donc car ni est sont était été être avoir avait ai a il elle ils elles nous vous je tu
  son sa ses leur leurs ce cette ces qui que quoi dont où avec sans pour par sur sous dans chez vers avant après
  depuis pendant entre contre aujourd hui demain hier ce soir matin
  lundi mardi mercredi jeudi vendredi samedi dimanche
  a dit dis écrit envoyé appelé veut doit peut va vient
  der die das den dem des ein eine einen einem einer und oder aber denn sondern ist sind war waren hat haben hatte wird
  werden wurde kann könnte muss soll will er sie es wir ihr ich du mit ohne für von zu bei nach vor aus auf über unter
  um heute morgen gestern montag dienstag mittwoch donnerstag freitag samstag sonntag sagt sagte schreibt schrieb
  el los las una unos unas y o pero es son era fue ha han había será puede dijo dice escribió con sin para por sobre
  en entre hasta desde hoy mañana ayer lunes martes miércoles jueves viernes sábado domingo
  il lo gli i una e ed o ma è sono era fu ha hanno sarà può disse dice scrisse con senza per su tra fra
  oggi domani ieri lunedì martedì mercoledì giovedì venerdì sabato domenica
  o os um uma umas uns e ou mas é são foi era tem têm será pode disse diz escreveu com sem para por sobre em
  hoje amanhã ontem segunda terça quarta quinta sexta sábado domingo
  het een en of maar is zijn was waren heeft hebben had zal kan moet zei zegt met zonder voor door op naar bij
  vandaag morgen gisteren maandag dinsdag woensdag donderdag vrijdag zaterdag zondag`.split(/\s+/),
);

/**
 * Whom a greeting addresses when it names no one: a group, a role, a customer (`Sehr geehrte Damen
 * und Herren`, `Hej alla`, `Beste klant`), some of them listed given names elsewhere (`Damen`,
 * `Alla`); docs/detectors.md#person-name-letters.
 */
const ADDRESSEES = new Set(
  `all everyone everybody folks guys team there sir madam colleagues friends customer customers
  damen herren kollegen kolleginnen alle leute freunde kunde kundin kunden mitglieder
  tous toutes amis collègues client cliente clients
  todos todas amigos amigas colegas clientes señores
  tutti amici colleghi clienti signori
  senhores
  allemaal dames heren klant klanten collega
  alla alle venner vänner kund kunder kolleger
  państwo wszyscy klienci zákazníci všichni kolegové`.split(/\s+/),
);

/**
 * Offices and ranks that an honorific addresses without a name (`Mr. President`, `Herr
 * Bürgermeister`, `Panie Prezesie`, `pane doktore`), vocatives of Polish and Czech included
 * (docs/detectors.md#person-name-letters).
 */
const OFFICES = new Set(
  `president chairman chair secretary minister mayor senator governor ambassador director speaker judge
  präsident präsidentin bürgermeister bürgermeisterin direktor direktorin minister ministerin doktor professor kollege kollegin
  président ministre maire directeur directrice docteur professeur
  presidente ministro alcalde director directora doctor doctora profesor profesora sindaco direttore direttrice dottore professore
  prefeito diretor diretora
  voorzitter burgemeester directeur
  prezes prezesie dyrektor dyrektorze doktorze profesorze ministrze kierowniku
  doktore profesore řediteli inženýre magistře předsedo`.split(/\s+/),
);

enum Reading {
  Given = 1,
  Surname = 2,
  /** A word of ordinary English, or a product (name-lists.ts): `will`, `mark`, `billing`, `smith`. */
  Ordinary = 4,
  /** A common word of the six other languages (their frequency lists also hold `maria`, `john`). */
  Foreign = 8,
  Filler = 16,
  /** A common word of the wider lists: only a value without a given name first asks (name-data.ts). */
  Wider = 32,
}

function readLatin(word: string): number {
  const key = nameKey(word);
  const cap = word.length > 1 ? word[0]?.toUpperCase() + word.slice(1).toLowerCase() : word.toUpperCase();
  const flags = WORD_FLAGS.get(cap) ?? 0;
  let r = 0;
  if (flags & GIVEN || GIVEN_NAME_SET.has(key)) r |= Reading.Given;
  if (SURNAME_SET.has(key)) r |= Reading.Surname;
  if (ENGLISH_WORD_SET.has(key) || flags & NOT_FIRST) r |= Reading.Ordinary;
  if (FOREIGN_WORD_SET.has(key)) r |= Reading.Foreign;
  if (WIDER_WORD_SET.has(key)) r |= Reading.Wider;
  if (flags & (FILLER | SURNAME_STOP) || FIRM_WORDS.has(key)) r |= Reading.Filler;
  // Hyphenated: each half read (`Jean-Pierre`, `García-Márquez`).
  const hyphen = word.indexOf("-");
  if (hyphen > 0 && (r & (Reading.Given | Reading.Surname)) === 0) {
    const a = readLatin(word.slice(0, hyphen));
    const b = readLatin(word.slice(hyphen + 1));
    if ((a | b) & (Reading.Given | Reading.Surname) && !((a | b) & Reading.Filler)) r = Reading.Surname;
  }
  return r;
}

/** Words that make a value a firm or a team, never a person (`Acme Corp`, `Billing Team`). */
const FIRM_WORDS = new Set(
  "inc llc ltd llp plc gmbh ag kg se sa spa srl sarl nv bv ab asa oy corp corporation company co group gruppe gruppen holding holdings partners sons bros brothers associates team support noreply bot ltda eireli".split(
    " ",
  ),
);

enum Mode {
  /** After a greeting or sign-off: a given name of the lists first. */
  Given = 1,
  /** After an honorific: a surname alone will do (`Mr. Smith`, `mr smith`). */
  Title = 2,
  /** A field's value or a header's name: a given name first, or names that are no common words. */
  Value = 3,
  /** The given name after `"Last, ` in a header. */
  GivenOnly = 4,
}

/**
 * The name after a cue, read from `at`: up to `max` words of one script, read as `mode` says. `whole`
 * wants the value to end after the name (a field's value, a header before `<`). Returns its end.
 */
function nameAfter(
  text: string,
  at: number,
  max: number,
  mode: Mode,
  whole: boolean,
  greeting = false,
): number | null {
  const first = wordAt(text, at, 0, 40);
  if (first === null) return null;
  const script = scriptOf(text.charCodeAt(first.start)) as Script;
  let end: number | null = null;
  let count = 0;
  let firstReading = 0;
  let anyOrdinary = false;
  let anyForeign = false;
  let wider = 0;
  /**
   * How many words stood before a `y` read past: one person's two surnames join with it after a
   * given name (`José Ortega y Gasset`), two partners' names make a firm (`Tamez Muñoz y Mota Leal`).
   */
  let joined = 0;
  let unlisted = false;
  let afterParticle = false;
  let shape = Shape.Other;
  let readAs = mode;
  let initialFirst = false;
  /** A given name that is a word, in lower case, stands only with the surname after it. */
  let needSecond = false;
  let pos = first.start;
  let w: Word | null = first;
  while (w !== null && count < max) {
    const word = text.slice(w.start, w.end);
    if (script === Script.Latin) {
      const r = readLatin(word);
      // After an honorific a particle may come first (`herr von weizsäcker`); the word after it is then read as the first.
      if ((count > 0 || readAs === Mode.Title) && PARTICLES.has(word.toLowerCase())) {
        const next = wordAt(text, w.end, script, 40);
        if (next === null || next.start - w.end > 2) break;
        if (word === "y") joined = count;
        w = next;
        afterParticle = true;
        continue;
      }
      if (count > 0 && caseShape(text, w) !== shape) break;
      if (r & Reading.Filler) break;
      // Without capitals to tell them apart, a word of the closed classes ends the name (`mr smith said`).
      if (count > 0 && shape !== Shape.Capitalized && NOT_IN_NAME.has(word.toLowerCase())) break;
      const listed = (r & (Reading.Given | Reading.Surname)) !== 0;
      // An initial (`Robert J. Whitman`) is kept and read past.
      if (count > 0 && w.end - w.start === 1 && text.charCodeAt(w.end) === 46) {
        const next = wordAt(text, w.end + 1, script, 40);
        if (next === null || next.start - w.end > 3) break;
        w = next;
        continue;
      }
      // `regards, j. smith`: an initial, then a surname of the lists, reads as after an honorific (docs/detectors.md#person-name-mid-line).
      if (count === 0 && readAs === Mode.Given && w.end - w.start === 1 && text.charCodeAt(w.end) === 46) {
        const next = wordAt(text, w.end + 1, script, 40);
        if (next === null || next.start - w.end > 3) return null;
        readAs = Mode.Title;
        initialFirst = true;
        w = next;
        continue;
      }
      if (count === 0 && initialFirst && (!(r & Reading.Surname) || r & Reading.Filler)) return null;
      if (count === 0) {
        const lower = word.toLowerCase();
        if (readAs === Mode.Title && OFFICES.has(lower)) return null;
        // `Sehr geehrte Damen und Herren`, `hej alla`; `hi alla pugacheva` has a surname after it.
        if (greeting && ADDRESSEES.has(lower) && !surnameFollows(text, w.end)) return null;
        if (readAs === Mode.GivenOnly && !(r & Reading.Given) && r & (Reading.Ordinary | Reading.Foreign))
          return null;
        // Not a listed given name: the name must then fill its line alone (`ciao narseo castaldi,`), checked below.
        if (readAs === Mode.Given && !(r & Reading.Given)) {
          if (r & (Reading.Ordinary | Reading.Foreign)) return null;
          unlisted = true;
        }
        if (readAs === Mode.Title && !listed && r & (Reading.Ordinary | Reading.Foreign)) return null;
        // `thanks, will do`, `hi mark the ticket`: a given name that is a word, before a word that is no name.
        if (readAs === Mode.Given && r & Reading.Ordinary) {
          const next = wordAt(text, w.end, script, 40);
          if (next !== null && next.start - w.end <= 2) {
            const nr = readLatin(text.slice(next.start, next.end));
            if (!(nr & (Reading.Surname | Reading.Given)) || nr & Reading.Filler) return null;
            // `thanks, will check`: in lower case after a sign-off, a word that is also a surname reads as
            // the verb's object, unless the two fill the line below it (`regards,\nwill smith`); after a
            // greeting (`hi will smith`) only a word that ends a name does, and the surname must then be
            // read into the name (`hi rose garden team` is none; docs/detectors.md#person-name-mid-line).
            if (caseShape(text, w) === Shape.Lower) {
              const ownLine = isLineStart(text, w.start) && endsLine(text, next.end);
              if (!greeting && !ownLine && nr & Reading.Ordinary) return null;
              if (NOT_IN_NAME.has(text.slice(next.start, next.end).toLowerCase())) return null;
              needSecond = true;
            }
          }
        }
        firstReading = r;
        shape = caseShape(text, w);
      } else if (listed) {
        // `mr smith bank account`: an ordinary word in lower case ends the name unless the name ends
        // with it, the value's end or a word of the closed classes after it (`mrs. jane doe tomorrow`).
        if (
          r & Reading.Ordinary &&
          shape === Shape.Lower &&
          !valueEnds(text, w.end) &&
          !endsBefore(text, w.end)
        )
          break;
      } else if (r & Reading.Ordinary || (r & Reading.Foreign && !afterParticle)) break;
      // `van den Heuvel`, `de la Fuente`: after a particle, a word of the language is a surname.
      if (r & Reading.Ordinary) anyOrdinary = true;
      if (r & (Reading.Wider | Reading.Foreign) && !listed) wider++;
      if (r & Reading.Foreign && !listed && !afterParticle) anyForeign = true;
      afterParticle = false;
    } else if (OTHER_STOP.has(word)) break;
    else if ((script === Script.Cyrillic || script === Script.Greek) && !isUpperAt(text, w.start)) break;
    else if (script === Script.Han || script === Script.Hangul) {
      // `尊敬的王伟先生`: the honorific after the name is not part of the word read.
      const suffix = HONORIFIC_AFTER.exec(word);
      if (suffix !== null && suffix.index >= 2) w = { start: w.start, end: w.start + suffix.index };
      if (w.end - w.start > 4 && !whole) return null;
    }
    end = w.end;
    count++;
    pos = w.end;
    // Japanese writes a space between the family and the given name; Chinese and Korean do not.
    const gap = text.charCodeAt(pos);
    if (gap !== 32 && gap !== 9) break;
    w = wordAt(text, pos, script, 40);
    if (w !== null && w.start - pos > 2) break;
  }
  if (end === null || (needSecond && count < 2)) return null;
  // Two words after the `y` are a second person: the value names a firm.
  if (joined > 0 && count - joined >= 2) return null;
  if (unlisted && (count < 2 || anyOrdinary || anyForeign || !endsLine(text, end))) return null;
  if (
    script !== Script.Latin &&
    readAs === Mode.Value &&
    !otherValueFits(text, first.start, end, script, count)
  )
    return null;
  if (script === Script.Latin && readAs === Mode.Value && !(firstReading & Reading.Given)) {
    // `Acme Billing`, `Widget Pro`: without a given name first, no word may be a common one.
    // `Sørlie-Torp Solheim`: two surnames joined first, then a third, is how firms are named.
    // `Otrolig Granit Skor`: two common words of the other languages, too, make such a value a thing.
    // `Luna Farías y Carrasco`: surnames joined by `y` without a given name first name a firm.
    if (
      anyOrdinary ||
      wider >= 2 ||
      joined > 0 ||
      count < 2 ||
      text.slice(first.start, first.end).includes("-")
    )
      return null;
  }
  if (whole && !valueEnds(text, end)) return null;
  return end;
}

enum Shape {
  Lower = 1,
  Upper = 2,
  Capitalized = 3,
  Other = 4,
}

/** How a word is written: a name's words are written alike (`john smith`, `JANE DOE`, `Emily Carter`). */
function caseShape(text: string, w: Word): Shape {
  const word = text.slice(w.start, w.end);
  const lower = word.toLowerCase();
  if (word === lower) return Shape.Lower;
  if (word === word.toUpperCase()) return w.end - w.start === 1 ? Shape.Capitalized : Shape.Upper;
  return word[0] !== lower[0] ? Shape.Capitalized : Shape.Other;
}

/** A listed surname that is no word of the closed classes and no addressee follows `at`. */
function surnameFollows(text: string, at: number): boolean {
  const next = wordAt(text, at, Script.Latin, 40);
  if (next === null || next.start - at > 2) return false;
  const word = text.slice(next.start, next.end);
  const lower = word.toLowerCase();
  return !NOT_IN_NAME.has(lower) && !ADDRESSEES.has(lower) && (readLatin(word) & Reading.Surname) !== 0;
}

/** Whether a word names an office an honorific addresses without a name (`President`, `Bürgermeister`). */
export function isOffice(word: string): boolean {
  return OFFICES.has(word.toLowerCase());
}

/**
 * Where a capitalized name found at a line's start begins when its first word is a greeting before
 * a listed given name (`Caro Marco,`, `Kære Lars,`, `Hej Anna`): after the greeting, which is no part
 * of the name (docs/detectors.md#person-name-letters). `Cara Delevingne` and `Ola Nordmann` keep
 * their first word: no listed given name follows it.
 */
export function afterGreeting(text: string, start: number, end: number): number {
  // Most spans stand mid-line: a look back at the spaces before them answers.
  if (!isLineStart(text, start)) return start;
  const first = wordAt(text, start, Script.Latin, 16);
  if (first === null || first.start !== start || first.end >= end) return start;
  if (KIND.get(text.slice(start, first.end).toLowerCase()) !== Kind.Greeting) return start;
  const next = wordAt(text, first.end, Script.Latin, 40);
  if (next === null || next.start - first.end > 2 || next.start >= end) return start;
  return readLatin(text.slice(next.start, next.end)) & Reading.Given ? next.start : start;
}

/** A word of the closed classes follows `at` (docs/detectors.md#person-name-mid-line). */
function endsBefore(text: string, at: number): boolean {
  const next = wordAt(text, at, Script.Latin, 40);
  return (
    next !== null && next.start - at <= 2 && NOT_IN_NAME.has(text.slice(next.start, next.end).toLowerCase())
  );
}

/** A name that fills its line: a comma, `!`, `:` or nothing, then the line's end. */
function endsLine(text: string, at: number): boolean {
  let i = at;
  const c = text.charCodeAt(i);
  if (c === 44 || c === 33 || c === 58) i++;
  while (text.charCodeAt(i) === 32) i++;
  return i >= text.length || text.charCodeAt(i) === 10 || text.charCodeAt(i) === 13;
}

/**
 * Endings of Russian and Greek adjectives (`Кожанный`, `Пластиковый`, `Πλαστικό`, `Κατεψυγμένο`):
 * products are named with them, people are not (Ukrainian `-ий` surnames are, and stay allowed).
 */
const ADJECTIVE = /(?:ый|ое|ые|ικό|ικο|ένο|ενο|ινο|ινό|ιμο)$/u;

/** Whether a Cyrillic or Greek phrase holds an adjective: a product, not a person (docs/detectors.md#person-name-world). */
export function hasAdjective(phrase: string): boolean {
  for (const w of phrase.split(/[^\p{L}]+/u)) if (ADJECTIVE.test(w)) return true;
  return false;
}

/** Common Arabic given names, written by hand; `arabicNames` adds a public list's (word-data/SOURCES.md). */
const ARABIC_NAME_WORDS =
  "محمد أحمد علي حسن حسين عمر خالد يوسف إبراهيم مصطفى محمود سعيد كريم سامي طارق فاطمة عائشة مريم زينب نور سارة ليلى هدى خديجة أمينة ياسمين";

let greekWordSet: Set<string> | null = null;
/** Common Greek words (word-data/greek-words.ts), built on the first Greek value. */
function greekWords(): Set<string> {
  greekWordSet ??= new Set(GREEK_WORDS_DATA.split(" "));
  return greekWordSet;
}

/**
 * Whether two words of a Greek phrase are common Greek words: a product or a firm (`Κομψό Φρέσκο
 * Τυρί`), not a person, whose surname alone may be a word (`Ζωγράφος`, `Οικονόμου`).
 */
export function hasGreekWords(phrase: string): boolean {
  let common = 0;
  for (const w of phrase.split(/[^\p{L}]+/u))
    if (w !== "" && greekWords().has(greekKey(w)) && ++common === 2) return true;
  return false;
}

let arabicNameSet: Set<string> | null = null;
let arabicWordSet: Set<string> | null = null;
/** Built on the first Arabic value: most texts hold none, and skip the cost of the sets. */
function arabicNames(): Set<string> {
  arabicNameSet ??= new Set(`${ARABIC_NAME_WORDS} ${ARABIC_GIVEN_NAMES_DATA}`.split(" ").map(arabicKey));
  return arabicNameSet;
}
function arabicWords(): Set<string> {
  arabicWordSet ??= new Set(ARABIC_WORDS_DATA.split(" "));
  return arabicWordSet;
}

/**
 * An Arabic field's value names a person when a word of it is a listed given name or an `al-`,
 * `abd`, `abu` or `bin` word, or when it is two words or more of which none is a common Arabic
 * word: products are named with common words (`كرسي بلاستيك`), family names mostly not
 * (docs/detectors.md#person-name-floors).
 */
function arabicValueFits(words: string[]): boolean {
  const names = arabicNames();
  let common = false;
  for (const w of words) {
    const key = arabicKey(w);
    if (names.has(key) || /^(?:ال|عبد|ابو|بن)/.test(key)) return true;
    if (arabicWords().has(key)) common = true;
  }
  return !common && words.length >= 2;
}

/**
 * A field's or header's value in another script names a person: Chinese and Korean names are one
 * word of two to four letters (Japanese two such words), Cyrillic and Greek ones two or three
 * capitalized words that are no adjectives (`Эргономичный Пластиковый Стул`) and no legal form
 * (`ООО`, `ГУП`), Arabic ones hold a common given name or an `al-` word.
 */
function otherValueFits(text: string, start: number, end: number, script: Script, count: number): boolean {
  const value = text.slice(start, end);
  const words = value.split(/[ \t]+/);
  switch (script) {
    case Script.Han:
      return (
        words.length <= 2 &&
        words.every((w) => w.length >= 1 && w.length <= 4) &&
        value.replace(/ /g, "").length >= 2
      );
    case Script.Hangul:
      return words.length === 1 && value.length >= 2 && value.length <= 4;
    case Script.Cyrillic:
    case Script.Greek:
      return (
        count >= 2 &&
        words.every(
          (w) => !/^\p{Lu}{2,}$/u.test(w) && !/^\p{Lu}\p{Ll}+\p{Lu}/u.test(w) && !ADJECTIVE.test(w),
        ) &&
        (script !== Script.Greek || !hasGreekWords(value))
      );
    case Script.Arabic:
      return arabicValueFits(words);
    default:
      return true;
  }
}

function isCapitalized(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c >= 65 && c <= 90;
}

function isUpperAt(text: string, at: number): boolean {
  const ch = text[at] as string;
  return ch !== ch.toLowerCase();
}

/** A field's value or a header's name ends here: a quote, a delimiter, an address, the line's end. */
function valueEnds(text: string, at: number): boolean {
  let i = at;
  while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i++;
  if (i >= text.length) return true;
  const c = text.charCodeAt(i);
  return (
    c === 34 ||
    c === 39 ||
    c === 44 ||
    c === 59 ||
    c === 60 ||
    c === 10 ||
    c === 13 ||
    c === 124 ||
    c === 125 ||
    c === 41 ||
    c === 0x201d ||
    c === 0x3001 ||
    c === 0x3002 ||
    c === 0xff0c ||
    (c === 46 && !isLetterOf(text.charCodeAt(i + 1), Script.Latin)) ||
    (c === 32 && text.charCodeAt(i + 1) === 40)
  );
}

function isLineStart(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9 || text.charCodeAt(i) === 62)) i--;
  return i < 0 || text.charCodeAt(i) === 10 || text.charCodeAt(i) === 13;
}

/** After a field name: `:` or `=`, quotes around either, spaces. Returns where the value starts. */
function fieldValue(text: string, at: number, header: boolean): number | null {
  let i = at;
  if (text.charCodeAt(i) === 34 || text.charCodeAt(i) === 39) i++;
  while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i++;
  const c = text.charCodeAt(i);
  if (c !== 58 && (c !== 61 || header) && c !== 0xff1a) return null;
  i++;
  while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i++;
  return i;
}

/** Where a field name may start: a line, an object, a list item, a column; `=` fields after a space too. */
function fieldMayStart(text: string, start: number): boolean {
  let i = start - 1;
  if (text.charCodeAt(i) === 34 || text.charCodeAt(i) === 39) i--;
  while (i >= 0 && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i--;
  if (i < 0) return true;
  const c = text.charCodeAt(i);
  return (
    c === 10 || c === 13 || c === 123 || c === 44 || c === 59 || c === 91 || c === 124 || c === 45 || c === 40
  );
}

/** A header or field value: a quoted `"Last, First"`, or the name itself. */
function headerName(text: string, from: number, header: boolean): Span | null {
  const q = text.charCodeAt(from);
  if (q === 34 || q === 39) {
    const close = text.indexOf(String.fromCharCode(q), from + 1);
    if (close < 0 || close - from > 80) return null;
    const comma = text.indexOf(",", from + 1);
    if (comma > 0 && comma < close) {
      // `"Doe, Jane" <jane@example.com>`: surname, comma, given name.
      const last = nameAfter(text, from + 1, 3, Mode.Title, false);
      if (last === null || last !== comma) return null;
      const given = nameAfter(text, comma + 1, 3, Mode.GivenOnly, false);
      if (given === null || given !== close) return null;
      return { start: from + 1, end: close };
    }
    const end = nameAfter(text, from + 1, 4, Mode.Value, true);
    return end === null ? null : { start: from + 1, end };
  }
  const end = nameAfter(text, from, 4, Mode.Value, true);
  if (end === null) return null;
  if (header && !/^[ \t]*(?:<|\(|$|\r?\n)/.test(text.slice(end, end + 3))) return null;
  return { start: from, end };
}

const HONORIFIC_AFTER = new RegExp(OTHER_AFTER);

/** Characters that join words in Chinese and Japanese and never end a name before an honorific. */
const HAN_PARTICLES = new Set([..."的和与跟给是请向对在了位敬爱亲您你我他她们"].map((c) => c.charCodeAt(0)));

/** The CJK or Hangul name written before an honorific suffix (`田中太郎様`, `김민준 님`). */
function nameBefore(text: string, at: number): Span | null {
  let i = at;
  if (text.charCodeAt(i - 1) === 32) i--;
  const script = scriptOf(text.charCodeAt(i - 1));
  if (script !== Script.Han && script !== Script.Hangul) return null;
  const end = i;
  let start = i;
  let spaces = 0;
  while (start > 0 && end - start < 6) {
    const c = text.charCodeAt(start - 1);
    if (scriptOf(c) === script && !(c >= 0x3040 && c <= 0x309f) && !HAN_PARTICLES.has(c)) start--;
    else if (
      c === 32 &&
      spaces === 0 &&
      script === Script.Han &&
      scriptOf(text.charCodeAt(start - 2)) === script
    ) {
      spaces++;
      start--;
    } else break;
  }
  // A run longer than a name is a sentence that ends in the honorific: take its last 2 to 4 letters.
  const letters = end - start - spaces;
  if (letters < 2) return null;
  if (letters > 4) start = spaces > 0 ? start : end - 3;
  if (text.charCodeAt(start) === 32) start++;
  return { start, end };
}

/** The name a greeting addresses from `at`: its honorifics first if any (`Frau Dr. Schmidt`), or a given name. */
function greetedName(text: string, at: number): Span | null {
  const title = titleAt(text, at);
  if (title !== null) {
    const end = nameAfter(text, title, 3, Mode.Title, false);
    return end === null ? null : { start: skipSpaces(text, at), end };
  }
  // `Geachte heer/mevrouw`: an honorific without a name after it is none.
  const first = wordAt(text, at, 0, 12);
  if (first !== null && isTitleWord(text.slice(first.start, first.end).toLowerCase())) return null;
  const end = nameAfter(text, at, 3, Mode.Given, false, true);
  return end === null ? null : { start: wordStart(text, at), end };
}

/** Words that join the people a greeting addresses. */
const JOINS = new Set("and|und|och|og|et|y|e|en|i|a|oraz|&".split("|"));

/**
 * After a greeted name, a comma or a joining word, and perhaps the greeting again (`, liebe`):
 * where the next greeted name may start on the same line (docs/detectors.md#person-name-letters).
 */
function alsoGreeted(text: string, end: number): number | null {
  let at = skipSpaces(text, end);
  const comma = text.charCodeAt(at) === 44;
  if (comma) at = skipSpaces(text, at + 1);
  const amp = text.charCodeAt(at) === 38;
  const w = amp ? null : wordAt(text, at, 0, 12);
  if (w === null && !amp) return null;
  const word = w === null ? "&" : text.slice(w.start, w.end).toLowerCase();
  if (JOINS.has(word)) {
    at = skipSpaces(text, w === null ? at + 1 : w.end);
    const again = wordAt(text, at, 0, 12);
    if (again !== null && KIND.get(text.slice(again.start, again.end).toLowerCase()) === Kind.Greeting)
      at = again.end;
    return at;
  }
  if (w !== null && KIND.get(word) === Kind.Greeting) return w.end;
  return comma ? at : null;
}

/** The span a cue of `kind` at `start`..`cueEnd` marks, or null. */
function cueSpan(text: string, kind: Kind, start: number, cueEnd: number, spans: Span[]): Span | null {
  switch (kind) {
    case Kind.Greeting: {
      let at = cueEnd;
      while (text.charCodeAt(at) === 32 || text.charCodeAt(at) === 9) at++;
      if (text.charCodeAt(at) === 44 || text.charCodeAt(at) === 58) at++;
      let span = greetedName(text, at);
      // `Hej Anna och Erik`, `Lieber Peter, liebe Anna`: more people the greeting addresses.
      for (let n = 0; span !== null && n < 3; n++) {
        const from = alsoGreeted(text, span.end);
        const more = from === null ? null : greetedName(text, from);
        if (more === null) break;
        spans.push(span);
        span = more;
      }
      return span;
    }
    case Kind.SignOff: {
      let at = cueEnd;
      while (text.charCodeAt(at) === 32 || text.charCodeAt(at) === 9) at++;
      const c = text.charCodeAt(at);
      if (c !== 44 && c !== 10 && c !== 13 && c !== 33 && c !== 46 && c !== 45 && c !== 0x2014) return null;
      at++;
      // `cheers -- anna`: a run of dashes is one mark.
      while (text.charCodeAt(at) === 45 || text.charCodeAt(at) === 0x2014) at++;
      for (let n = 0; n < 3; n++) {
        const d = text.charCodeAt(at);
        if (d === 32 || d === 9 || d === 10 || d === 13) at++;
      }
      const end = nameAfter(text, at, 3, Mode.Given, false);
      return end !== null && valueEnds(text, end) ? { start: wordStart(text, at), end } : null;
    }
    case Kind.Header: {
      if (!isLineStart(text, start)) return null;
      const at = fieldValue(text, cueEnd, true);
      return at === null ? null : headerName(text, at, true);
    }
    case Kind.Field: {
      if (!fieldMayStart(text, start) && text.charCodeAt(skipQuote(text, cueEnd)) !== 61) return null;
      const at = fieldValue(text, cueEnd, false);
      if (at === null) return csvColumn(text, start, cueEnd, spans);
      return headerName(text, at, false);
    }
    case Kind.CapitalTitle:
    case Kind.Title: {
      if (
        kind === Kind.CapitalTitle &&
        !isCapitalized(text, start) &&
        !ANY_CASE_TITLES.has(text.slice(start, cueEnd))
      )
        return null;
      let at = pastTitle(text, cueEnd);
      if (at === cueEnd && cueEnd - start === 1) return null;
      const c = text.charCodeAt(at);
      if (c !== 32 && c !== 9 && c !== 0xa0 && !(c >= 0x4e00 && c <= 0x9fff)) return null;
      // `Frau Dr. Schmidt`, `Herr Prof. Dr. Weber`: a title after the honorific.
      if (c === 32) at = titleAt(text, at) ?? at;
      const end = nameAfter(text, at, 3, Mode.Title, false);
      return end === null ? null : { start, end };
    }
    case Kind.After: {
      const span = nameBefore(text, start);
      if (span !== null) span.end = cueEnd;
      return span;
    }
  }
}

/** A Latin letter, `_` or `-`: what a cue word or a field name is made of. */
function isKeyChar(c: number): boolean {
  const l = c | 32;
  if (l >= 97 && l <= 122) return true;
  return c === 95 || c === 45 || (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7);
}

const KEY_WORDS = 4;
/** The last word of every Latin cue: an anchor after any other word is passed over at once. */
const LAST_WORDS = new Set([...KIND.keys()].map((k) => k.split(" ").at(-1) as string));
const LONGEST_LAST = 16;
/** For each first letter (its low five bits), the lengths of the cues' last words that start with it, as bits. */
const LAST_SHAPES = new Array<number>(32).fill(0);
for (const w of LAST_WORDS) {
  const slot = (w.charCodeAt(0) | 32) & 31;
  if (w.length < LONGEST_LAST) LAST_SHAPES[slot] = (LAST_SHAPES[slot] as number) | (1 << w.length);
}
const KEY_SPAN = 40;

/**
 * The cue that ends just before `at` (spaces and a quote skipped): one to four words read back,
 * the longest that is a cue. Returns its kind and bounds in `found`.
 */
function cueBefore(text: string, at: number, found: { kind: Kind; start: number; end: number }): boolean {
  let i = at - 1;
  while (i >= 0 && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i--;
  const q = text.charCodeAt(i);
  if (q === 34 || q === 39 || q === 33 || q === 46 || q === 44 || q === 13) i--;
  const end = i + 1;
  while (i >= 0 && end - i <= LONGEST_LAST && isKeyChar(text.charCodeAt(i))) i--;
  const length = end - i - 1;
  // Most anchors follow a word that ends no cue: its first letter and length say so without a copy.
  if (length === 0 || length >= LONGEST_LAST) return false;
  const initial = (text.charCodeAt(i + 1) | 32) & 31;
  if (((LAST_SHAPES[initial] as number) & (1 << length)) === 0) return false;
  if (!LAST_WORDS.has(text.slice(i + 1, end).toLowerCase())) return false;
  let best = false;
  for (let words = 1; ; words++) {
    const kind = KIND.get(
      words === 1 ? text.slice(i + 1, end).toLowerCase() : spaced(text.slice(i + 1, end)),
    );
    if (kind !== undefined && kind !== Kind.After) {
      found.kind = kind;
      found.start = i + 1;
      found.end = end;
      best = true;
    }
    if (words === KEY_WORDS || text.charCodeAt(i) !== 32 || end - i > KEY_SPAN) break;
    i--;
    if (text.charCodeAt(i) === 32) i--;
    const wordEnd = i + 1;
    while (i >= 0 && isKeyChar(text.charCodeAt(i))) i--;
    if (i + 1 === wordEnd) break;
  }
  return best;
}

function spaced(words: string): string {
  return words.toLowerCase().replace(/[ \t]+/g, " ");
}

/** The first word of every greeting and honorific. */
const LINE_CUE_FIRST = new Set(
  [...KIND]
    .filter(([, kind]) => kind === Kind.Greeting || kind === Kind.Title || kind === Kind.CapitalTitle)
    .map(([cue]) => cue.split(" ")[0] as string),
);

/** The cue that starts a line at `from` (a greeting or an honorific): the longest of one to four words. */
function cueAtLineStart(
  text: string,
  from: number,
  found: { kind: Kind; start: number; end: number },
): boolean {
  let i = from;
  while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9 || text.charCodeAt(i) === 62) i++;
  const start = i;
  while (i < text.length && isKeyChar(text.charCodeAt(i))) i++;
  // Most lines start with a word that starts no greeting or honorific: one lookup, no longer copies.
  if (i === start || !LINE_CUE_FIRST.has(text.slice(start, i).toLowerCase())) return false;
  i = start;
  let best = false;
  for (let words = 0; words < KEY_WORDS && i - start < KEY_SPAN; words++) {
    const wordStart = i;
    while (i < text.length && isKeyChar(text.charCodeAt(i))) i++;
    if (i === wordStart) break;
    const kind = KIND.get(
      text
        .slice(start, i)
        .toLowerCase()
        .replace(/[ \t]+/g, " "),
    );
    if (kind === Kind.Greeting || kind === Kind.Title || kind === Kind.CapitalTitle) {
      found.kind = kind;
      found.start = start;
      found.end = i;
      best = true;
    }
    if (text.charCodeAt(i) !== 32) break;
    i++;
  }
  return best;
}

/** Letters of the scripts with their own cues: a one-byte string holds none, and the test answers at once. */
const OTHER_SCRIPT = /[\u0370-\u1fff\u3040-\u9fff\uac00-\ud7a3]/;

function keep(text: string, span: Span | null, spans: Span[]): number {
  if (span === null) return 0;
  const suffix = SUFFIX.exec(text.slice(span.end, span.end + 8));
  if (suffix) span.end += suffix[0].length;
  spans.push(span);
  return span.end;
}

/** The first cue of another script at or after `from`: tried only where one of their first letters stands. */
function nextForeignCue(text: string, from: number): RegExpExecArray | null {
  FOREIGN_FIRST.lastIndex = from;
  while (FOREIGN_FIRST.test(text)) {
    FOREIGN_CUE.lastIndex = FOREIGN_FIRST.lastIndex - 1;
    const m = FOREIGN_CUE.exec(text);
    if (m !== null) return m;
  }
  return null;
}

/** The first Latin cue of this pass spelled with a letter outside ASCII at or after `from`: tried only a short way before that letter. */
function nextMarkedCue(text: string, from: number): RegExpExecArray | null {
  let low = from;
  LATIN_MARK.lastIndex = from;
  while (LATIN_MARK.test(text)) {
    const mark = LATIN_MARK.lastIndex - 1;
    const reach = LATIN_MARK_REACH.get(text.charCodeAt(mark)) as number;
    for (let s = Math.max(low, mark - reach); s <= mark; s++) {
      if (!LATIN_CUE_FIRST.has(text.charCodeAt(s))) continue;
      LATIN_CUE.lastIndex = s;
      const m = LATIN_CUE.exec(text);
      if (m !== null) return m;
    }
    low = mark + 1;
    LATIN_MARK.lastIndex = low;
  }
  return null;
}

/** The first Latin cue of this pass at or after `from`, either kind. */
function nextLatinCue(text: string, from: number): RegExpExecArray | null {
  const marked = nextMarkedCue(text, from);
  if (LATIN_ASCII_START === null) return marked;
  LATIN_ASCII_START.lastIndex = from;
  for (let m = LATIN_ASCII_START.exec(text); m !== null; m = LATIN_ASCII_START.exec(text)) {
    if (marked !== null && m.index >= marked.index) break;
    LATIN_CUE.lastIndex = m.index;
    const cue = LATIN_CUE.exec(text);
    if (cue !== null) return cue;
    LATIN_ASCII_START.lastIndex = m.index + 1;
  }
  return marked;
}

/** The cues of the other scripts: their words, then what each marks. */
function otherScriptNames(text: string, spans: Span[]): void {
  let from = 0;
  let latin = nextLatinCue(text, 0);
  let foreign = nextForeignCue(text, 0);
  for (;;) {
    if (latin !== null && latin.index < from) latin = nextLatinCue(text, from);
    if (foreign !== null && foreign.index < from) foreign = nextForeignCue(text, from);
    const m = latin === null || (foreign !== null && foreign.index < latin.index) ? foreign : latin;
    if (m === null) return;
    const start = m.index;
    from = start + m[0].length;
    const kind = KIND.get(m[0].toLowerCase().replace(/[ \t]+/g, " "));
    if (kind === undefined) continue;
    // `ma chère amie`, `kära vänner` mid-line: such greetings are words there (docs/detectors.md#person-name-letters).
    if (kind === Kind.Greeting && LINE_START_ONLY.has(spaced(m[0])) && !isLineStart(text, start)) continue;
    if (kind !== Kind.After && scriptOf(text.charCodeAt(start - 1)) === scriptOf(text.charCodeAt(start)))
      continue;
    const end = keep(text, cueSpan(text, kind, start, start + m[0].length, spans), spans);
    if (end > from) from = end;
  }
}

type Found = { kind: Kind; start: number; end: number };

/** Fields and headers: the cue word before each `:` or `=` (`name:`, `"author": "`, `From:`, `customer_name=`). */
function fieldNames(text: string, mark: string, found: Found, spans: Span[]): void {
  let done = 0;
  for (let at = text.indexOf(mark); at >= 0; at = text.indexOf(mark, Math.max(at + 1, done))) {
    if (!cueBefore(text, at, found) || (found.kind !== Kind.Field && found.kind !== Kind.Header)) continue;
    done = keep(text, cueSpan(text, found.kind, found.start, found.end, spans), spans);
  }
}

const CSV_HEADER = 300;
/** The longest field name (lower-casing never shortens a word, so a longer cell names no field). */
const LONGEST_FIELD = Math.max(...[...KIND].filter(([, kind]) => kind === Kind.Field).map(([w]) => w.length));

/** Characters `trim` may take off, and a few more: what is left is no longer than what `trim` leaves. */
function maybeTrimmed(c: number): boolean {
  return (
    c <= 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    c === 0x180e ||
    (c >= 0x2000 && c <= 0x200a) ||
    (c >= 0x2028 && c <= 0x202f) ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * Whether a CSV cell, trimmed and unquoted, can be as short as a field's name: most cells of a line
 * of prose are longer, and skip the trimming, unquoting and lower-casing copies.
 */
function mayNameField(raw: string): boolean {
  if (raw.length <= LONGEST_FIELD + 2) return true;
  let a = 0;
  let b = raw.length;
  while (a < b && maybeTrimmed(raw.charCodeAt(a))) a++;
  while (b > a && maybeTrimmed(raw.charCodeAt(b - 1))) b--;
  return b - a <= LONGEST_FIELD + 2;
}

/** A CSV header line (the text's first line, or one after an empty line) with a cell named for a person. */
function csvHeader(text: string, start: number, end: number, spans: Span[]): void {
  if (end - start > CSV_HEADER) return;
  const line = text.slice(start, end);
  const sep = line.includes("\t") ? "\t" : line.includes(";") ? ";" : line.includes(",") ? "," : "";
  if (sep === "") return;
  let cell = start;
  for (const raw of line.split(sep)) {
    const name = mayNameField(raw) ? raw.trim().replace(/^["']|["']$/g, "") : "";
    if (name !== "" && KIND.get(name.toLowerCase()) === Kind.Field) {
      const at = text.indexOf(name, cell);
      keep(text, csvColumn(text, at, at + name.length, spans), spans);
    }
    cell += raw.length + 1;
  }
}

/** Honorifics written with a capital at a line's start that are no words in lower case either (`herr müller`). */
const ANY_CASE_TITLES = new Set(["herr", "frau", "HERR", "FRAU"]);

/**
 * Greetings that are also adjectives or words of their language (`die beste Lösung`, `la cara
 * amica`, `una ola`): read at a line's start only, never mid-line (docs/detectors.md#person-name-mid-line).
 */
const LINE_START_ONLY = new Set(
  "liebe|lieber|cher|chère|estimado|estimada|querido|querida|caro|cara|gentile|prezado|prezada|beste|moi|hei|oi|ola|hoi|sehr geehrter|sehr geehrte|geehrter|geehrte|geachte|kære|kjære|kära|käre|hyvä|vážený|vážená|vážení|szanowny|szanowna|szanowni|drogi|droga".split(
    "|",
  ),
);

/** Whether a cue read mid-line may mark a name there. */
function midLineKind(kind: Kind, cue: string): boolean {
  if (kind === Kind.Title || kind === Kind.CapitalTitle || kind === Kind.SignOff) return true;
  return kind === Kind.Greeting && !LINE_START_ONLY.has(spaced(cue));
}

/**
 * An honorific mid-line that is no name's (`300 ms. will retry`, `ms. word`): after a number, or
 * before a single word of ordinary writing that neither a second name word follows nor the value
 * ends with (docs/detectors.md#person-name-mid-line).
 */
function titleMisread(text: string, start: number, cueEnd: number, span: Span): boolean {
  let i = start - 1;
  while (i >= 0 && text.charCodeAt(i) === 32) i--;
  if (isDigitAt(text, i)) return true;
  let from = cueEnd;
  if (text.charCodeAt(from) === 46) from++;
  const name = text.slice(from, span.end).trim();
  if (name.includes(" ")) return false;
  const r = readLatin(name);
  return (
    (r & (Reading.Ordinary | Reading.Foreign)) !== 0 && !(r & Reading.Given) && !valueEnds(text, span.end)
  );
}

function isDigitAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/** The span a greeting or an honorific mid-line marks (`ok, hi john`, `call mrs. jane doe`). */
function midLineSpan(text: string, found: Found, spans: Span[]): number {
  const cue = text.slice(found.start, found.end);
  if (!midLineKind(found.kind, cue)) return 0;
  const span = cueSpan(text, found.kind, found.start, found.end, spans);
  if (span === null) return 0;
  if (
    (found.kind === Kind.Title || found.kind === Kind.CapitalTitle) &&
    titleMisread(text, found.start, found.end, span)
  )
    return 0;
  return keep(text, span, spans);
}

/**
 * Greetings, sign-offs and honorifics that start with an ASCII letter, as one pattern grouped by
 * that letter (`[hH](?:ello|ey|i|ELLO|EY|I)`): grouped, the engine tests one letter where a flat list
 * of three spellings per word tests each; a flat list with a lookbehind cost four times as much.
 * What must follow each kind is checked by `cueSpan`.
 */
const MID_CUE = (() => {
  const byFirst = new Map<string, Set<string>>();
  for (const [list, kind] of LISTS) {
    if (kind !== Kind.Greeting && kind !== Kind.SignOff && kind !== Kind.Title && kind !== Kind.CapitalTitle)
      continue;
    for (const w of list.split("|")) {
      const first = w[0] as string;
      if (!/[a-z]/.test(first) || LINE_START_ONLY.has(w)) continue;
      const rests = byFirst.get(first) ?? new Set<string>();
      rests.add(w.slice(1));
      rests.add(w.slice(1).toUpperCase());
      byFirst.set(first, rests);
    }
  }
  const groups = [...byFirst].map(([first, rests]) => {
    const alts = [...rests]
      .sort((x, y) => y.length - x.length)
      .map((r) => r.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ /g, "[ \\t]{1,2}"));
    return `[${first}${first.toUpperCase()}](?:${alts.join("|")})`;
  });
  return new RegExp(`\\b(?:${groups.join("|")})(?=[ \\t.,:!\\r\\n-])`, "g");
})();
/** A text up to this long is read word by word for its cues wherever they stand. */
const SHORT_TEXT = 512;
/** Fewer capitalized words than one per this many characters: a text written in lower case or in capitals. */
const CAPITALS_SPACING = 80;
/**
 * Greetings and honorifics anywhere (`contact herr müller`, `say hi john`), read with one pattern of
 * their words in a short text or in one written without capitals, where a name is found no other
 * way; a long text written with capitals has its names read by the capitalized-word rules, and its
 * cues only where the marks above stand (docs/detectors.md#person-name-mid-line).
 */
function cueWords(text: string, found: Found, spans: Span[]): void {
  MID_CUE.lastIndex = 0;
  for (let m = MID_CUE.exec(text); m !== null; m = MID_CUE.exec(text)) {
    // `\b` knows ASCII only: a cue inside a word of accented letters (`ñhi`), or after `'` (`i'm`), is none.
    const before = text.charCodeAt(m.index - 1);
    if (before === 39 || before === 0x2019 || scriptOf(before) === Script.Latin) continue;
    const kind = KIND.get(spaced(m[0]));
    if (kind === undefined) continue;
    found.kind = kind;
    found.start = m.index;
    found.end = m.index + m[0].length;
    const end = midLineSpan(text, found, spans);
    if (end > MID_CUE.lastIndex) MID_CUE.lastIndex = end;
  }
}

/**
 * Names in the Latin script marked by a cue, found from a few anchors by `indexOf` (no pattern pass
 * over the text): a field's `:` or `=`, and each line's end and start (a sign-off before it, a
 * greeting or an honorific after it, a CSV header). Text in other scripts also runs their cue words.
 */
export function findCuedNames(text: string, capitalizedWords = 0): Span[] {
  const spans: Span[] = [];
  const found: Found = { kind: Kind.Greeting, start: 0, end: 0 };
  fieldNames(text, ":", found, spans);
  fieldNames(text, "=", found, spans);
  let done = 0;
  let lineStart = 0;
  for (let at = 0; at >= 0 && at <= text.length; ) {
    // `at` is a line's start: a greeting or an honorific there.
    if (at >= done && cueAtLineStart(text, at, found))
      done = Math.max(done, keep(text, cueSpan(text, found.kind, found.start, found.end, spans), spans));
    const nl = text.indexOf("\n", at);
    if (nl < 0) break;
    // A sign-off that ends the line (`Best regards,`), the name on the next.
    if (nl >= done && cueBefore(text, nl, found) && found.kind === Kind.SignOff && found.start >= done)
      done = Math.max(done, keep(text, cueSpan(text, found.kind, found.start, found.end, spans), spans));
    if (lineStart === 0 || text.charCodeAt(lineStart - 2) === 10) csvHeader(text, lineStart, nl, spans);
    lineStart = nl + 1;
    at = nl + 1;
  }
  const otherScripts = OTHER_SCRIPT.test(text);
  if (
    text.length <= SHORT_TEXT ||
    (capitalizedWords * CAPITALS_SPACING < text.length &&
      capitalizedWords * CAPITALS_SPACING < latinLength(text, otherScripts))
  )
    cueWords(text, found, spans);
  if (otherScripts) otherScriptNames(text, spans);
  return spans;
}

/**
 * The length of a text less its letters of other scripts than the Latin one (those OTHER_SCRIPT
 * finds): the capitalized words counted are Latin, and so are the cue words of the mid-line pattern,
 * so a Japanese, Russian or Arabic text with a few capitalized Latin words is not one written
 * without capitals, and that pattern is not run over it (docs/detectors.md#person-name-mid-line).
 */
function latinLength(text: string, otherScripts: boolean): number {
  if (!otherScripts) return text.length;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x370 && c <= 0x1fff) || (c >= 0x3040 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7a3)) other++;
  }
  return text.length - other;
}

function skipSpaces(text: string, at: number): number {
  let i = at;
  while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i++;
  return i;
}

function skipQuote(text: string, at: number): number {
  let i = at;
  if (text.charCodeAt(i) === 34 || text.charCodeAt(i) === 39) i++;
  while (text.charCodeAt(i) === 32) i++;
  return i;
}

function wordStart(text: string, at: number): number {
  let i = at;
  while (i < text.length && scriptOf(text.charCodeAt(i)) === 0) i++;
  return i;
}

/**
 * Honorifics a letter's greeting puts before a name that are words alone (`meneer`, `pane`, `pani`,
 * `hr.`, `herra`): read only after a greeting (docs/detectors.md#person-name-letters).
 */
const GREETING_TITLES = new Set(
  "meneer|mevrouw|heer|juffrouw|pane|paní|slečno|panie|pani|pan|herra|rouva|neiti|hr|fr|fru|frk|frøken|fröken|senhor|senhora|senhorita|signore|signorina|mademoiselle|don|dona|doña|ing|avv|geom|rag".split(
    "|",
  ),
);

/** Feminine and other endings written after an abbreviation's dot (`Sig.ra`, `Sig.na`, `Dott.ssa`, `Prof.ssa`). */
const DOTTED_ENDING = /^(?:ra|na|ssa|a)\.?(?=[ \t\u00a0])/;

/** After an honorific's word ending at `end`: its dot and a dotted ending skipped; where a space must follow. */
function pastTitle(text: string, end: number): number {
  let i = end;
  if (text.charCodeAt(i) !== 46) return i;
  i++;
  const ending = DOTTED_ENDING.exec(text.slice(i, i + 4));
  return ending === null ? i : i + ending[0].length;
}

function isTitleWord(word: string): boolean {
  const kind = KIND.get(word);
  return kind === Kind.Title || kind === Kind.CapitalTitle || GREETING_TITLES.has(word);
}

/**
 * Honorifics at `at` (`Mr.`, `Herr`, `Sra.`, `Frau Dr.`, `Sig.ra`, up to three, after a greeting
 * also `meneer` or `pane`): where the name after them starts.
 */
function titleAt(text: string, at: number): number | null {
  let start: number | null = null;
  let from = at;
  for (let n = 0; n < 3; n++) {
    const w = wordAt(text, from, 0, 12);
    if (w === null) break;
    if (!isTitleWord(text.slice(w.start, w.end).toLowerCase())) break;
    const i = pastTitle(text, w.end);
    if (text.charCodeAt(i) !== 32) break;
    start = i;
    from = i;
  }
  return start;
}

const CSV_ROWS = 500;

/**
 * A CSV or TSV header cell named for a person (`id,name,email`): the cell of that column in each row
 * below is read as a field's value. Pushes every row's name but the last, which it returns.
 */
function csvColumn(text: string, start: number, end: number, spans: Span[]): Span | null {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  let lineEnd = text.indexOf("\n", end);
  if (lineEnd < 0) return null;
  const header = text.slice(lineStart, lineEnd);
  const sep = header.includes("\t") ? "\t" : header.includes(";") ? ";" : ",";
  const next = text.charCodeAt(end);
  if (next !== sep.charCodeAt(0) && next !== 10 && next !== 13 && next !== 34) return null;
  const column = text.slice(lineStart, start).split(sep).length - 1;
  if (header.split(sep).length < 2) return null;
  let last: Span | null = null;
  for (let row = 0; row < CSV_ROWS && lineEnd < text.length; row++) {
    const from = lineEnd + 1;
    let to = text.indexOf("\n", from);
    if (to < 0) to = text.length;
    lineEnd = to;
    const line = text.slice(from, to);
    if (!line.includes(sep)) break;
    let cellStart = from;
    for (let c = 0; c < column; c++) {
      const i = text.indexOf(sep, cellStart);
      if (i < 0 || i >= to) {
        cellStart = -1;
        break;
      }
      cellStart = i + 1;
    }
    if (cellStart < 0) continue;
    const span = headerName(text, cellStart, false);
    if (span === null) continue;
    if (last !== null) spans.push(last);
    last = span;
  }
  return last;
}
