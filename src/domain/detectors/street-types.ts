/**
 * Street types, from public postal standards (word-data/SOURCES.md):
 * - the US Postal Service's street suffixes (Publication 28, Appendix C1): every primary name with
 *   its standard abbreviation, plural forms included;
 * - the British and Canadian forms that the USPS list lacks;
 * - type-first forms of Spanish (the INE's street types), Italian (the ISTAT's generic names of
 *   streets), French and Portuguese.
 * Types that are also everyday words (Drive, Court, Mountains, Ferry, ...) are "ambiguous": the
 * address detector wants more evidence beside them (docs/detectors.md, Addresses).
 */

/** Abbreviations and types that are almost never ordinary words after a capitalized name. */
export const UNAMBIGUOUS_STREET_TYPES = `
  Street St Avenue Ave Av Road Rd Boulevard Blvd Lane Ln Highway Hwy Parkway Pkwy Pkwys Dr Drs Ct Cts Pl
  Sq Sqs Ter Cir Cirs Trl Trlr Cres Expressway Expy Freeway Fwy Aly Anx Arc Byu Blf Blfs Btm Br Brg Brk
  Brks Bg Bgs Byp Cp Cyn Cpe Cswy Ctr Ctrs Clf Clfs Clb Cmn Cmns Cor Cors Crse Cv Cvs Crk Crst Xing Xrd
  Xrds Curv Dl Dm Dv Est Ests Ext Exts Fls Fry Fld Flds Flt Flts Frd Frds Frst Frg Frgs Frk Frks Ft Gdn
  Gdns Gtwy Gln Glns Grn Grns Grv Grvs Hbr Hbrs Hvn Hts Hl Hls Holw Inlt Is Iss Jct Jcts Ky Kys Knl Knls
  Lk Lks Lndg Lgt Lgts Lf Lck Lcks Ldg Mnr Mnrs Mdw Mdws Ml Mls Msn Mtwy Mt Mtn Mtns Nck Orch Opas Psge
  Pne Pnes Pln Plns Plz Pt Pts Prt Prts Pr Radl Rnch Rpd Rpds Rst Rdg Rdgs Rds Rte Shl Shls Shr Shrs
  Skwy Spg Spgs Sta Stra Strm Sts Smt Trce Trak Trfy Tunl Tpke Upas Un Uns Vly Vlys Via Vl Vlg Vlgs Vw
  Vws Wls Thoroughfare Throughway Trafficway Stravenue Turnpike Motorway Causeway Underpass Overpass
  Viaduct Skyway
`;

/** Types that are also everyday words: an address only with more evidence beside them. */
export const AMBIGUOUS_STREET_TYPES = `
  Drive Drives Court Courts Place Terrace Way Ways Circle Circles Square Squares Trail Trailer Crescent
  Close Row Alley Plaza Loop Walk Walks Gardens Garden Green Greens Hill Hills Mews Grove Groves Rise
  View Views Annex Arcade Bayou Bluff Bluffs Bottom Branch Bridge Brook Brooks Burg Burgs Bypass Camp
  Canyon Cape Center Centers Centre Cliff Cliffs Club Common Commons Corner Corners Course Cove Coves
  Creek Crest Crossing Crossroad Crossroads Curve Dale Dam Divide Estate Estates Extension Extensions
  Fall Falls Ferry Field Fields Flat Flats Ford Fords Forest Forge Forges Fork Forks Fort Gateway Glen
  Glens Harbor Harbors Harbour Haven Heights Hollow Inlet Island Islands Isle Junction Junctions Key
  Keys Knoll Knolls Lake Lakes Land Landing Light Lights Loaf Lock Locks Lodge Mall Manor Manors
  Meadow Meadows Mill Mills Mission Mount Mountain Mountains Neck Orchard Oval Park Parks Pass Passage
  Path Pike Pine Pines Plain Plains Point Points Port Ports Prairie Radial Ramp Ranch Rapid Rapids Rest
  Ridge Ridges River Roads Route Rue Run Shoal Shoals Shore Shores Spring Springs Spur Spurs Station
  Stream Streets Summit Trace Track Tunnel Union Unions Valley Valleys Village Villages Ville Vista
  Wall Well Wells Yard Wood Parade Drove Gate Wynd Chase Croft Fold Hey Side End Quay Promenade Approach
  Broadway Concession Line Sideroad Brow Bank Heath Dene Vale Wharf Mead Paddock
`;

/** Types written before the name: `Via Roma 15`, `Calle Mayor 10`, `12 Rue de Rivoli`. */
export const TYPE_FIRST_STREET_TYPES = `
  Rue Avenue Avenida Calle Carrer Via Viale Piazza Piazzale Corso Rua Paseo Boulevard Chemin Quai Largo
  Praça Impasse Allée Voie Passage Cours Route Place Borgo Strada Contrada Vicolo Rotonda Lungomare
  Traversa Galleria Plaza Camino Carrera Ronda Travesía Callejón Glorieta Rambla Bajada Subida Cuesta
  Pasaje Carretera Urbanización Puerta Puente Muelle Rampa Riera Lugar Arroyo Aldea Sector Partida
  Polígono Barrio Alameda Vía Escalinata Explanada Huerta Chalet Manzana Lado Entrada Sección Grupo Monte
  Edificio Colonia Conjunto Paraje Pasadizo Prolongación Ampliación Jardines Salida Torrente Acceso
  Travessa Estrada Alameda Avinguda Incrocio Località Frazione Salita Discesa Parque Mercado Parcela
  Ramal Senda Bloque Terrenos Barranco Municipio
`;

export function alternation(list: string): string {
  return [...new Set(list.split(/\s+/).filter((w) => w !== ""))]
    .sort((a, b) => b.length - a.length)
    .join("|");
}
