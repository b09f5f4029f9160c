//! Offline, exactly labelled instruction data (`trainer synth attributes`): constraints that a
//! program can check on a passage's text, phrased as natural instructions, each with its
//! polarity-reversed twin (seeds-spec §3: the dual view).
//!
//! For a query with a relevant passage P and an equally on-topic passage N (the caller finds N
//! by retrieval), any [`Constraint`] that P and N disagree on gives a dual-view record:
//! the instruction that P satisfies (P positive, N instruction negative) and its reversal (N
//! positive, P negative). Both passages answer the topic; only the constraint separates them,
//! so a model can only fit the record by reading the instruction. Labels are exact because the
//! constraint is evaluated on the text, not guessed by a model.

use engine::data::records::InstructionNegativeRecord;
use engine::rng::SplitMix64;

/// A property of a passage's text that a program can decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Constraint {
    /// Contains a digit.
    Numbers,
    /// Mentions a year (1600-2099).
    Year,
    /// Mentions a price or currency (`$`, `€`, `£`, "dollars", ...).
    Money,
    /// Contains a question mark.
    Question,
    /// Under [`SHORT_WORDS`] words (the opposite polarity: over [`LONG_WORDS`]).
    Short,
    /// Mentions this word (case-insensitive, whole word).
    Mentions(String),
}

/// "Short" means fewer words than this.
pub const SHORT_WORDS: usize = 45;
/// "Long" means more words than this; passages in between are neither, so a length record
/// always separates its two passages clearly.
pub const LONG_WORDS: usize = 75;

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.to_lowercase()
                .trim_end_matches("'s")
                .trim_matches('\'')
                .to_string()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The word without common inflections (`engines`, `engine's` and `engine` share `engine`), so
/// "mentions" never calls a passage silent about a word it uses in another form.
fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(s) = word.strip_suffix(suffix) {
            if s.len() >= 4 {
                return s;
            }
        }
    }
    word
}

/// Spelled-out quantities: a passage with these but no digits is neither clearly with nor
/// clearly without numbers.
const NUMBER_WORDS: &[&str] = &[
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "hundred",
    "hundreds",
    "thousand",
    "thousands",
    "million",
    "millions",
    "billion",
    "billions",
    "dozen",
    "dozens",
    "half",
];

/// Units after a 4-digit number that make it a quantity rather than a year.
const UNITS: &[&str] = &[
    "mg", "g", "kg", "lb", "lbs", "oz", "ml", "l", "km", "m", "cm", "mm", "ft", "feet", "miles",
    "calories", "kcal", "sq", "square", "acres", "people", "units", "dollars", "hours", "words",
];

