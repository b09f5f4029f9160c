//! Content constraints on a passage's *setting* — where it takes place, when, and whom it is
//! about — made by substitution, with exact labels (`trainer synth renderings`).
//!
//! Why: the renderings of [`super::renderings`] change a passage's form (source, layout,
//! length) or drop sentences; the constraints people write in TREC and FollowIR narratives are
//! about content ("only studies in children", "glaciers in Asia", "increases from 2015 on"),
//! and to follow them a model has to relate a category in the instruction ("Asia") to an
//! instance in the text ("Nepal"), not match a word. MS MARCO has one relevant passage per
//! query, so two *different* relevant passages that differ in their setting do not exist; but
//! the relevant passage can be shown twice with its places, years or people moved into two
//! categories, everything else word for word. Both versions answer the query (which names no
//! place, year or group of the family, else the passage is not used), and only the
//! instruction decides between them.
//!
//! * [`Setting::Place`]: every country, state, city and region the passage names, with its
//!   demonyms ("Texas", "Texan", "Texans"), moved into one of two world regions;
//! * [`Setting::Time`]: every year shifted by one multiple of ten (decades stay decades, spans
//!   keep their length) to lie before a threshold year or from it on;
//! * [`Setting::People`]: plural nouns of one group of people swapped for the other group's
//!   (children and adults, women and men).

use crate::phrasing::{capital, Phrasing};
use engine::rng::SplitMix64;

/// A world region, the value of a place constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// The United States and Canada.
    NorthAmerica,
    /// Europe.
    Europe,
    /// Asia.
    Asia,
    /// Africa.
    Africa,
    /// Mexico, Central and South America.
    LatinAmerica,
    /// Australia, New Zealand and the Pacific.
    Oceania,
}

const REGIONS: [Region; 6] = [
    Region::NorthAmerica,
    Region::Europe,
    Region::Asia,
    Region::Africa,
    Region::LatinAmerica,
    Region::Oceania,
];

/// A group of people, the value of a population constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum People {
    /// Children and teenagers.
    Children,
    /// Adults.
    Adults,
    /// Women.
    Women,
    /// Men.
    Men,
}

/// Where, when or whom: the two values a passage is shown with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    /// The passage's places moved into the first region, or into the second.
    Place(Region, Region),
    /// The passage's years before `threshold` (first value), or `threshold` and later.
    Time {
        /// The first year of the second value.
        threshold: i32,
    },
    /// The passage's people of the first group, or of the second.
    People(People, People),
}

impl Setting {
    /// A short name for reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Setting::Place(..) => "setting-place",
            Setting::Time { .. } => "setting-time",
            Setting::People(..) => "setting-people",
        }
    }

    /// The two versions of `text`, first value first, `None` when this passage cannot be
    /// shown both ways (nothing of the family in it, a span of years too wide, ...).
    pub fn versions(&self, text: &str, rng: &mut SplitMix64) -> Option<[String; 2]> {
        match self {
            Setting::Place(a, b) => {
                let mentions = place_mentions(text);
                if mentions.is_empty() {
                    return None;
                }
                Some([
                    move_places(text, &mentions, *a, rng),
                    move_places(text, &mentions, *b, rng),
                ])
            }
            Setting::Time { threshold } => {
                let years = year_mentions(text)?;
                let before = shift_years(text, &years, Era::Before(*threshold), rng)?;
                let after = shift_years(text, &years, Era::From(*threshold), rng)?;
                Some([before, after])
            }
            Setting::People(a, b) => {
                let (group, _) = people_in(text)?;
                let render = |to: People| {
                    if to == group {
                        text.to_string()
                    } else {
                        swap_people(text, group, to)
                    }
                };
                Some([render(*a), render(*b)])
            }
        }
    }

    /// The instruction asking for the first value (`first`) or the second, in `phrasing`.
    pub fn phrase(&self, first: bool, phrasing: Phrasing, rng: &mut SplitMix64) -> String {
        let names = |s: &Setting, first: bool, rng: &mut SplitMix64| -> Names {
            match s {
                Setting::Place(a, b) => region_names(if first { *a } else { *b }, rng),
                Setting::Time { threshold } => era_names(first, *threshold, rng),
                Setting::People(a, b) => people_names(if first { *a } else { *b }, rng),
            }
        };
        let want = names(self, first, rng);
        let other = names(self, !first, rng);
        let options: &[&str] = match (self, phrasing) {
            (Setting::Time { .. }, Phrasing::Request) => &[
                "Only information about things {about}.",
                "Restrict this to {about}.",
                "I need material on what happened {about}.",
                "Relevant documents describe the situation {about}.",
                "Keep to sources that cover the period {about}.",
                "The answer should be about events {about}.",
            ],
            (Setting::Time { .. }, Phrasing::Exclusion) => &[
                "Nothing about the period {other_about}.",
                "Anything describing events {other_about} is not relevant.",
                "Leave out what happened {other_about}.",
                "Exclude documents about the years {other_about}.",
                "I have no use for information {other_about}.",
            ],
            (Setting::Time { .. }, Phrasing::Contrast) => &[
                "Events {about}, not {other_about}.",
                "I want the period {about} rather than {other_about}.",
                "Not the years {other_about}: only {about}.",
                "Documents about the time {other_about} are not relevant; I need {about}.",
            ],
            (_, Phrasing::Request) => &[
                "Only results about {about}.",
                "I'm interested in {adjective} cases only.",
                "Limit this to {about}.",
                "The answer should concern {about}.",
                "Relevant documents deal with {about}.",
                "Please keep to {about}.",
                "Information on {about}, please.",
            ],
            (_, Phrasing::Exclusion) => &[
                "Nothing about {other_about}, please.",
                "Leave out anything about {other_about}.",
                "{Other_adjective} cases are not relevant.",
                "Exclude results that concern {other_about}.",
                "I'm not interested in {other_about}.",
                "Documents dealing with {other_about} do not count.",
            ],
            (_, Phrasing::Contrast) => &[
                "{Adjective} cases, not {other_adjective} ones.",
                "Focus on {about} rather than {other_about}.",
                "Not {other_about}: {about} only.",
                "I want information about {about}; anything about {other_about} is irrelevant.",
                "Skip {other_about} and give me {about}.",
            ],
        };
        options[rng.below(options.len())]
            .replace("{Adjective}", &capital(want.adjective))
            .replace("{Other_adjective}", &capital(other.adjective))
            .replace("{about}", &want.about)
            .replace("{adjective}", want.adjective)
            .replace("{other_about}", &other.about)
            .replace("{other_adjective}", other.adjective)
    }
}

