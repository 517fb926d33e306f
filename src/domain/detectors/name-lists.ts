/**
 * The word lists behind the person-name detector (docs/detectors.md). Small on purpose: they hold
 * common given names and the capitalized words that most often follow one without being a surname.
 * Written in lower case here, stored capitalized ("Jordan"): the detector looks up each capitalized
 * word as written, without lower-casing it, which keeps a 4 KB text to a few microseconds.
 */

function words(list: string): Set<string> {
  return new Set(
    list
      .split(/\s+/)
      .filter((w) => w !== "")
      .map((w) => w[0]?.toUpperCase() + w.slice(1)),
  );
}

/**
 * Common given names across languages, lower case. Names that are also everyday English words are
 * left out (May, Will, Mark, Grace, Hope, Joy, Rose, Bill, Art, Summer, June, Ruby, Amber, Christian,
 * Mason, Hunter, Chase, Miles, Dallas, ...): a capitalized "Grace Period" must not read as a name.
 */
export const GIVEN_NAMES = words(`
  james john robert michael william david richard joseph thomas charles christopher daniel matthew anthony
  donald steven stephen paul andrew joshua kenneth kevin brian george timothy ronald edward jason jeffrey
  ryan jacob gary nicholas eric jonathan larry justin scott brandon benjamin samuel gregory alexander
  frank patrick raymond jack dennis jerry tyler aaron jose josé adam nathan henry douglas zachary peter
  kyle noah ethan jeremy walter keith roger terry austin sean gerald carl harold dylan arthur lawrence
  jordan jesse bryan bruce gabriel logan alan juan wayne ralph eugene randy vincent russell louis philip
  bobby johnny bradley howard fred harry oscar leo theo hugo felix liam lucas elijah oliver james
  sebastian julian isaac caleb connor owen luke jayden aiden levi ezra miguel mateo santiago diego pablo
  carlos luis javier alejandro andres fernando ricardo eduardo jorge rafael sergio manuel antonio
  francisco marco luca matteo giovanni giuseppe lorenzo alessandro francesco pietro hans klaus jurgen
  jürgen stefan thomas wolfgang dieter uwe sven lars nils erik anders henrik pierre jacques jean francois
  françois antoine nicolas olivier thierry mohammed muhammad mohamed ahmed ali omar hassan hussein ibrahim
  yusuf mustafa khalid tariq karim wei jun hao lei ming hiroshi takeshi kenji yuki haruto sota raj rahul
  anil amit arjun deepak rohan vikram sanjay ravi suresh ramesh vijay ivan dmitri sergei alexei nikolai
  vladimir andrei mikhail pavel oleg igor boris tomasz piotr krzysztof jakub marek pavel jan ondrej
  mary patricia jennifer linda elizabeth barbara susan jessica sarah karen lisa nancy betty sandra
  margaret ashley kimberly emily donna michelle carol amanda melissa deborah stephanie dorothy rebecca
  sharon laura cynthia amy kathleen angela shirley brenda emma anna pamela nicole samantha katherine
  christine helen debra rachel carolyn janet maria catherine heather diane olivia julie joyce victoria
  ruth virginia lauren kelly christina joan evelyn judith andrea hannah megan cheryl jacqueline martha
  madison teresa gloria sara janice kathryn abigail sophia frances jean alice judy isabella julia
  beverly denise marilyn danielle brittany diana natalie sophie charlotte alexis kayla lori clara
  florence eleanor lucy ella chloe zoe zoë mia ava amelia harper isla freya layla nora hazel
  violet penelope scarlett naomi leah audrey claire alicia monica veronica vanessa
  priya pooja sunita anjali neha kavita deepa lakshmi fatima aisha amina zainab leila yasmin noor
  mei ling yan xiu yuki sakura hana aiko keiko yoko olga natasha tatiana svetlana irina elena anastasia
  ekaterina maria lucia sofia valentina camila isabel carmen rosa pilar beatriz ines inês ana paula
  giulia francesca chiara alessia martina anke ingrid astrid birgit greta heidi sabine ursula marie
  camille chloé léa manon juliette amélie emmanuelle dana jane joanne joanna katarzyna agnieszka magdalena
  kate katie beth liz jenny jen becky becca tom tommy mike mikey dave danny dan nick chris matt andy
  tony steve jim jimmy joe joey ben sam alex pete jeff greg josh jon ron ken rick eddie ted charlie
  priyanka rajesh sanjana siddharth aditya vivek kiran arun varun nikhil manish ashok
  chen wang zhang liu yang huang zhao zhou guo lin luo
  kwame kofi ama abena chinedu ngozi oluwaseun adebayo emeka folake thabo sipho nomvula
  samir nadia rania hala walid bilal imran faisal salman sana hamza
`);

/** Capitalized words that follow a given name without being a surname: places, institutions, titles. */
export const NOT_SURNAME = words(`
  street avenue road lane drive boulevard highway parkway place square station airport bridge tower
  center centre plaza line river lake mountain mount valley bay beach island county city state district
  region village town harbor harbour port falls springs heights suite apt apartment unit floor
  university college school academy hospital clinic institute foundation company corporation corp inc
  ltd llc group bank fund trust association society council committee party union church cathedral
  museum library theatre theater stadium arena hotel restaurant cafe store shop market mall
  monday tuesday wednesday thursday friday saturday sunday january february march april june july
  august september october november december morning afternoon evening night week weekend day year
  texas california florida georgia carolina virginia dakota montana nevada arizona colorado oregon
  ohio michigan illinois indiana kentucky tennessee alabama louisiana utah idaho maine vermont alaska
  hawaii kansas iowa missouri arkansas oklahoma nebraska wisconsin minnesota pennsylvania maryland
  delaware jersey york massachusetts connecticut
  italy france spain germany england scotland ireland wales canada mexico brazil india china japan
  russia egypt kenya nigeria australia zealand
  optimizer model framework library engine server client protocol algorithm api sdk app platform system
  network service services team department office division project program programme plan policy
  report award prize cup series league championship tournament festival conference summit act law rule
  democratic republican national international united general central royal federal public private
  global american british french german european african asian new old great grand little
  north south east west northern southern eastern western upper lower
`);