/// Some(true) when the text names a year, Some(false) when it has no 4-digit number in the
/// year range, None when its only candidates read as quantities ("2000 mg", "$1999").
fn year(text: &str) -> Option<bool> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut ambiguous = false;
    for (i, token) in tokens.iter().enumerate() {
        let digits: String = token.chars().filter(|c| c.is_ascii_digit()).collect();
        let bare = token.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        if digits.len() != 4 || bare != digits {
            continue;
        }
        if !digits
            .parse::<u32>()
            .is_ok_and(|y| (1600..=2099).contains(&y))
        {
            continue;
        }
        let next = tokens
            .get(i + 1)
            .map(|t| {
                t.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .unwrap_or_default();
        if token.starts_with(['$', '€', '£']) || UNITS.contains(&next.as_str()) {
            ambiguous = true;
        } else {
            return Some(true);
        }
    }
    if ambiguous {
        None
    } else {
        Some(false)
    }
}

/// Words that talk about money without naming an amount: ambiguous for "no money".
const MONEY_HINTS: &[&str] = &[
    "price",
    "prices",
    "cost",
    "costs",
    "paid",
    "pay",
    "fee",
    "fees",
    "salary",
    "cheap",
    "expensive",
    "budget",
    "afford",
];
const CURRENCY_WORDS: &[&str] = &[
    "dollar", "dollars", "usd", "euro", "euros", "cents", "yen", "rupees", "gbp",
];

impl Constraint {
    /// Whether `text` satisfies the constraint: `Some(true)`, `Some(false)`, or `None` when the
    /// text is neither clearly (a length between the bands, "three million" without digits,
    /// "2000 mg", prices talked about without an amount), which never makes a record.
    pub fn holds(&self, text: &str) -> Option<bool> {
        Some(match self {
            Constraint::Numbers => {
                if text.chars().any(|c| c.is_ascii_digit()) {
                    true
                } else if words(text)
                    .iter()
                    .any(|w| NUMBER_WORDS.contains(&w.as_str()))
                {
                    return None;
                } else {
                    false
                }
            }
            Constraint::Year => return year(text),
            Constraint::Money => {
                let w = words(text);
                if text.contains(['$', '€', '£', '¥', '₹'])
                    || w.iter().any(|x| CURRENCY_WORDS.contains(&x.as_str()))
                {
                    true
                } else if w
                    .iter()
                    .any(|x| MONEY_HINTS.contains(&x.as_str()) || x == "pounds")
                {
                    return None;
                } else {
                    false
                }
            }
            Constraint::Question => text.contains('?'),
            Constraint::Short => {
                let n = text.split_whitespace().count();
                if n < SHORT_WORDS {
                    true
                } else if n > LONG_WORDS {
                    false
                } else {
                    return None;
                }
            }
            Constraint::Mentions(word) => {
                let target = stem(word);
                words(text).iter().any(|w| stem(w) == target)
            }
        })
    }

    /// A natural instruction asking for passages where [`Constraint::holds`] is `polarity`,
    /// one of several phrasings drawn with `rng`.
    pub fn phrase(&self, polarity: bool, rng: &mut SplitMix64) -> String {
        let pick = |options: &[&str], rng: &mut SplitMix64| {
            crate::phrasing::pick(options, rng).to_string()
        };
        match (self, polarity) {
            (Constraint::Numbers, true) => pick(&[
                "Only passages that give concrete numbers.",
                "I need figures: the answer should include actual numbers.",
                "Show me results that quote specific quantities or numbers.",
                "Prefer passages with hard numbers over general talk; numbers are a must.",
                "The passage has to contain at least one number.",
            ], rng),
            (Constraint::Numbers, false) => pick(&[
                "Only passages without any numbers.",
                "Give me a qualitative explanation in words only, no figures or digits.",
                "I don't want statistics: exclude passages that contain numbers.",
                "Skip anything with numbers in it; describe it in plain words.",
                "The passage must not contain a single digit.",
            ], rng),
            (Constraint::Year, true) => pick(&[
                "Only passages that mention a specific year.",
                "I want dated information: the passage should name a year.",
                "Show results that place things in time with an explicit year.",
                "The answer must refer to at least one calendar year.",
            ], rng),
            (Constraint::Year, false) => pick(&[
                "Exclude passages that mention any year.",
                "I want timeless information, with no specific years mentioned.",
                "Skip results that cite a particular year.",
                "The passage must not name a calendar year.",
            ], rng),
            (Constraint::Money, true) => pick(&[
                "Only passages that mention a price or an amount of money.",
                "I care about cost: show passages that state a price.",
                "The answer should talk money, with an actual amount or currency.",
                "Results must mention dollars or another currency.",
            ], rng),
            (Constraint::Money, false) => pick(&[
                "Exclude passages that mention prices or money.",
                "I'm not interested in costs: no passages that talk about prices or currency.",
                "Skip anything that quotes a price.",
                "The passage must not mention money or any currency.",
            ], rng),
            (Constraint::Question, true) => pick(&[
                "Only passages that contain a question.",
                "I want passages written in a question-and-answer style, with a question in them.",
                "Show results that ask the reader a question.",
            ], rng),
            (Constraint::Question, false) => pick(&[
                "Only passages written as plain statements, with no questions in them.",
                "Exclude passages that ask questions.",
                "I want straight statements: no question marks anywhere.",
            ], rng),
            (Constraint::Short, true) => pick(&[
                "Keep it brief: only short passages, under 45 words.",
                "I want a quick answer, a few sentences at most (fewer than 45 words).",
                "Only concise passages; nothing longer than a short paragraph of about 40 words.",
                "Give me the short version: passages under 45 words only.",
            ], rng),
            (Constraint::Short, false) => pick(&[
                "I want a detailed, in-depth passage of more than 75 words.",
                "Only thorough explanations, longer than 75 words; no one-liners.",
                "Give me the long version: passages over 75 words with plenty of detail.",
                "Skip short snippets; the passage should run past 75 words.",
            ], rng),
            (Constraint::Mentions(w), true) => pick(&[
                "The passage must mention \"{w}\".",
                "Only results that talk about {w}.",
                "I specifically want passages that bring up {w}.",
                "Make sure the answer mentions {w}.",
            ], rng)
            .replace("{w}", w),
            (Constraint::Mentions(w), false) => pick(&[
                "Exclude anything that mentions \"{w}\".",
                "I don't want results about {w}; leave out passages that mention it.",
                "Only passages that never bring up {w}.",
                "The answer must not mention {w}.",
            ], rng)
            .replace("{w}", w),
        }
    }

    /// A short name for reports (`numbers`, `year`, `money`, `question`, `length`, `mentions`).
    pub fn kind(&self) -> &'static str {
        match self {
            Constraint::Numbers => "numbers",
            Constraint::Year => "year",
            Constraint::Money => "money",
            Constraint::Question => "question",
            Constraint::Short => "length",
            Constraint::Mentions(_) => "mentions",
        }
    }
}