/// A setting `text` can be shown with (for `query`, which must name nothing of its family),
/// its values drawn with `rng`; `None` when the passage has no place, usable year or group.
pub fn applicable(query: &str, text: &str, rng: &mut SplitMix64) -> Option<Setting> {
    let mut options = Vec::new();
    let asks = |words: &[&str]| words.iter().any(|w| has_word_ignoring_case(query, w));
    if !place_mentions(text).is_empty() && !names_a_place(query) && !asks(ASKS_WHERE) {
        let a = REGIONS[rng.below(REGIONS.len())];
        let b = REGIONS[(REGIONS.iter().position(|r| *r == a).expect("listed") + 1 + rng.below(5))
            % REGIONS.len()];
        options.push(Setting::Place(a, b));
    }
    // A query with any four-digit number (a year, a model number) is left out.
    let dated =
        year_mentions(text).filter(|_| !has_any_number_of_four_digits(query) && !asks(ASKS_WHEN));
    if let Some(years) = dated {
        let fits: Vec<i32> = THRESHOLDS
            .iter()
            .copied()
            .filter(|t| shift_range(&years, Era::Before(*t)).is_some())
            .filter(|t| shift_range(&years, Era::From(*t)).is_some())
            .collect();
        if !fits.is_empty() {
            options.push(Setting::Time {
                threshold: fits[rng.below(fits.len())],
            });
        }
    }
    if let Some((group, pair)) = people_in(text) {
        if !names_people(query, pair) && !asks(ASKS_WHO) {
            let other = pair
                .iter()
                .copied()
                .find(|g| *g != group)
                .expect("two groups");
            options.push(if rng.below(2) == 0 {
                Setting::People(group, other)
            } else {
                Setting::People(other, group)
            });
        }
    }
    (!options.is_empty()).then(|| options.swap_remove(rng.below(options.len())))
}

/// Query words that ask for a place, a time or a group of people: moving the passage's
/// setting would change its answer, so the family is not used for such queries.
const ASKS_WHERE: &[&str] = &[
    "where",
    "located",
    "location",
    "country",
    "countries",
    "state",
    "states",
    "city",
    "cities",
    "county",
    "capital",
    "language",
    "languages",
    "nationality",
    "continent",
    "region",
    "zip",
    "area code",
    "flag",
    "population",
    "ny",
    "nyc",
    "nj",
    "tx",
    "fl",
    "ca",
    "pa",
    "nc",
    "sc",
    "va",
    "wa",
    "ma",
    "az",
    "mi",
    "il",
    "mn",
    "wi",
    "md",
    "tn",
    "ky",
    "uk",
];
const ASKS_WHEN: &[&str] = &[
    "when", "year", "years", "date", "dates", "century", "decade", "founded", "born", "died",
    "history", "age", "old", "era", "period", "ago", "invented", "built",
];
const ASKS_WHO: &[&str] = &["age", "ages", "old", "born", "who", "gender", "sex"];

/// How an instruction names a value: a noun phrase ("Asia") and an adjective ("Asian").
struct Names {
    about: String,
    adjective: &'static str,
}

