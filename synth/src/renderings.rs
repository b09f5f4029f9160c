//! Relevance-preserving instruction data (`trainer synth renderings`): the same relevant
//! passage shown in two versions that differ in one property, so that **both views of a
//! dual-view record have a positive that answers the query** and only the instruction decides
//! between them.
//!
//! Why: a dual-view record built from a query's relevant passage P and an unjudged on-topic
//! passage N (as [`super::attributes`] does) teaches, under the reversed instruction, that N is
//! the best answer although it does not answer the query. On MS MARCO, with one relevant
//! passage per query, that teaches instructions to override relevance, which costs plain
//! retrieval and makes the reversed instruction pull towards the attribute it negates.
//!
//! Here both versions come from P by a program, with exact labels:
//! * document attributes (InfoSearch's dimensions): P rendered as a forum thread, a news
//!   report, a reference entry, a blog post, a paper abstract or an official notice
//!   ([`Source`]); as prose, a bulleted list, numbered steps or a Q&A ([`Format`]); as its one
//!   best sentence or in full ([`Dimension::Length`]);
//! * content (FollowIR-style narratives): P in full against P without the sentences that carry a
//!   property (a number, a year, an amount of money, a term), keeping the sentence that answers
//!   the query ([`Dimension::Content`]);
//! * setting (content constraints on where, when, whom): P with its places, years or people
//!   moved into one of two categories ([`Dimension::Setting`], [`super::settings`]).
//!
//! Each record also carries hard negatives that do not answer the query (an on-topic passage the
//! caller retrieves) rendered with *both* values of the attribute, so the attribute alone never
//! finds the positive: relevance and the instruction must both hold. Instructions come in many
//! phrasings, positive and negated ("not from a forum", "anything but a list"); the reversed
//! view is either the negation of the first or a request for the other value.

use crate::attributes::Constraint;
use crate::phrasing::{capital, pick, Phrasing, PhrasingMix};
use crate::settings::Setting;
use engine::data::records::{InfIrRecord, InstructionNegativeRecord};
use engine::rng::SplitMix64;

/// Where a text comes from (InfoSearch's source/genre dimension, widened).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A discussion thread reply.
    Forum,
    /// A news report.
    News,
    /// An encyclopedia or reference entry.
    Reference,
    /// A personal blog post.
    Blog,
    /// A research paper's abstract.
    Abstract,
    /// An official notice from an authority.
    Notice,
}

/// How a text is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Running prose.
    Prose,
    /// A bulleted list, a sentence per bullet.
    Bullets,
    /// Numbered steps, a sentence per step.
    Steps,
    /// A question followed by its answer.
    QuestionAnswer,
}

/// The property two versions of one passage differ in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dimension {
    /// Source or genre: the two values.
    Source(Source, Source),
    /// Layout: the two values.
    Format(Format, Format),
    /// The one best sentence (first value) against the full passage.
    Length,
    /// The full passage (satisfies the constraint) against the passage without the
    /// sentences where the constraint holds.
    Content(Constraint),
    /// Where, when or whom: the passage's places, years or people moved into one of two
    /// categories ([`super::settings`]).
    Setting(Setting),
}

impl Dimension {
    /// A short name for reports (`source`, `format`, `length`, `content-<kind>`).
    pub fn kind(&self) -> &'static str {
        match self {
            Dimension::Source(..) => "source",
            Dimension::Format(..) => "format",
            Dimension::Length => "length",
            Dimension::Content(c) => match c.kind() {
                "numbers" => "content-numbers",
                "year" => "content-year",
                "money" => "content-money",
                _ => "content-mentions",
            },
            Dimension::Setting(s) => s.kind(),
        }
    }
}

const SOURCES: [Source; 6] = [
    Source::Forum,
    Source::News,
    Source::Reference,
    Source::Blog,
    Source::Abstract,
    Source::Notice,
];
const FORMATS: [Format; 4] = [
    Format::Prose,
    Format::Bullets,
    Format::Steps,
    Format::QuestionAnswer,
];

