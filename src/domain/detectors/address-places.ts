import { COUNTRIES_DATA } from "./word-data/countries.js";
import { HISPANIC_PLACES_DATA } from "./word-data/hispanic-places.js";

/**
 * Names that may close an address: countries and the first-level regions of the countries whose
 * addresses write them (ISO 3166-2 subdivision names; word-data/SOURCES.md), lower case. Looked up
 * in sets after a postal line, never searched for in the text.
 */

/** Lower case, accents removed: the form of `COUNTRIES_DATA`. */
export function placeKey(s: string): string {
  return s
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase();
}

/** Each country's own name and the short forms an address line uses, beside the ISO names. */
const ENDONYMS =
  "usa|u.s.a|us|united states|united states of america|uk|united kingdom|great britain|england|scotland|wales|" +
  "northern ireland|eire|deutschland|osterreich|schweiz|suisse|svizzera|nederland|the netherlands|belgie|" +
  "belgique|espana|polska|cesko|ceska republika|czech republic|czechia|sverige|danmark|norge|suomi|brasil|" +
  "mexico|argentina|india|bharat|japan|nippon|australia|new zealand|aotearoa|italia|portugal|france|canada|ireland";

export const COUNTRY_NAMES = new Set([...COUNTRIES_DATA.split("|"), ...ENDONYMS.split("|")]);

/** ISO 3166-2 first-level subdivisions written in addresses (US, CA, AU, IN, MX, BR, AR, IT regions). */
const REGIONS =
  // United States
  "alabama|alaska|arizona|arkansas|california|colorado|connecticut|delaware|district of columbia|florida|georgia|" +
  "hawaii|idaho|illinois|indiana|iowa|kansas|kentucky|louisiana|maine|maryland|massachusetts|michigan|minnesota|" +
  "mississippi|missouri|montana|nebraska|nevada|new hampshire|new jersey|new mexico|new york|north carolina|" +
  "north dakota|ohio|oklahoma|oregon|pennsylvania|rhode island|south carolina|south dakota|tennessee|texas|utah|" +
  "vermont|virginia|washington|west virginia|wisconsin|wyoming|puerto rico|" +
  // Canada
  "alberta|british columbia|manitoba|new brunswick|newfoundland and labrador|nova scotia|ontario|" +
  "prince edward island|quebec|saskatchewan|northwest territories|nunavut|yukon|" +
  // Australia
  "new south wales|victoria|queensland|south australia|western australia|tasmania|australian capital territory|" +
  "northern territory|" +
  // India
  "andhra pradesh|arunachal pradesh|assam|bihar|chhattisgarh|goa|gujarat|haryana|himachal pradesh|jharkhand|" +
  "karnataka|kerala|madhya pradesh|maharashtra|manipur|meghalaya|mizoram|nagaland|odisha|punjab|rajasthan|" +
  "sikkim|tamil nadu|telangana|tripura|uttar pradesh|uttarakhand|west bengal|andaman and nicobar islands|" +
  "chandigarh|dadra and nagar haveli and daman and diu|dadra and nagar haveli|daman and diu|delhi|jammu and kashmir|ladakh|lakshadweep|puducherry|" +
  // Mexico
  "aguascalientes|baja california|baja california norte|baja california sur|campeche|chiapas|chihuahua|ciudad de mexico|coahuila|" +
  "colima|durango|guanajuato|guerrero|hidalgo|jalisco|estado de mexico|michoacan|morelos|nayarit|nuevo leon|" +
  "oaxaca|puebla|queretaro|quintana roo|san luis potosi|sinaloa|sonora|tabasco|tamaulipas|tlaxcala|veracruz|" +
  "yucatan|zacatecas|" +
  // Brazil
  "acre|alagoas|amapa|amazonas|bahia|ceara|distrito federal|espirito santo|goias|maranhao|mato grosso|" +
  "mato grosso do sul|minas gerais|para|paraiba|parana|pernambuco|piaui|rio de janeiro|rio grande do norte|" +
  "rio grande do sul|rondonia|roraima|santa catarina|sao paulo|sergipe|tocantins|" +
  // Argentina
  "buenos aires|catamarca|chaco|chubut|cordoba|corrientes|entre rios|formosa|jujuy|la pampa|la rioja|mendoza|" +
  "misiones|neuquen|rio negro|salta|san juan|san luis|santa cruz|santa fe|santiago del estero|" +
  "tierra del fuego|tucuman|" +
  // Ireland (counties, written `Co. Cork`)
  "co. carlow|co. cavan|co. clare|co. cork|co. donegal|co. dublin|co. galway|co. kerry|co. kildare|co. kilkenny|" +
  "co. laois|co. leitrim|co. limerick|co. longford|co. louth|co. mayo|co. meath|co. monaghan|co. offaly|" +
  "co. roscommon|co. sligo|co. tipperary|co. waterford|co. westmeath|co. wexford|co. wicklow";

/** Japan's 47 prefectures, romanized (ISO 3166-2:JP). */
const JP =
  "hokkaido|aomori|iwate|miyagi|akita|yamagata|fukushima|ibaraki|tochigi|gunma|saitama|chiba|tokyo|kanagawa|" +
  "niigata|toyama|ishikawa|fukui|yamanashi|nagano|gifu|shizuoka|aichi|mie|shiga|kyoto|osaka|hyogo|nara|" +
  "wakayama|tottori|shimane|okayama|hiroshima|yamaguchi|tokushima|kagawa|ehime|kochi|fukuoka|saga|nagasaki|" +
  "kumamoto|oita|miyazaki|kagoshima|okinawa";

export const JP_PREFECTURES = new Set(JP.split("|"));
export const IN_STATES = new Set(
  REGIONS.slice(REGIONS.indexOf("andhra"), REGIONS.indexOf("|aguascalientes")).split("|"),
);
export const REGION_NAMES = new Set([...REGIONS.split("|"), ...JP.split("|")]);

let hispanicPlaces: Set<string> | null = null;
let hispanicFirst: Set<string> | null = null;

/** Built on the first phrase of three words that asks: most texts hold none. */
function hispanicPlaceSet(): Set<string> {
  if (hispanicPlaces === null) {
    hispanicPlaces = new Set(HISPANIC_PLACES_DATA.split("|"));
    hispanicFirst = new Set([...hispanicPlaces].map((p) => p.split(" ")[0] as string));
  }
  return hispanicPlaces;
}

/**
 * Whether the words (each as `nameKey` writes it) name a Spanish or Mexican place of three words or
 * more with a particle inside (`santiago de compostela`, `san juan de los lagos`;
 * docs/detectors.md#person-name-places).
 */
export function isHispanicPlace(words: string[]): boolean {
  if (words.length < 3) return false;
  const places = hispanicPlaceSet();
  if (!(hispanicFirst as Set<string>).has(words[0] as string)) return false;
  return places.has(words.join(" "));
}