fn region_names(region: Region, rng: &mut SplitMix64) -> Names {
    let (about, adjective): (&[&str], &str) = match region {
        Region::NorthAmerica => (
            &[
                "North America",
                "the US and Canada",
                "North American countries",
            ],
            "North American",
        ),
        Region::Europe => (&["Europe", "European countries"], "European"),
        Region::Asia => (&["Asia", "Asian countries"], "Asian"),
        Region::Africa => (&["Africa", "African countries"], "African"),
        Region::LatinAmerica => (
            &["Latin America", "Central and South America"],
            "Latin American",
        ),
        Region::Oceania => (
            &["Australia and New Zealand", "Oceania"],
            "Australian or New Zealand",
        ),
    };
    Names {
        about: about[rng.below(about.len())].to_string(),
        adjective,
    }
}

fn era_names(before: bool, threshold: i32, rng: &mut SplitMix64) -> Names {
    let about = if before {
        match rng.below(3) {
            0 => format!("before {threshold}"),
            1 => format!("prior to {threshold}"),
            _ => format!("earlier than {threshold}"),
        }
    } else {
        match rng.below(3) {
            0 => format!("from {threshold} on"),
            1 => format!("since {threshold}"),
            _ => format!("after {}", threshold - 1),
        }
    };
    Names {
        about,
        adjective: if before { "earlier" } else { "later" },
    }
}

fn people_names(people: People, rng: &mut SplitMix64) -> Names {
    let (about, adjective): (&[&str], &str) = match people {
        People::Children => (
            &["children", "kids", "young people", "minors"],
            "paediatric",
        ),
        People::Adults => (&["adults", "grown-ups", "people over 18"], "adult"),
        People::Women => (&["women", "female subjects"], "female"),
        People::Men => (&["men", "male subjects"], "male"),
    };
    Names {
        about: about[rng.below(about.len())].to_string(),
        adjective,
    }
}

// ---------------------------------------------------------------------------------------
// Words

/// Byte ranges of `word` in `text` at word boundaries (case-sensitive).
fn find_word(text: &str, word: &str) -> Vec<(usize, usize)> {
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
    text.match_indices(word)
        .map(|(i, _)| (i, i + word.len()))
        .filter(|(s, e)| {
            boundary(text[..*s].chars().next_back()) && boundary(text[*e..].chars().next())
        })
        .collect()
}

/// Whether `text` has `word` at word boundaries, ignoring case (queries are often lowercase).
fn has_word_ignoring_case(text: &str, word: &str) -> bool {
    !find_word(&text.to_lowercase(), &word.to_lowercase()).is_empty()
}

/// A replacement of `text[start..end]`.
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

/// `text` with the non-overlapping `edits` (sorted by start) applied.
fn apply(text: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for e in edits {
        out.push_str(&text[at..e.start]);
        out.push_str(&e.with);
        at = e.end;
    }
    out.push_str(&text[at..]);
    out
}

// ---------------------------------------------------------------------------------------
// Places

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    City,
    Country,
    Continent,
}

/// A place: its region, level, name (with "the" before it when `the`), other names, and the
/// adjective and plural noun for its people where they are not also a language's name.
struct Place {
    region: Region,
    level: Level,
    name: &'static str,
    the: bool,
    aliases: &'static [&'static str],
    adjective: Option<&'static str>,
    people: Option<&'static str>,
}

macro_rules! places {
    ($($region:ident $level:ident $name:literal $the:literal [$($alias:literal),*] $adj:expr, $people:expr;)*) => {
        &[$(Place {
            region: Region::$region,
            level: Level::$level,
            name: $name,
            the: $the,
            aliases: &[$($alias),*],
            adjective: $adj,
            people: $people,
        }),*]
    };
}