/// The sentences of `text` (split after `.`, `!` or `?` followed by a space and a capital
/// letter or a digit), trimmed, non-empty.
pub fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..chars.len() {
        let ends = matches!(chars[i], '.' | '!' | '?')
            && chars.get(i + 1) == Some(&' ')
            && chars
                .get(i + 2)
                .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
            && !(chars[i] == '.' && abbreviation(&chars[start..i]));
        if ends {
            out.push(chars[start..=i].iter().collect::<String>());
            start = i + 2;
        }
    }
    out.push(chars[start.min(chars.len())..].iter().collect::<String>());
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether the word ending `before` (the text up to a period) is an abbreviation or an
/// initial ("Dr.", "e.g.", "J."), after which a period does not end a sentence.
fn abbreviation(before: &[char]) -> bool {
    let word: String = before
        .iter()
        .rev()
        .take_while(|c| !c.is_whitespace())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let word = word.trim_start_matches(['(', '"', '\'']);
    word.chars().count() == 1
        || [
            "Dr", "Mr", "Mrs", "Ms", "St", "Mt", "Jr", "Sr", "vs", "e.g", "i.e", "etc", "No",
            "Fig", "approx", "U.S", "Inc", "Co", "Ltd",
        ]
        .contains(&word)
}

fn content_words(text: &str) -> std::collections::HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3)
        .map(|w| w.to_lowercase())
        .collect()
}

/// The index of the sentence sharing the most words with `query` (the first on ties): the
/// sentence most likely to hold the answer, kept in every version.
pub fn answer_sentence(query: &str, sentences: &[String]) -> usize {
    let q = content_words(query);
    let mut best = (0, 0);
    for (i, s) in sentences.iter().enumerate() {
        let overlap = content_words(s).intersection(&q).count();
        if overlap > best.1 {
            best = (i, overlap);
        }
    }
    best.0
}

const USERS: &[&str] = &[
    "mossy_kettle",
    "dana.r",
    "quietfox82",
    "TheRealPetra",
    "lowtide",
    "bramblejay",
    "k_ostrowski",
    "nightowl_jo",
    "sam-in-leeds",
    "oakhaven",
    "pixelmara",
    "gus_builds",
];
const OUTLETS: &[&str] = &[
    "the Daily Ledger",
    "Metro Wire",
    "the Harbor Tribune",
    "Northline News",
    "the Evening Courier",
    "Capital Report",
];
const CITIES: &[&str] = &[
    "CHICAGO", "LONDON", "TORONTO", "SYDNEY", "DENVER", "DUBLIN", "AUSTIN", "SEATTLE",
];
const AGENCIES: &[&str] = &[
    "Department of Public Health",
    "National Consumer Office",
    "State Department of Agriculture",
    "Office of Public Information",
    "Municipal Services Authority",
];
const MONTHS: &[&str] = &[
    "January", "March", "April", "June", "August", "October", "November",
];

fn date(rng: &mut SplitMix64) -> String {
    format!(
        "{} {}, {}",
        MONTHS[rng.below(MONTHS.len())],
        1 + rng.below(28),
        2012 + rng.below(13)
    )
}

/// The query as a thread title or a question ("Re: kidney beans magnesium?").
fn as_question(query: &str) -> String {
    let q = query.trim().trim_end_matches('?');
    let mut c = q.chars();
    match c.next() {
        Some(f) => format!("{}{}?", f.to_uppercase(), c.as_str()),
        None => String::new(),
    }
}

/// `title` and `text` rendered as coming from `source`; the content is kept word for word.
pub fn render_source(
    source: Source,
    query: &str,
    title: &str,
    text: &str,
    rng: &mut SplitMix64,
) -> String {
    let user = USERS[rng.below(USERS.len())];
    let heading = if title.trim().is_empty() {
        as_question(query)
    } else {
        title.trim().to_string()
    };
    match source {
        Source::Forum => forum(user, query, text, rng),
        Source::News => news(&heading, text, rng),
        Source::Reference => reference(&heading, text, rng),
        Source::Blog => blog(text, rng),
        Source::Abstract => paper_abstract(&heading, text, rng),
        Source::Notice => notice(text, rng),
    }
}