/// Common English words that make poor "must mention" terms.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "was", "were", "with", "that", "this", "from", "have", "has",
    "had", "not", "but", "you", "your", "can", "will", "which", "their", "they", "them", "there",
    "been", "also", "its", "it's", "into", "more", "most", "other", "some", "such", "than", "then",
    "these", "those", "what", "when", "where", "who", "why", "how", "all", "any", "each", "may",
    "one", "two", "about", "after", "before", "because", "being", "both", "can't", "does", "doing",
    "during", "over", "under", "very", "would", "could", "should", "our", "out", "use", "used",
    "using", "his", "her", "she", "him", "only", "same", "so", "too", "on", "in", "of", "to", "a",
    "an", "is", "be", "or", "as", "at", "by", "if", "it", "no", "up", "we", "do", "i", "he", "my",
    "me", "us",
];

/// A content word of `a` absent from `b` and from the query: a "mentions" constraint that
/// separates the two passages without restating the topic.
pub fn distinguishing_word(a: &str, b: &str, query: &str, rng: &mut SplitMix64) -> Option<String> {
    let stems = |t: &str| -> std::collections::HashSet<String> {
        words(t).iter().map(|w| stem(w).to_string()).collect()
    };
    let (in_b, in_q) = (stems(b), stems(query));
    let mut candidates: Vec<String> = words(a)
        .into_iter()
        .filter(|w| w.len() >= 5 && w.chars().all(|c| c.is_alphabetic()))
        .filter(|w| {
            !STOPWORDS.contains(&w.as_str()) && !in_b.contains(stem(w)) && !in_q.contains(stem(w))
        })
        .collect();
    candidates.sort();
    candidates.dedup();
    if candidates.is_empty() {
        None
    } else {
        Some(candidates.swap_remove(rng.below(candidates.len())))
    }
}

/// One synthesized record with what made it (for reports and held-out evaluation sets).
#[derive(Debug, Clone)]
pub struct AttributeRecord {
    /// The training record (dual view: `instruction_reversed` is always set).
    pub record: InstructionNegativeRecord,
    /// Which constraint separates the passages ([`Constraint::kind`]).
    pub kind: &'static str,
    /// The constraint; the instruction asks for passages where it holds as `polarity`.
    pub constraint: Constraint,
    /// What the positive satisfies (the reversed instruction asks for the opposite).
    pub polarity: bool,
}