const PLACES: &[Place] = places! {
    NorthAmerica Continent "North America" false [] Some("North American"), None;
    NorthAmerica Country "United States" true ["U.S.", "US", "USA", "U.S.A.", "America"] Some("American"), Some("Americans");
    NorthAmerica Country "Canada" false [] Some("Canadian"), Some("Canadians");
    NorthAmerica Country "Texas" false [] Some("Texan"), Some("Texans");
    NorthAmerica Country "California" false [] Some("Californian"), Some("Californians");
    NorthAmerica Country "Florida" false [] None, None;
    NorthAmerica Country "Ohio" false [] None, None;
    NorthAmerica Country "Virginia" false [] None, None;
    NorthAmerica Country "Illinois" false [] None, None;
    NorthAmerica Country "Michigan" false [] None, None;
    NorthAmerica Country "Arizona" false [] None, None;
    NorthAmerica Country "Colorado" false [] None, None;
    NorthAmerica Country "Oregon" false [] None, None;
    NorthAmerica Country "Nevada" false [] None, None;
    NorthAmerica Country "Utah" false [] None, None;
    NorthAmerica Country "Alabama" false [] None, None;
    NorthAmerica Country "Tennessee" false [] None, None;
    NorthAmerica Country "Kentucky" false [] None, None;
    NorthAmerica Country "Indiana" false [] None, None;
    NorthAmerica Country "Missouri" false [] None, None;
    NorthAmerica Country "Minnesota" false [] None, None;
    NorthAmerica Country "Wisconsin" false [] None, None;
    NorthAmerica Country "Iowa" false [] None, None;
    NorthAmerica Country "Kansas" false [] None, None;
    NorthAmerica Country "Louisiana" false [] None, None;
    NorthAmerica Country "Pennsylvania" false [] None, None;
    NorthAmerica Country "North Carolina" false [] None, None;
    NorthAmerica Country "South Carolina" false [] None, None;
    NorthAmerica Country "Massachusetts" false [] None, None;
    NorthAmerica Country "Maryland" false [] None, None;
    NorthAmerica Country "Oklahoma" false [] None, None;
    NorthAmerica Country "New Jersey" false [] None, None;
    NorthAmerica Country "New York" false [] None, Some("New Yorkers");
    NorthAmerica Country "Alaska" false [] None, None;
    NorthAmerica Country "Hawaii" false [] None, None;
    NorthAmerica Country "Ontario" false [] None, None;
    NorthAmerica Country "Quebec" false [] None, None;
    NorthAmerica Country "Alberta" false [] None, None;
    NorthAmerica City "Chicago" false [] None, None;
    NorthAmerica City "Los Angeles" false [] None, None;
    NorthAmerica City "Boston" false [] None, None;
    NorthAmerica City "Houston" false [] None, None;
    NorthAmerica City "Dallas" false [] None, None;
    NorthAmerica City "Seattle" false [] None, None;
    NorthAmerica City "Toronto" false [] None, None;
    NorthAmerica City "Vancouver" false [] None, None;
    NorthAmerica City "Atlanta" false [] None, None;
    NorthAmerica City "Denver" false [] None, None;
    NorthAmerica City "Miami" false [] None, None;
    NorthAmerica City "San Francisco" false [] None, None;
    NorthAmerica City "Philadelphia" false [] None, None;
    Europe Continent "Europe" false [] Some("European"), Some("Europeans");
    Europe Country "United Kingdom" true ["UK", "U.K.", "Britain", "Great Britain"] Some("British"), Some("Britons");
    Europe Country "England" false [] None, None;
    Europe Country "France" false [] Some("French"), None;
    Europe Country "Germany" false [] Some("German"), Some("Germans");
    Europe Country "Spain" false [] Some("Spanish"), Some("Spaniards");
    Europe Country "Italy" false [] Some("Italian"), Some("Italians");
    Europe Country "Ireland" false [] Some("Irish"), None;
    Europe Country "Scotland" false [] Some("Scottish"), None;
    Europe Country "Sweden" false [] Some("Swedish"), Some("Swedes");
    Europe Country "Norway" false [] Some("Norwegian"), Some("Norwegians");
    Europe Country "Poland" false [] Some("Polish"), None;
    Europe Country "Netherlands" true [] Some("Dutch"), None;
    Europe Country "Portugal" false [] Some("Portuguese"), None;
    Europe Country "Austria" false [] Some("Austrian"), Some("Austrians");
    Europe Country "Switzerland" false [] Some("Swiss"), None;
    Europe Country "Denmark" false [] Some("Danish"), None;
    Europe Country "Finland" false [] Some("Finnish"), None;
    Europe City "Paris" false [] None, None;
    Europe City "London" false [] None, None;
    Europe City "Berlin" false [] None, None;
    Europe City "Madrid" false [] None, None;
    Europe City "Rome" false [] None, None;
    Europe City "Amsterdam" false [] None, None;
    Europe City "Vienna" false [] None, None;
    Europe City "Dublin" false [] None, None;
    Europe City "Stockholm" false [] None, None;
    Europe City "Lisbon" false [] None, None;
    Europe City "Prague" false [] None, None;
    Asia Continent "Asia" false [] Some("Asian"), Some("Asians");
    Asia Country "China" false [] Some("Chinese"), None;
    Asia Country "Japan" false [] Some("Japanese"), None;
    Asia Country "India" false [] Some("Indian"), None;
    Asia Country "South Korea" false ["Korea"] Some("Korean"), Some("Koreans");
    Asia Country "Vietnam" false [] Some("Vietnamese"), None;
    Asia Country "Thailand" false [] Some("Thai"), None;
    Asia Country "Indonesia" false [] Some("Indonesian"), Some("Indonesians");
    Asia Country "Philippines" true [] Some("Filipino"), Some("Filipinos");
    Asia Country "Malaysia" false [] Some("Malaysian"), Some("Malaysians");
    Asia Country "Pakistan" false [] Some("Pakistani"), None;
    Asia Country "Nepal" false [] Some("Nepali"), None;
    Asia Country "Bangladesh" false [] None, None;
    Asia City "Tokyo" false [] None, None;
    Asia City "Beijing" false [] None, None;
    Asia City "Shanghai" false [] None, None;
    Asia City "Mumbai" false [] None, None;
    Asia City "Delhi" false ["New Delhi"] None, None;
    Asia City "Seoul" false [] None, None;
    Asia City "Bangkok" false [] None, None;
    Asia City "Hong Kong" false [] None, None;
    Asia City "Singapore" false [] None, None;
    Africa Continent "Africa" false [] Some("African"), Some("Africans");
    Africa Country "Kenya" false [] Some("Kenyan"), Some("Kenyans");
    Africa Country "Nigeria" false [] Some("Nigerian"), Some("Nigerians");
    Africa Country "Ghana" false [] Some("Ghanaian"), Some("Ghanaians");
    Africa Country "Egypt" false [] Some("Egyptian"), Some("Egyptians");
    Africa Country "Ethiopia" false [] Some("Ethiopian"), Some("Ethiopians");
    Africa Country "South Africa" false [] Some("South African"), Some("South Africans");
    Africa Country "Morocco" false [] Some("Moroccan"), Some("Moroccans");
    Africa Country "Tanzania" false [] Some("Tanzanian"), Some("Tanzanians");
    Africa Country "Uganda" false [] Some("Ugandan"), Some("Ugandans");
    Africa City "Nairobi" false [] None, None;
    Africa City "Lagos" false [] None, None;
    Africa City "Cairo" false [] None, None;
    Africa City "Cape Town" false [] None, None;
    Africa City "Accra" false [] None, None;
    Africa City "Johannesburg" false [] None, None;
    LatinAmerica Continent "Latin America" false ["South America", "Central America"] Some("Latin American"), Some("Latin Americans");
    LatinAmerica Country "Mexico" false [] Some("Mexican"), Some("Mexicans");
    LatinAmerica Country "Brazil" false [] Some("Brazilian"), Some("Brazilians");
    LatinAmerica Country "Argentina" false [] Some("Argentine"), Some("Argentines");
    LatinAmerica Country "Chile" false [] Some("Chilean"), Some("Chileans");
    LatinAmerica Country "Peru" false [] Some("Peruvian"), Some("Peruvians");
    LatinAmerica Country "Colombia" false [] Some("Colombian"), Some("Colombians");
    LatinAmerica Country "Costa Rica" false [] Some("Costa Rican"), Some("Costa Ricans");
    LatinAmerica City "Mexico City" false [] None, None;
    LatinAmerica City "Buenos Aires" false [] None, None;
    LatinAmerica City "Rio de Janeiro" false [] None, None;
    LatinAmerica City "Lima" false [] None, None;
    LatinAmerica City "Bogota" false [] None, None;
    Oceania Continent "Oceania" false [] None, None;
    Oceania Country "Australia" false [] Some("Australian"), Some("Australians");
    Oceania Country "New Zealand" false [] None, Some("New Zealanders");
    Oceania Country "Fiji" false [] Some("Fijian"), Some("Fijians");
    Oceania City "Sydney" false [] None, None;
    Oceania City "Melbourne" false [] None, None;
    Oceania City "Auckland" false [] None, None;
    Oceania City "Brisbane" false [] None, None;
};