/** A third capitalized word that turns "Given Surname" into an institution named after someone. */
export const ORG_TAIL = words(`
  university college institute school academy hospital clinic foundation center centre library museum
  memorial airport station bridge park hall stadium arena award prize medal trophy cup fellowship
  scholarship lecture street avenue road boulevard highway building tower company corporation group
  trust fund line syndrome disease effect principle theorem method high elementary
`);

/** Capitalized words that fill a name slot in forms and greetings without being a name. */
export const NOT_A_NAME = words(`
  the a an and or of in on at to for from with by is are was this that these those it we you they he
  she i my our your his her their please thanks thank hi hello hey dear not no yes but if so as all any
  each every some team everyone everybody all world there friends colleagues folks guys sir madam
  customer customers user users client clients member members admin support staff manager management
  required optional unknown none n/a premium standard basic pro free stable critical serious pending
  active inactive new test demo sample example field value details information name patient
  san santa santo sao são el los las sri saint sainte fort port mount lake hong abu kuala tel puerto
  costa nueva nuevo rio
`);

/**
 * Given names of the public lists that, in prompts, more often name a product, a language, a model
 * or a brand (`Claude Sonnet`, `Azure Functions`, `Tesla Model 3`): like common words, they read as
 * a name only beside a clear surname (`Claude Dupont`).
 */
export const NOT_FIRST_NAME = words(`
  azure jenkins django deno haskell perl lua siri cortana gemini claude tesla mercedes porsche ford
  lincoln dodge lexus audi kia bentley harley dell sony apple cisco fedora safari edge brave vue spring
  chrome alexa llama mistral grok copilot cursor jasper toyota honda nissan mazda subaru mitsubishi
  suzuki acura infiniti hyundai volkswagen volvo fiat ferrari lamborghini maserati peugeot renault
  citroen skoda opel chevrolet chevy cadillac buick chrysler jeep rivian jaguar polestar
`);

/** Titles written before a name, with or without a period. */
export const HONORIFICS = words(`
  Mr Mrs Ms Mx Miss Dr Sir Dame Lady Lord Professor Reverend Captain Judge Senator Herr Frau Mme Mlle
  Signor Signora Señor Señora Monsieur Madame Mademoiselle Dott Dottssa
`);

/** Abbreviated titles that are also ordinary words or codes (Rep, Gen, Col): only with a period. */
export const DOTTED_HONORIFICS = words(`
  Prof Rev Fr Sr Sra Srta Sta Capt Sgt Lt Col Gen Hon Sen Rep Gov Det Insp Supt Ing Avv Sig Dña Dott M
`);

/** One lookup per word instead of one per list: the lists a capitalized word belongs to. */
export const GIVEN = 1;
export const SURNAME_STOP = 2;
export const INSTITUTION = 4;
export const FILLER = 8;
export const TITLE = 16;
export const DOTTED_TITLE = 32;
export const NOT_FIRST = 64;

export const WORD_FLAGS = new Map<string, number>();
for (const [list, flag] of [
  [GIVEN_NAMES, GIVEN],
  [NOT_SURNAME, SURNAME_STOP],
  [ORG_TAIL, INSTITUTION],
  [NOT_A_NAME, FILLER],
  [HONORIFICS, TITLE],
  [DOTTED_HONORIFICS, DOTTED_TITLE],
  [NOT_FIRST_NAME, NOT_FIRST],
] as const) {
  for (const word of list) WORD_FLAGS.set(word, (WORD_FLAGS.get(word) ?? 0) | flag);
}

/**
 * Firms named after people that the S&P 500 list (word-data/firms.ts) does not hold: partnerships,
 * private firms and firms listed elsewhere (FTSE 100, DAX). Written by hand, as `nameKey` reads
 * their words (docs/detectors.md#person-name-world).
 */
export const EPONYMOUS_FIRMS = `
  ernst young|merrill lynch|marks spencer|hewlett packard|dow jones|lehman brothers|ben jerry|dolce gabbana
  rolls royce|harley davidson|mercedes benz|smith wesson|abercrombie fitch|allen overy|baker mckenzie
  clifford chance|ralph lauren|tommy hilfiger|calvin klein|hugo boss|louis vuitton|christian dior
  yves saint laurent|estee lauder|john lewis|jp morgan|j p morgan|price waterhouse|pricewaterhouse coopers
  arthur andersen|booz allen|booz allen hamilton|black decker|barnes noble|simon schuster|eli lilly
  edward jones|raymond james|morgan lewis|skadden arps|latham watkins|kirkland ellis|sullivan cromwell
  davis polk|johnson matthey|reckitt benckiser|taylor wimpey|j sainsbury|bang olufsen|brown forman
  mckinsey company|bain company|arthur d little|roland berger|oliver wyman|ernst and young|moody
  standard poor|dun bradstreet|marsh mclennan|sotheby|christie|cadbury schweppes|william grant sons
  john deere|walt disney|anheuser busch|wells fargo|charles schwab|morgan stanley|goldman sachs
`;