/// A reply in a discussion thread about the query.
fn forum(user: &str, query: &str, text: &str, rng: &mut SplitMix64) -> String {
    let opener = pick(
        &[
            "Had the same question a while back.",
            "Not an expert, but this is what I found.",
            "Replying since nobody else has yet.",
            "From my own digging on this:",
            "Someone asked this in another thread too.",
        ],
        rng,
    );
    let closer = pick(
        &[
            "Hope that helps!",
            "Anyone else run into this?",
            "Correct me if I'm wrong, folks.",
            "Edit: fixed a typo.",
            "Good luck, keep us posted.",
        ],
        rng,
    );
    match rng.below(3) {
        0 => format!(
            "Re: {}\n{user} replied: {opener} {text} {closer}",
            as_question(query)
        ),
        1 => format!(
            "Thread: {} ({} replies)\n{user} wrote: {opener} {text} {closer}",
            as_question(query),
            2 + rng.below(40)
        ),
        _ => format!(
            "{user} · {} points · reply to the question \"{}\"\n{opener} {text} {closer}",
            3 + rng.below(200),
            as_question(query)
        ),
    }
}

/// A news report with a dateline or byline.
fn news(heading: &str, text: &str, rng: &mut SplitMix64) -> String {
    let outlet = OUTLETS[rng.below(OUTLETS.len())];
    let city = CITIES[rng.below(CITIES.len())];
    match rng.below(3) {
        0 => format!(
            "{city} ({outlet}) — {text} Officials and experts interviewed for this report agreed."
        ),
        1 => format!(
            "{heading}\nBy {} staff, {outlet} | {}\n{text}",
            pick(&["our", "news", "metro desk"], rng),
            date(rng)
        ),
        _ => format!(
            "{city}, {} — {text} Reporting by {} for {outlet}.",
            date(rng),
            pick(&["J. Alvarez", "M. Chen", "R. Okafor", "L. Brandt"], rng)
        ),
    }
}

/// An encyclopedia or reference entry.
fn reference(heading: &str, text: &str, rng: &mut SplitMix64) -> String {
    match rng.below(3) {
        0 => format!("{heading}\n{text}\nSee also: related entries. References: [1] [2]"),
        1 => format!("{heading} (reference entry). {text} [citation 1]"),
        _ => format!(
            "Encyclopedia article: {heading}. {text} Categories: {}.",
            pick(
                &[
                    "General knowledge",
                    "Science",
                    "Everyday life",
                    "Health and nutrition"
                ],
                rng
            )
        ),
    }
}

/// A dated personal blog post.
fn blog(text: &str, rng: &mut SplitMix64) -> String {
    format!(
        "{} — {}\n{} {text} {}",
        pick(
            &[
                "My little corner of the web",
                "Notes from the kitchen table",
                "The weekend tinkerer",
                "Slow mornings blog"
            ],
            rng
        ),
        date(rng),
        pick(
            &[
                "So I've been meaning to write about this for ages.",
                "Quick post today, because a reader emailed me about it.",
                "Okay, story time: I finally looked this up properly.",
            ],
            rng
        ),
        pick(
            &[
                "Let me know in the comments what you think!",
                "Thanks for reading, see you next week.",
                "Share this with a friend who keeps asking.",
            ],
            rng
        )
    )
}