/// Which form of a place a mention uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Its name or an alias; `article` when "the"/"The" before it belongs to the mention.
    Name { article: Option<bool> },
    /// The adjective ("Texan").
    Adjective,
    /// The people ("Texans").
    People,
}

/// A place named in a text: byte range, the place (index into [`PLACES`]) and the form.
#[derive(Debug, Clone, Copy)]
struct PlaceMention {
    start: usize,
    end: usize,
    place: usize,
    form: Form,
}

/// Every place mention of `text`, longest first where they overlap, in text order.
fn place_mentions(text: &str) -> Vec<PlaceMention> {
    let mut found = Vec::new();
    for (i, p) in PLACES.iter().enumerate() {
        let names = std::iter::once(p.name).chain(p.aliases.iter().copied());
        for name in names {
            for (s, e) in find_word(text, name) {
                let (start, article) = if text[..s].ends_with("the ") {
                    (s - 4, Some(false))
                } else if text[..s].ends_with("The ") {
                    (s - 4, Some(true))
                } else {
                    (s, None)
                };
                found.push(PlaceMention {
                    start,
                    end: e,
                    place: i,
                    form: Form::Name { article },
                });
            }
        }
        for (word, form) in [(p.adjective, Form::Adjective), (p.people, Form::People)] {
            for (s, e) in word.map(|w| find_word(text, w)).unwrap_or_default() {
                found.push(PlaceMention {
                    start: s,
                    end: e,
                    place: i,
                    form,
                });
            }
        }
    }
    found.sort_by_key(|m| (m.start, std::cmp::Reverse(m.end)));
    let mut kept: Vec<PlaceMention> = Vec::new();
    for m in found {
        if kept.last().is_none_or(|k| m.start >= k.end) {
            kept.push(m);
        }
    }
    kept
}

/// Whether `query` names any place of the table, in any form, ignoring case (two-letter
/// aliases such as "US" only in capitals: "us" is a pronoun).
fn names_a_place(query: &str) -> bool {
    PLACES.iter().any(|p| {
        std::iter::once(p.name)
            .chain(p.aliases.iter().copied())
            .chain(p.adjective)
            .chain(p.people)
            .any(|w| {
                if w.len() <= 3 {
                    !find_word(query, w).is_empty()
                } else {
                    has_word_ignoring_case(query, w)
                }
            })
    })
}

