//! The phrasing every generator of instructions shares: how an instruction names what it
//! wants ([`Phrasing`]: a request, an exclusion, or both in contrast), the mix of those
//! phrasings a data set draws from, and the small text helpers the templates use.

use engine::rng::SplitMix64;

/// How an instruction names the value it wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phrasing {
    /// Asks for the wanted value ("Only forum posts, please.").
    Request,
    /// Excludes the other value ("No news articles, please.").
    Exclusion,
    /// Names both, the wanted one and the excluded one ("Forum posts, not news articles."):
    /// the values' words alone cannot tell the instruction from its reversal, only the
    /// negation's scope can.
    Contrast,
}

/// The shares of [`Phrasing::Exclusion`] and [`Phrasing::Contrast`]; the rest are requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhrasingMix {
    /// Share of exclusions.
    pub exclusion: f64,
    /// Share of contrasts.
    pub contrast: f64,
}

impl PhrasingMix {
    /// Requests only.
    pub const REQUESTS: PhrasingMix = PhrasingMix {
        exclusion: 0.0,
        contrast: 0.0,
    };

    /// One phrasing drawn with `rng`.
    pub fn draw(&self, rng: &mut SplitMix64) -> Phrasing {
        let u = rng.uniform();
        if u < self.contrast {
            Phrasing::Contrast
        } else if u < self.contrast + self.exclusion {
            Phrasing::Exclusion
        } else {
            Phrasing::Request
        }
    }
}

/// One of `options`, drawn with `rng`.
pub fn pick<'a>(options: &[&'a str], rng: &mut SplitMix64) -> &'a str {
    options[rng.below(options.len())]
}

/// `s` with its first letter in upper case.
pub fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}