/// The dual-view record for `query` whose relevant passage is `positive`, with `candidate` an
/// on-topic passage: a constraint they disagree on is drawn (in random order) and phrased with
/// the polarity that makes `positive` the answer. `None` when no constraint separates them.
pub fn attribute_record(
    query: &str,
    positive: &str,
    candidate: &str,
    rng: &mut SplitMix64,
) -> Option<AttributeRecord> {
    let mut constraints = vec![
        Constraint::Numbers,
        Constraint::Year,
        Constraint::Money,
        Constraint::Question,
        Constraint::Short,
    ];
    rng.shuffle(&mut constraints);
    // "Mentions" is the fallback: the structural constraints are the more instructive ones.
    if let Some(w) = distinguishing_word(positive, candidate, query, rng) {
        constraints.push(Constraint::Mentions(w));
    }
    for c in constraints {
        let (Some(p), Some(n)) = (c.holds(positive), c.holds(candidate)) else {
            continue;
        };
        if p == n {
            continue;
        }
        let instruction = c.phrase(p, rng);
        let reversed = c.phrase(!p, rng);
        return Some(AttributeRecord {
            kind: c.kind(),
            polarity: p,
            constraint: c.clone(),
            record: InstructionNegativeRecord {
                query: query.to_string(),
                instruction,
                positive: positive.to_string(),
                negatives: Vec::new(),
                instruction_negatives: vec![candidate.to_string()],
                instruction_reversed: Some(reversed),
            },
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::data::records::TrainingRecord;
    use std::collections::BTreeSet;

    #[test]
    fn attribute_records_are_exactly_labelled_and_varied() {
        let passages = [
            "The bread costs $4 and was first baked in 1998 by a small bakery in Lyon, France, where it became popular.",
            "Sourdough bread is made with a fermented starter, flour, water and salt; the long rise gives flavour.",
            "Why does sourdough taste sour? Lactic acid bacteria in the starter produce acids during fermentation, which the long, slow rise lets develop into the tangy flavour that bakers and eaters love, and which also helps the bread keep for days without going stale, unlike many quick breads made with commercial yeast.",
            "Bake at 230 degrees for 40 minutes.",
            "A starter is flour and water left to ferment.",
        ];
        let mut rng = SplitMix64::new(5);
        let mut made = 0;
        let mut instructions = BTreeSet::new();
        for _ in 0..20 {
            for p in &passages {
                for n in &passages {
                    if p == n {
                        continue;
                    }
                    let Some(r) = attribute_record("sourdough bread", p, n, &mut rng) else {
                        continue;
                    };
                    made += 1;
                    assert_eq!(
                        r.constraint.holds(&r.record.positive),
                        Some(r.polarity),
                        "{r:?}"
                    );
                    assert_eq!(
                        r.constraint.holds(&r.record.instruction_negatives[0]),
                        Some(!r.polarity),
                        "{r:?}"
                    );
                    assert_ne!(
                        Some(&r.record.instruction),
                        r.record.instruction_reversed.as_ref()
                    );
                    let t = &TrainingRecord::InstructionNegative(r.record.clone()).tuples(30);
                    assert_eq!(t.len(), 2, "a dual-view record");
                    assert_eq!(t[1].positive, *n);
                    instructions.insert(r.record.instruction.clone());
                }
            }
        }
        assert!(made > 100);
        assert!(
            instructions.len() >= 20,
            "phrasings vary: {}",
            instructions.len()
        );
        // Detectors.
        assert_eq!(Constraint::Year.holds("founded in 1887"), Some(true));
        assert_eq!(Constraint::Year.holds("call 12345 now"), Some(false));
        assert_eq!(Constraint::Money.holds("it costs 20 dollars"), Some(true));
        assert_eq!(Constraint::Short.holds(&"word ".repeat(60)), None);
        assert_eq!(
            Constraint::Mentions("lyon".into()).holds("Baked in Lyon."),
            Some(true)
        );
        // Identical passages never make a record.
        assert!(attribute_record("q", passages[0], passages[0], &mut rng).is_none());
    }
}