/// A place of `region` at `level` that can stand in every `form` used, drawn with `rng`,
/// avoiding `taken` when it can.
fn stand_in(
    region: Region,
    level: Level,
    forms: &[Form],
    taken: &[usize],
    rng: &mut SplitMix64,
) -> Option<usize> {
    let fits = |i: &usize| {
        let p = &PLACES[*i];
        p.region == region
            && p.level == level
            && forms.iter().all(|f| match f {
                Form::Name { .. } => true,
                Form::Adjective => p.adjective.is_some(),
                Form::People => p.people.is_some(),
            })
    };
    let all: Vec<usize> = (0..PLACES.len()).filter(fits).collect();
    let fresh: Vec<usize> = all.iter().copied().filter(|i| !taken.contains(i)).collect();
    let pool = if fresh.is_empty() { all } else { fresh };
    (!pool.is_empty()).then(|| pool[rng.below(pool.len())])
}

/// `text` with every place mention moved into `region` (places already there are kept; each
/// other place gets one stand-in of the same level, used for all its forms).
fn move_places(
    text: &str,
    mentions: &[PlaceMention],
    region: Region,
    rng: &mut SplitMix64,
) -> String {
    let mut map: Vec<(usize, usize)> = Vec::new();
    for m in mentions {
        if PLACES[m.place].region == region || map.iter().any(|(from, _)| *from == m.place) {
            continue;
        }
        let forms: Vec<Form> = mentions
            .iter()
            .filter(|o| o.place == m.place)
            .map(|o| o.form)
            .collect();
        let taken: Vec<usize> = map.iter().map(|(_, to)| *to).collect();
        let level = PLACES[m.place].level;
        // A city with no stand-in of its level becomes a country of the region.
        let to = stand_in(region, level, &forms, &taken, rng)
            .or_else(|| stand_in(region, Level::Country, &forms, &taken, rng))
            .or_else(|| stand_in(region, Level::Continent, &forms, &taken, rng));
        if let Some(to) = to {
            map.push((m.place, to));
        }
    }
    let edits: Vec<Edit> = mentions
        .iter()
        .filter_map(|m| {
            let to = &PLACES[map.iter().find(|(from, _)| *from == m.place)?.1];
            let with = match m.form {
                Form::Name { article } => match (article, to.the) {
                    (Some(true), true) => format!("The {}", to.name),
                    (_, true) => format!("the {}", to.name),
                    (_, false) => to.name.to_string(),
                },
                Form::Adjective => to.adjective?.to_string(),
                Form::People => to.people?.to_string(),
            };
            Some(Edit {
                start: m.start,
                end: m.end,
                with,
            })
        })
        .collect();
    apply(text, &edits)
}

// ---------------------------------------------------------------------------------------
// Years

/// The thresholds a time constraint draws from.
const THRESHOLDS: [i32; 6] = [1950, 1980, 1990, 2000, 2005, 2010];
/// The latest year a shifted passage may name.
const LATEST: i32 = 2024;
/// The earliest.
const EARLIEST: i32 = 1800;

#[derive(Debug, Clone, Copy)]
enum Era {
    Before(i32),
    From(i32),
}