/// A paper abstract: the first sentence as background, the rest as results.
fn paper_abstract(heading: &str, text: &str, rng: &mut SplitMix64) -> String {
    let topic = heading.trim_end_matches(['?', '.']).to_lowercase();
    let s = sentences(text);
    let body = match s.split_first() {
        Some((first, rest)) if !rest.is_empty() => {
            format!("Background: {first} Results: {}", rest.join(" "))
        }
        _ => format!("Background: we review the evidence on {topic}. Results: {text}"),
    };
    format!(
        "Abstract. {body} Conclusions: {} Keywords: {topic}.",
        pick(
            &[
                "these findings inform practice.",
                "further studies are warranted.",
                "the evidence is consistent across sources.",
            ],
            rng
        )
    )
}

/// An official notice from an authority.
fn notice(text: &str, rng: &mut SplitMix64) -> String {
    format!(
        "{} from the {}: {text} {}",
        pick(
            &[
                "PUBLIC NOTICE",
                "Official guidance",
                "Notice to residents",
                "Advisory"
            ],
            rng
        ),
        AGENCIES[rng.below(AGENCIES.len())],
        pick(
            &[
                "For further information, contact your local office.",
                "This notice is issued under the agency's public information duties.",
                "Questions may be directed to the agency's helpline.",
            ],
            rng
        )
    )
}

