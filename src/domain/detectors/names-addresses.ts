import type { Span } from "../content-scan.js";
import { merge, scan } from "./spans.js";

/**
 * Person names and postal addresses have no checksum, so these detectors look for the context that
 * makes a capitalized phrase a name or an address (docs/detectors.md):
 * - a name: an honorific before it (Dr. Jane Roe), a cue before it (my name is, Patient:, Regards,),
 *   or a common given name from a bundled list followed by a capitalized surname that is not a
 *   common noun (Maria Gonzalez, but not Grace Period);
 * - an address: a house number, a street name and a street type (221B Baker Street, 1600
 *   Pennsylvania Ave NW), a PO box, or a UK postcode.
 */

const HONORIFIC =
  /\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sir|Dame|Rev|Miss)\.?\s{1,3}(?:[A-Z]\.\s{0,2})?[A-Z][a-z'’-]{1,30}(?:\s{1,2}[A-Z][a-z'’-]{1,30}){0,2}/g;
// Case-sensitive on purpose: the name after the cue must be capitalized.
const CUE =
  /(?:\b[Mm]y name is|\b[Nn]ame ?:|\b[Pp]atient ?:|\b[Cc]ustomer ?:|\b[Ee]mployee ?:|\b[Cc]ontact ?:|\b[Ss]igned ?,|\b[Rr]egards ?,|\b[Ss]incerely ?,|\b[Tt]hanks ?,|\b[Cc]c ?:|\b[Aa]ttn\.? ?:)\s{1,3}([A-Z][a-z'’-]{1,30}(?:\s{1,2}[A-Z][a-z'’-]{1,30}){0,2})/g;
const PAIR = /\b([A-Z][a-z]{1,20})\s{1,2}(?:[A-Z]\.\s{1,2})?([A-Z][a-z'’]{1,30}(?:-[A-Z][a-z]{1,30})?)\b/g;

/** Common given names that are rarely ordinary words (May, Will, Grace, Hope... are left out). */
const GIVEN = new Set(
  (
    "james john robert michael william david richard joseph thomas charles christopher daniel matthew anthony " +
    "donald steven paul andrew joshua kenneth kevin brian george timothy ronald edward jason jeffrey ryan jacob " +
    "gary nicholas eric jonathan stephen larry justin scott brandon benjamin samuel gregory alexander frank " +
    "patrick raymond jack dennis jerry tyler aaron jose adam nathan henry douglas zachary peter kyle noah ethan " +
    "jeremy walter christian keith roger terry austin sean gerald carl harold dylan arthur lawrence jordan jesse " +
    "bryan billy bruce gabriel logan alan juan wayne ralph roy eugene randy vincent russell louis philip bobby " +
    "johnny bradley mary patricia jennifer linda elizabeth barbara susan jessica sarah karen lisa nancy betty " +
    "sandra margaret ashley kimberly emily donna michelle carol amanda melissa deborah stephanie dorothy rebecca " +
    "sharon laura cynthia amy kathleen angela shirley brenda emma anna pamela nicole samantha katherine christine " +
    "helen debra rachel carolyn janet maria catherine heather diane olivia julie joyce victoria ruth virginia " +
    "lauren kelly christina joan evelyn judith andrea hannah megan cheryl jacqueline martha madison teresa " +
    "gloria sara janice ann kathryn abigail sophia frances jean alice judy isabella julia beverly denise marilyn " +
    "amber danielle brittany diana natalie sophie charlotte alexis kayla lori mohammed muhammad ahmed ali omar " +
    "fatima aisha wei li yan hiroshi yuki kenji priya raj rahul anil sunita ravi arjun deepak pooja carlos luis " +
    "miguel javier alejandro sofia lucia valentina mateo diego pablo elena ana francesca giulia marco luca " +
    "matteo hans klaus jurgen anke sven lars ingrid astrid pierre jacques marie camille antoine chloe lucas " +
    "liam mason elijah oliver amelia mia harper ava isla freya dana jane dmitri olga ivan natasha sergei"
  ).split(" "),
);

/** Capitalized words that follow a given name without being a surname. */
const NOT_SURNAME = new Set(
  (
    "street avenue road lane drive court place boulevard park bank hall center centre university college " +
    "school hospital company inc ltd llc corp group foundation institute church bridge river lake mountain " +
    "county city state day week month year monday tuesday wednesday thursday friday saturday sunday january " +
    "february march april june july august september october november december award prize fund trust " +
    "airport station stadium museum library hotel building tower plaza square team project report program " +
    "protocol act law rule period island bay valley beach"
  ).split(" "),
);

function pairIsName(m: RegExpExecArray): boolean {
  const given = (m[1] ?? "").toLowerCase();
  const surname = (m[2] ?? "").toLowerCase();
  return GIVEN.has(given) && !NOT_SURNAME.has(surname);
}

export function findPersonNames(text: string): Span[] {
  const cued = scan(CUE, text, (m) => !NOT_SURNAME.has((m[1] ?? "").split(/\s/)[0]?.toLowerCase() ?? ""), 1);
  return merge(scan(HONORIFIC, text), cued, scan(PAIR, text, pairIsName));
}

const STREET_TYPES =
  "Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Terrace|Way|Parkway|Pkwy|Circle|Cir|Highway|Hwy|Square|Sq|Trail|Crescent|Close|Row|Alley|Plaza";
const STREET = new RegExp(
  `\\b\\d{1,6}[A-Za-z]?\\s{1,2}(?:(?:N|S|E|W|North|South|East|West)\\.?\\s{1,2})?(?:[A-Z][a-z]{1,20}|\\d{1,3}(?:st|nd|rd|th))(?:\\s{1,2}[A-Z][a-z]{1,20}){0,3}\\s{1,2}(?:${STREET_TYPES})\\b\\.?(?:\\s{1,2}(?:NW|NE|SW|SE|N|S|E|W)\\b)?(?:,?\\s{1,2}(?:Apt|Suite|Ste|Unit|Floor|Fl)\\.?\\s{0,2}#?[A-Za-z0-9-]{1,6})?`,
  "g",
);
const PO_BOX = /\bP\.?\s?O\.?\s{1,2}Box\s{1,2}\d{1,8}\b/gi;
const UK_POSTCODE = /\b(?:[A-Z]{1,2}\d[A-Z\d]?|GIR)\s{1,2}\d[ABD-HJLNP-UW-Z]{2}\b/g;

export function findAddresses(text: string): Span[] {
  return merge(scan(STREET, text), scan(PO_BOX, text), scan(UK_POSTCODE, text));
}