/// The years of `text` (byte ranges and values): four-digit numbers between 1800 and 2029
/// that read as years ("in 1998", "the 1990s", "1998-2004", a month before them). `None` when
/// there is none, or when some such number does not read as a year ("1500 calories"): the
/// passage could not be shifted safely.
fn year_mentions(text: &str) -> Option<Vec<(usize, usize, i32)>> {
    const BEFORE: &[&str] = &[
        "in",
        "In",
        "since",
        "Since",
        "by",
        "By",
        "from",
        "From",
        "until",
        "Until",
        "to",
        "through",
        "of",
        "during",
        "During",
        "around",
        "circa",
        "year",
        "Year",
        "early",
        "late",
        "mid",
        "and",
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "As",
        "as",
        "after",
        "After",
        "before",
        "Before",
    ];
    let bytes = text.as_bytes();
    let mut years = Vec::new();
    let mut i = 0;
    while i + 4 <= bytes.len() {
        let digits = bytes[i..i + 4].iter().all(u8::is_ascii_digit);
        let left_ok = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let right_ok = bytes.get(i + 4).is_none_or(|b| !b.is_ascii_digit());
        if !(digits && left_ok && right_ok) {
            i += 1;
            continue;
        }
        let value: i32 = text[i..i + 4].parse().ok()?;
        if (EARLIEST..=2029).contains(&value) {
            let prefix = text[..i].trim_end_matches([' ', ',', '(']);
            let word = prefix
                .rsplit(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or("");
            let decade = bytes.get(i + 4) == Some(&b's');
            let range = prefix.ends_with(['-', '–'])
                || matches!(bytes.get(i + 4), Some(b'-'))
                || text[i + 4..].starts_with('–');
            let money = prefix.ends_with('$')
                || (matches!(bytes.get(i + 4), Some(b',' | b'.'))
                    && bytes.get(i + 5).is_some_and(u8::is_ascii_digit));
            let listed = !word.is_empty() && word.chars().all(|c| c.is_ascii_digit());
            if money || !(BEFORE.contains(&word) || decade || range || listed) {
                return None;
            }
            years.push((i, i + 4, value));
        }
        i += 4;
    }
    (!years.is_empty()).then_some(years)
}

fn has_any_number_of_four_digits(query: &str) -> bool {
    query
        .split(|c: char| !c.is_ascii_digit())
        .any(|d| d.len() == 4)
}

/// The multiples of ten that move every year into `era` within [1800, 2024].
fn shift_range(years: &[(usize, usize, i32)], era: Era) -> Option<(i32, i32)> {
    let lo = years.iter().map(|y| y.2).min()?;
    let hi = years.iter().map(|y| y.2).max()?;
    // Allowed shifts d with EARLIEST <= lo + d and hi + d <= LATEST, and the era's bound.
    let (min_d, max_d) = match era {
        Era::Before(t) => (EARLIEST - lo, (t - 1).min(LATEST) - hi),
        Era::From(t) => (t - lo, LATEST - hi),
    };
    let first = (min_d as f64 / 10.0).ceil() as i32;
    let last = (max_d as f64 / 10.0).floor() as i32;
    // Stay near the boundary: at most three decades of choice.
    (first <= last).then(|| match era {
        Era::Before(_) => ((last - 2).max(first), last),
        Era::From(_) => (first, (first + 2).min(last)),
    })
}

fn shift_years(
    text: &str,
    years: &[(usize, usize, i32)],
    era: Era,
    rng: &mut SplitMix64,
) -> Option<String> {
    let (a, b) = shift_range(years, era)?;
    let shift = 10 * (a + rng.below((b - a + 1) as usize) as i32);
    let edits: Vec<Edit> = years
        .iter()
        .map(|(s, e, y)| Edit {
            start: *s,
            end: *e,
            with: (y + shift).to_string(),
        })
        .collect();
    Some(apply(text, &edits))
}

// ---------------------------------------------------------------------------------------
// People

/// The plural nouns of each group, in the order they are swapped: the i-th noun of one group
/// becomes the i-th of the other (cycling).
fn nouns(group: People) -> &'static [&'static str] {
    match group {
        People::Children => &["children", "kids", "teenagers"],
        People::Adults => &["adults", "grown-ups", "seniors"],
        People::Women => &["women", "girls", "mothers"],
        People::Men => &["men", "boys", "fathers"],
    }
}

/// Singular or pronoun forms that a plural swap would leave inconsistent.
fn singulars(pair: &[People; 2]) -> &'static [&'static str] {
    if pair.contains(&People::Women) {
        &[
            "woman",
            "man",
            "girl",
            "boy",
            "mother",
            "father",
            "she",
            "She",
            "he",
            "He",
            "her",
            "Her",
            "his",
            "His",
            "him",
            "pregnant",
            "pregnancy",
            "female",
            "male",
            "Woman",
            "Man",
        ]
    } else {
        &[
            "child",
            "kid",
            "teenager",
            "adolescent",
            "adolescents",
            "toddler",
            "toddlers",
            "infant",
            "baby",
            "adult",
            "Child",
            "Adult",
            "senior",
            "elderly",
            "infants",
            "babies",
            "school",
            "pediatric",
            "paediatric",
        ]
    }
}

const PAIRS: [[People; 2]; 2] = [
    [People::Children, People::Adults],
    [People::Women, People::Men],
];

/// The group `text` is about (it names plural nouns of one group of a pair and nothing of the
/// other nor any singular form), with its pair.
fn people_in(text: &str) -> Option<(People, &'static [People; 2])> {
    let uses = |g: People| {
        nouns(g)
            .iter()
            .any(|n| !find_word(text, n).is_empty() || !find_word(text, &capital(n)).is_empty())
    };
    PAIRS.iter().find_map(|pair| {
        let singular = singulars(pair)
            .iter()
            .any(|w| !find_word(text, w).is_empty());
        match (uses(pair[0]), uses(pair[1]), singular) {
            (true, false, false) => Some((pair[0], pair)),
            (false, true, false) => Some((pair[1], pair)),
            _ => None,
        }
    })
}

fn names_people(query: &str, pair: &[People; 2]) -> bool {
    pair.iter()
        .any(|g| nouns(*g).iter().any(|n| has_word_ignoring_case(query, n)))
        || singulars(pair)
            .iter()
            .any(|w| w.len() > 3 && has_word_ignoring_case(query, w))
}