/// `text` laid out as `format`, one sentence per item; `None` when the text has fewer than
/// two sentences (a one-item list is not a list).
pub fn render_format(
    format: Format,
    query: &str,
    text: &str,
    rng: &mut SplitMix64,
) -> Option<String> {
    let s = sentences(text);
    if format != Format::Prose && format != Format::QuestionAnswer && s.len() < 2 {
        return None;
    }
    Some(match format {
        Format::Prose => s.join(" "),
        Format::Bullets => {
            let bullet = pick(&["- ", "• ", "* "], rng);
            s.iter()
                .map(|x| format!("{bullet}{x}"))
                .collect::<Vec<_>>()
                .join("\n")
        }
        Format::Steps => {
            let style = rng.below(3);
            s.iter()
                .enumerate()
                .map(|(i, x)| match style {
                    0 => format!("{}. {x}", i + 1),
                    1 => format!("{}) {x}", i + 1),
                    _ => format!("Step {}: {x}", i + 1),
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
        Format::QuestionAnswer => {
            let (q, a) = *[("Q:", "A:"), ("Question:", "Answer:"), ("FAQ —", "Reply:")]
                .get(rng.below(3))
                .expect("index below 3");
            format!("{q} {}\n{a} {}", as_question(query), s.join(" "))
        }
    })
}

/// A value's name in an instruction: singular ("a forum thread") and plural ("forum posts").
type ValueName = (&'static str, &'static str);

fn source_name(source: Source) -> ValueName {
    match source {
        Source::Forum => ("a forum thread", "forum posts or discussion threads"),
        Source::News => ("a news report", "news articles"),
        Source::Reference => ("an encyclopedia entry", "encyclopedia or reference entries"),
        Source::Blog => ("a personal blog post", "personal blog posts"),
        Source::Abstract => ("a research abstract", "scientific paper abstracts"),
        Source::Notice => ("an official notice", "official notices from authorities"),
    }
}

fn format_name(format: Format) -> ValueName {
    match format {
        Format::Prose => ("flowing prose", "passages written as running prose"),
        Format::Bullets => ("a bulleted list", "bulleted lists"),
        Format::Steps => ("numbered steps", "numbered step-by-step lists"),
        Format::QuestionAnswer => ("a question-and-answer format", "Q&A-style passages"),
    }
}

/// An instruction that wants `want` over `other`, in `phrasing`, one of several wordings.
fn value_instruction(
    want: ValueName,
    other: ValueName,
    phrasing: Phrasing,
    rng: &mut SplitMix64,
) -> String {
    let options: &[&str] = match phrasing {
        Phrasing::Request => &[
            "Only {plural}, please.",
            "I'm looking for {plural} specifically.",
            "Show me {name}; other kinds are not useful to me.",
            "Restrict the results to {plural}.",
            "The result should be {name}.",
            "Find {plural} that answer this.",
            "Format: {name}.",
            "I'd like the answer as {name}.",
        ],
        Phrasing::Exclusion => &[
            "No {other_plural}, please.",
            "Anything except {other_plural}.",
            "Exclude {other_plural}.",
            "I don't want {other_name}; anything else is fine.",
            "The result should not be {other_name}.",
            "Skip {other_plural}.",
            "Anything but {other_name}.",
            "Avoid {other_plural}.",
        ],
        Phrasing::Contrast => &[
            "{Plural}, not {other_plural}.",
            "Rather than {other_plural}, I'd like {plural}.",
            "I don't want {other_name}; give me {name}.",
            "{Plural} please, and skip {other_plural}.",
            "Not {other_plural}: {plural} only.",
            "Give me {name} instead of {other_name}.",
            "{Other_plural} are not useful to me; I need {plural}.",
            "I'd prefer {name} over {other_name}.",
        ],
    };
    pick(options, rng)
        .replace("{Plural}", &capital(want.1))
        .replace("{Other_plural}", &capital(other.1))
        .replace("{plural}", want.1)
        .replace("{name}", want.0)
        .replace("{other_plural}", other.1)
        .replace("{other_name}", other.0)
}

fn length_instruction(short: bool, rng: &mut SplitMix64) -> String {
    pick(
        if short {
            &[
                "Just one sentence, please.",
                "Give me the short answer, a single sentence.",
                "Only a brief one-line answer.",
                "Keep it to one sentence; no long explanations.",
                "Not a long passage: a single sentence is enough.",
            ]
        } else {
            &[
                "I want the full explanation, not a one-liner.",
                "Give me a complete passage with all the details.",
                "Not a single sentence, please: the whole explanation.",
                "Only detailed answers of several sentences.",
                "Skip one-line answers; I want the longer version.",
            ]
        },
        rng,
    )
    .to_string()
}

/// One version of a passage with the property it has.
#[derive(Debug, Clone)]
pub struct Version {
    /// The text.
    pub text: String,
    /// True for the dimension's first value (the constraint holds, the short one, ...).
    pub first: bool,
}

/// The two versions of `text` along `dimension`, first value first; `None` when the passage
/// cannot be shown both ways (too short to list, no sentence to drop, the answer sentence
/// itself carries the property...).
pub fn versions(
    dimension: &Dimension,
    query: &str,
    title: &str,
    text: &str,
    rng: &mut SplitMix64,
) -> Option<[String; 2]> {
    match dimension {
        Dimension::Source(a, b) => Some([
            render_source(*a, query, title, text, rng),
            render_source(*b, query, title, text, rng),
        ]),
        Dimension::Format(a, b) => Some([
            render_format(*a, query, text, rng)?,
            render_format(*b, query, text, rng)?,
        ]),
        Dimension::Length => {
            let s = sentences(text);
            let words = text.split_whitespace().count();
            if s.len() < 3 || words < 45 {
                return None;
            }
            let best = s[answer_sentence(query, &s)].clone();
            (best.split_whitespace().count() <= 35).then(|| [best, s.join(" ")])
        }
        Dimension::Content(constraint) => {
            let s = sentences(text);
            let best = answer_sentence(query, &s);
            if constraint.holds(&s[best]) != Some(false) {
                return None;
            }
            let kept: Vec<&String> = s
                .iter()
                .filter(|x| constraint.holds(x) == Some(false))
                .collect();
            if kept.len() == s.len() || constraint.holds(text) != Some(true) {
                return None;
            }
            let without = kept
                .iter()
                .map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            (constraint.holds(&without) == Some(false)).then(|| [s.join(" "), without])
        }
        Dimension::Setting(setting) => setting.versions(text, rng),
    }
}

/// The instruction asking for the dimension's first value (`first`) or its second, in
/// `phrasing` where the dimension has named values (source, format); length and content
/// constraints have their own wordings of both polarities.
pub fn instruction(
    dimension: &Dimension,
    first: bool,
    phrasing: Phrasing,
    rng: &mut SplitMix64,
) -> String {
    let ordered = |a: ValueName, b: ValueName| if first { (a, b) } else { (b, a) };
    match dimension {
        Dimension::Source(a, b) => {
            let (want, other) = ordered(source_name(*a), source_name(*b));
            value_instruction(want, other, phrasing, rng)
        }
        Dimension::Format(a, b) => {
            let (want, other) = ordered(format_name(*a), format_name(*b));
            value_instruction(want, other, phrasing, rng)
        }
        Dimension::Length => length_instruction(first, rng),
        Dimension::Content(c) => c.phrase(first, rng),
        Dimension::Setting(s) => s.phrase(first, phrasing, rng),
    }
}

/// A random dimension: two distinct sources, two distinct formats, length, or a content
/// constraint (`term` is a content word of the passage for "mentions", when there is one).
pub fn random_dimension(term: Option<String>, rng: &mut SplitMix64) -> Dimension {
    let two = |n: usize, rng: &mut SplitMix64| {
        let a = rng.below(n);
        let b = (a + 1 + rng.below(n - 1)) % n;
        (a, b)
    };
    match rng.below(8) {
        0..=2 => {
            let (a, b) = two(SOURCES.len(), rng);
            Dimension::Source(SOURCES[a], SOURCES[b])
        }
        3 | 4 => {
            let (a, b) = two(FORMATS.len(), rng);
            Dimension::Format(FORMATS[a], FORMATS[b])
        }
        5 => Dimension::Length,
        _ => match (rng.below(4), term) {
            (0, _) => Dimension::Content(Constraint::Numbers),
            (1, _) => Dimension::Content(Constraint::Year),
            (2, _) => Dimension::Content(Constraint::Money),
            (_, Some(t)) => Dimension::Content(Constraint::Mentions(t)),
            (_, None) => Dimension::Content(Constraint::Numbers),
        },
    }
}

/// The records made for one query: a dual-view record (both positives answer the query) and,
/// when a poisoned query is given, the InF-IR record of the same instruction pair.
#[derive(Debug, Clone)]
pub struct RenderedRecords {
    /// The dual-view record.
    pub dual_view: InstructionNegativeRecord,
    /// (I+, Q+, P+), (I-, Q+, P1-), (I+, Q-, P2-).
    pub inf_ir: Option<InfIrRecord>,
    /// [`Dimension::kind`].
    pub kind: &'static str,
}

/// A passage with its query, for [`rendered_records`].
#[derive(Debug, Clone, Copy)]
pub struct Anchor<'a> {
    /// The query.
    pub query: &'a str,
    /// The relevant passage's title ("" when none).
    pub title: &'a str,
    /// The relevant passage's text.
    pub text: &'a str,
}

/// Records for `anchor` along `dimension`. `negative` is an on-topic passage that does not
/// answer the query: it is rendered both ways as hard negatives of both views. `poisoned`
/// is another query with its relevant passage (the Q block's query negative): rendered like
/// the positive, it is the answer to the same instruction for the other query. Each
/// instruction's [`Phrasing`] is drawn from `phrasings`.
pub fn rendered_records(
    dimension: &Dimension,
    anchor: Anchor<'_>,
    negative: Option<Anchor<'_>>,
    poisoned: Option<Anchor<'_>>,
    phrasings: PhrasingMix,
    rng: &mut SplitMix64,
) -> Option<RenderedRecords> {
    let [first, second] = versions(dimension, anchor.query, anchor.title, anchor.text, rng)?;
    // Which value the instruction asks for is drawn, so neither value is always "the positive".
    let ask_first = rng.below(2) == 0;
    let (positive, other) = if ask_first {
        (first, second)
    } else {
        (second, first)
    };
    let instruction_text = instruction(dimension, ask_first, phrasings.draw(rng), rng);
    let reversed = instruction(dimension, !ask_first, phrasings.draw(rng), rng);
    let negatives = match negative {
        Some(n) => versions(dimension, anchor.query, n.title, n.text, rng)
            .map(|v| v.to_vec())
            .unwrap_or_else(|| vec![n.text.to_string()]),
        None => Vec::new(),
    };
    let inf_ir = poisoned.and_then(|p| {
        let [pf, ps] = versions(dimension, p.query, p.title, p.text, rng)?;
        Some(InfIrRecord {
            query_positive: anchor.query.to_string(),
            instruction_positive: instruction_text.clone(),
            document_positive: positive.clone(),
            instruction_negative: reversed.clone(),
            hard_negative_document_1: other.clone(),
            query_negative: p.query.to_string(),
            hard_negative_document_2: if ask_first { pf } else { ps },
        })
    });
    Some(RenderedRecords {
        dual_view: InstructionNegativeRecord {
            query: anchor.query.to_string(),
            instruction: instruction_text,
            positive,
            negatives,
            instruction_negatives: vec![other],
            instruction_reversed: Some(reversed),
        },
        inf_ir,
        kind: dimension.kind(),
    })
}

/// The plain retrieval record of `anchor` (no instruction; `negative` as hard negative): the
/// replay that keeps retrieval without an instruction from drifting.
pub fn replay_record(
    anchor: Anchor<'_>,
    negative: Option<Anchor<'_>>,
) -> InstructionNegativeRecord {
    let text = |a: Anchor<'_>| {
        if a.title.trim().is_empty() {
            a.text.to_string()
        } else {
            format!("{} {}", a.title, a.text)
        }
    };
    InstructionNegativeRecord {
        query: anchor.query.to_string(),
        instruction: String::new(),
        positive: text(anchor),
        negatives: negative.map(text).into_iter().collect(),
        instruction_negatives: Vec::new(),
        instruction_reversed: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: &str = "how much magnesium in kidney beans";
    const P: &str = "Kidney beans are a good source of minerals. A cup of kidney beans contains 70 mg of magnesium. They also provide fibre and protein. In 2019 a survey found most adults eat too few beans.";

    #[test]
    fn sentences_split_on_terminal_punctuation_only() {
        let s = sentences(P);
        assert_eq!(s.len(), 4);
        assert_eq!(s[1], "A cup of kidney beans contains 70 mg of magnesium.");
        assert_eq!(
            sentences("Dr. Smith said so. 3.5 mg is a lot"),
            vec!["Dr. Smith said so.", "3.5 mg is a lot"]
        );
    }

    #[test]
    fn the_answer_sentence_shares_most_query_words() {
        assert_eq!(answer_sentence(Q, &sentences(P)), 1);
    }

    #[test]
    fn every_rendering_keeps_every_sentence_of_the_passage() {
        let mut rng = SplitMix64::new(3);
        for _ in 0..20 {
            for s in SOURCES {
                let r = render_source(s, Q, "Kidney beans", P, &mut rng);
                for sentence in sentences(P).iter().skip(1) {
                    assert!(
                        r.contains(sentence.as_str()),
                        "{s:?} lost {sentence:?}: {r}"
                    );
                }
            }
            for f in FORMATS {
                let r = render_format(f, Q, P, &mut rng).unwrap();
                for sentence in sentences(P) {
                    assert!(r.contains(sentence.as_str()), "{f:?} lost {sentence:?}");
                }
            }
        }
        assert!(render_format(Format::Bullets, Q, "One sentence only.", &mut rng).is_none());
    }

    #[test]
    fn content_versions_differ_exactly_in_the_constraint_and_keep_the_answer() {
        let mut rng = SplitMix64::new(1);
        let dim = Dimension::Content(Constraint::Year);
        let [with, without] = versions(&dim, Q, "", P, &mut rng).unwrap();
        assert_eq!(Constraint::Year.holds(&with), Some(true));
        assert_eq!(Constraint::Year.holds(&without), Some(false));
        assert!(without.contains("70 mg of magnesium"));
        // The answer sentence itself has a number: no "without numbers" version exists.
        assert!(versions(&Dimension::Content(Constraint::Numbers), Q, "", P, &mut rng).is_none());
    }

    #[test]
    fn length_versions_are_the_answer_sentence_and_the_whole_passage() {
        let mut rng = SplitMix64::new(1);
        let long = format!(
            "{P} Soaking them overnight shortens the cooking time considerably for most varieties."
        );
        let [short, full] = versions(&Dimension::Length, Q, "", &long, &mut rng).unwrap();
        assert_eq!(short, "A cup of kidney beans contains 70 mg of magnesium.");
        assert_eq!(full, long);
    }

    #[test]
    fn records_have_relevant_positives_in_both_views_and_negatives_in_both_values() {
        let mut rng = SplitMix64::new(7);
        let negative = Anchor {
            query: Q,
            title: "Black beans",
            text: "There are 390 calories in 15 ounces of canned black beans. Rinse them first. They keep for days.",
        };
        let poisoned = Anchor {
            query: "how long to boil eggs",
            title: "",
            text: "Boil eggs for nine minutes for a firm yolk. Cool them in cold water. Peel under running water.",
        };
        for _ in 0..50 {
            let dim = random_dimension(Some("fibre".into()), &mut rng);
            let anchor = Anchor {
                query: Q,
                title: "Kidney beans",
                text: P,
            };
            let Some(r) = rendered_records(
                &dim,
                anchor,
                Some(negative),
                Some(poisoned),
                PhrasingMix {
                    exclusion: 0.3,
                    contrast: 0.3,
                },
                &mut rng,
            ) else {
                continue;
            };
            let d = &r.dual_view;
            assert!(
                d.positive.contains("magnesium")
                    && d.instruction_negatives[0].contains("magnesium"),
                "{d:?}"
            );
            assert_ne!(d.positive, d.instruction_negatives[0]);
            assert_ne!(d.instruction, *d.instruction_reversed.as_ref().unwrap());
            assert!(d
                .negatives
                .iter()
                .all(|n| n.contains("calories") || n.contains("Rinse")));
            if let Some(i) = &r.inf_ir {
                assert!(
                    i.hard_negative_document_2.contains("nine minutes")
                        || i.hard_negative_document_2.contains("Boil")
                );
                assert_eq!(i.document_positive, d.positive);
            }
        }
    }

    #[test]
    fn contrasts_name_both_values_and_reversals_swap_them() {
        let mut rng = SplitMix64::new(5);
        let dim = Dimension::Source(Source::Forum, Source::News);
        for _ in 0..30 {
            let want = instruction(&dim, true, Phrasing::Contrast, &mut rng).to_lowercase();
            assert!(want.contains("forum") && want.contains("news"), "{want}");
            let request = instruction(&dim, false, Phrasing::Request, &mut rng);
            assert!(
                request.contains("news") && !request.contains("forum"),
                "{request}"
            );
            let exclusion = instruction(&dim, false, Phrasing::Exclusion, &mut rng);
            assert!(
                exclusion.contains("forum") && !exclusion.contains("news"),
                "{exclusion}"
            );
        }
        let mix = PhrasingMix {
            exclusion: 0.5,
            contrast: 0.25,
        };
        let drawn: Vec<Phrasing> = (0..4000).map(|_| mix.draw(&mut rng)).collect();
        let share = |p| drawn.iter().filter(|d| **d == p).count() as f64 / 4000.0;
        assert!((share(Phrasing::Contrast) - 0.25).abs() < 0.03);
        assert!((share(Phrasing::Exclusion) - 0.5).abs() < 0.03);
        assert!(PhrasingMix::REQUESTS.draw(&mut rng) == Phrasing::Request);
    }

    #[test]
    fn replay_records_have_no_instruction() {
        let r = replay_record(
            Anchor {
                query: Q,
                title: "T",
                text: P,
            },
            None,
        );
        assert!(r.instruction.is_empty() && r.instruction_reversed.is_none());
        assert!(r.positive.starts_with("T Kidney"));
    }
}