fn swap_people(text: &str, from: People, to: People) -> String {
    let (a, b) = (nouns(from), nouns(to));
    let mut edits = Vec::new();
    for (i, noun) in a.iter().enumerate() {
        let target = b[i % b.len()];
        for (s, e) in find_word(text, noun) {
            edits.push(Edit {
                start: s,
                end: e,
                with: target.to_string(),
            });
        }
        for (s, e) in find_word(text, &capital(noun)) {
            edits.push(Edit {
                start: s,
                end: e,
                with: capital(target),
            });
        }
    }
    edits.sort_by_key(|e| e.start);
    apply(text, &edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_move_with_their_adjectives_and_articles() {
        let text = "In the United States, Texans pay less than people in Chicago. The U.S. average is $3. Canadian drivers pay more.";
        let mentions = place_mentions(text);
        assert_eq!(mentions.len(), 5, "{mentions:?}");
        let mut rng = SplitMix64::new(1);
        let moved = move_places(text, &mentions, Region::Europe, &mut rng);
        assert!(place_mentions(&moved)
            .iter()
            .all(|m| PLACES[m.place].region == Region::Europe));
        assert_eq!(place_mentions(&moved).len(), 5, "{moved}");
        assert!(moved.contains("pay less than people in") && moved.contains("average is $3"));
        assert!(
            !moved.contains("the the") && !moved.contains("The the"),
            "{moved}"
        );
        // Places already in the region stay as they are.
        let kept = move_places(text, &mentions, Region::NorthAmerica, &mut rng);
        assert_eq!(kept, text);
    }

    #[test]
    fn a_query_that_names_a_place_gets_no_place_setting() {
        let text = "Nurses in Texas earn $60,000 a year on average.";
        let mut rng = SplitMix64::new(2);
        for _ in 0..20 {
            let s = applicable("nurse salary in texas", text, &mut rng);
            assert!(!matches!(s, Some(Setting::Place(..))), "{s:?}");
            let s = applicable("average nurse salary", text, &mut rng);
            assert!(matches!(s, Some(Setting::Place(..))), "{s:?}");
        }
        assert!(names_a_place("flights to the US") && !names_a_place("can us citizens vote"));
        // Where the place is the answer, moving it would change the answer.
        for _ in 0..20 {
            let s = applicable("where is the camp located", text, &mut rng);
            assert!(s.is_none(), "{s:?}");
        }
    }

    #[test]
    fn years_shift_by_decades_into_each_era() {
        let text = "The bridge opened in 1998 and was widened during the 2000s. By 2004 traffic had doubled. It carries 1500 cars.";
        // "1500 cars" is not in the year range, so the passage is usable.
        let years = year_mentions(text).unwrap();
        assert_eq!(years.len(), 3);
        let mut rng = SplitMix64::new(3);
        for t in THRESHOLDS {
            let setting = Setting::Time { threshold: t };
            let Some([before, after]) = setting.versions(text, &mut rng) else {
                continue;
            };
            let b = year_mentions(&before).unwrap();
            let a = year_mentions(&after).unwrap();
            assert!(b.iter().all(|y| y.2 < t), "{t}: {before}");
            assert!(a.iter().all(|y| y.2 >= t && y.2 <= LATEST), "{t}: {after}");
            // Spans and decades keep their shape.
            assert_eq!(b[2].2 - b[0].2, 6);
            assert!(before.contains("0s.") && after.contains("It carries 1500 cars."));
        }
        assert!(year_mentions("It has 1998 calories.").is_none());
        let mut rng = SplitMix64::new(6);
        assert!(applicable("what years did the bridge open", text, &mut rng).is_none());
        assert!(matches!(
            applicable("how busy is the bridge", text, &mut rng),
            Some(Setting::Time { .. })
        ));
        assert!(year_mentions("It costs $1998 today.").is_none());
    }

    #[test]
    fn people_swap_only_where_the_text_is_plural_and_unambiguous() {
        let text =
            "Most adults need seven to nine hours of sleep. Older adults often wake earlier.";
        let (group, _) = people_in(text).unwrap();
        assert_eq!(group, People::Adults);
        let swapped = swap_people(text, People::Adults, People::Children);
        assert_eq!(
            swapped,
            "Most children need seven to nine hours of sleep. Older children often wake earlier."
        );
        assert!(people_in("An adult needs sleep, and so do children.").is_none());
        let mut rng = SplitMix64::new(4);
        assert!(applicable("how much sleep do adults need", text, &mut rng).is_none());
    }

    #[test]
    fn instructions_name_the_wanted_value_and_the_reversal_the_other() {
        let mut rng = SplitMix64::new(5);
        let s = Setting::Place(Region::Asia, Region::Europe);
        for _ in 0..30 {
            let want = s.phrase(true, Phrasing::Request, &mut rng);
            assert!(want.contains("Asia") && !want.contains("Europe"), "{want}");
            let exclusion = s.phrase(true, Phrasing::Exclusion, &mut rng);
            assert!(
                exclusion.contains("Europe") && !exclusion.contains("Asia"),
                "{exclusion}"
            );
            let contrast = s.phrase(false, Phrasing::Contrast, &mut rng);
            assert!(
                contrast.contains("Asia") && contrast.contains("Europe"),
                "{contrast}"
            );
        }
        let t = Setting::Time { threshold: 2000 };
        let before = t.phrase(true, Phrasing::Request, &mut rng);
        assert!(
            before.contains("2000") || before.contains("1999"),
            "{before}"
        );
    }
}
