//! `trainer synth renderings`: relevance-preserving dual-view records (the `synth` crate's
//! `renderings`): each relevant passage rendered in two versions that only the instruction
//! separates, plus replay.

use std::collections::{BTreeMap, HashSet};

use clap::Args;

use engine::data::records::InstructionNegativeRecord;
use engine::rng::SplitMix64;
use engine::EvalSet;
use synth::renderings::{random_dimension, rendered_records, replay_record, Anchor, Dimension};

use super::heldout::{write_heldout_sets, HeldOut, PassageRef};
use super::source::{
    load_set, neighbours, report_written, write_jsonl, BaseModel, Neighbours, SourceArgs,
};

/// `trainer synth renderings`.
#[derive(Args, Debug)]
pub struct RenderingsArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The hard negative (the most similar unjudged passage) must score within this cosine of the relevant one (2 = any).
    #[arg(long, default_value_t = 2.0)]
    pub max_score_gap: f64,
    /// Dual-view records per query (each along another drawn dimension).
    #[arg(long, default_value_t = 2)]
    pub per_query: usize,
    /// Also write the InF-IR record of each dual-view record (the nearest other query as Q-).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    pub inf_ir: bool,
    /// Share of instructions phrased as the exclusion of the other value ("anything but a list") rather than a request for their own.
    #[arg(long, default_value_t = 0.3)]
    pub exclusion_share: f64,
    /// Share of instructions that name both values, the wanted and the excluded ("forum posts, not news articles").
    #[arg(long, default_value_t = 0.3)]
    pub contrast_share: f64,
    /// Share of queries whose first record is a setting constraint (where, when, whom: the passage's places, years or people moved into one of two categories) when the passage has one.
    #[arg(long, default_value_t = 0.0)]
    pub setting_share: f64,
    /// Also write each training query's plain retrieval record (no instruction).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub replay: bool,
    /// Seed of the dimensions, phrasing and held-out split.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// Runs `trainer synth renderings`.
pub fn run(args: RenderingsArgs) -> anyhow::Result<()> {
    let shares = [args.exclusion_share, args.contrast_share];
    anyhow::ensure!(
        shares.iter().all(|s| (0.0..=1.0).contains(s)) && shares.iter().sum::<f64>() <= 1.0,
        "--exclusion-share and --contrast-share must be in [0, 1] and add up to at most 1"
    );
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.setting_share),
        "--setting-share must be in [0, 1]"
    );
    let (set, og) = load_set(&args.source.set, args.source.heldout_fraction)?;
    let found = neighbours(
        &mut BaseModel::load(&args.source.model)?,
        &set,
        &og,
        3,
        args.max_score_gap,
    )?;
    let by_query: BTreeMap<usize, &Neighbours> = found.iter().map(|n| (n.query, n)).collect();
    let mut made = Rendered {
        by_id: set.corpus.iter().map(|p| (p.id.as_str(), p)).collect(),
        set: &set,
        by_query,
        rng: SplitMix64::new(args.seed),
        train: Vec::new(),
        heldout: Vec::new(),
        heldout_queries: Vec::new(),
        removed: HashSet::new(),
        kinds: BTreeMap::new(),
        skipped: set.queries.len() - found.len(),
    };
    // The split has its own stream: every variant with the same seed holds out the same queries.
    let mut split = SplitMix64::for_stream(args.seed, 1);
    for n in &found {
        let hold = split.uniform() < args.source.heldout_fraction && args.source.heldout.is_some();
        made.query(&args, n, hold);
    }
    anyhow::ensure!(
        !made.train.is_empty(),
        "{}: no record could be made",
        args.source.set.display()
    );
    // Seeded shuffle so that a file read in order still mixes kinds.
    made.rng.shuffle(&mut made.train);
    write_jsonl(&args.source.output, made.train.iter().cloned())?;
    report_written(
        &args.source.output,
        made.train.len(),
        made.skipped,
        &made.kinds,
    );
    if let Some(dir) = &args.source.heldout {
        let queries = &made.heldout_queries;
        write_heldout_sets(dir, &set, &og, &made.heldout, queries, &made.removed)?;
    }
    Ok(())
}

/// What `synth renderings` has made so far.
struct Rendered<'a> {
    set: &'a EvalSet,
    by_id: BTreeMap<&'a str, &'a engine::Passage>,
    by_query: BTreeMap<usize, &'a Neighbours>,
    rng: SplitMix64,
    train: Vec<serde_json::Value>,
    heldout: Vec<HeldOut>,
    heldout_queries: Vec<&'a engine::Query>,
    removed: HashSet<String>,
    kinds: BTreeMap<&'static str, usize>,
    skipped: usize,
}

impl<'a> Rendered<'a> {
    fn anchor(&self, q: usize, id: &str) -> Anchor<'a> {
        let p = self.by_id[id];
        Anchor {
            query: self.set.queries[q].text.as_str(),
            title: p.title.as_str(),
            text: p.text.as_str(),
        }
    }

    /// Up to `--per-query` renderings of one query's relevant passage: training records, or a
    /// held-out evaluation query when `hold`; plus its replay record.
    fn query(&mut self, args: &RenderingsArgs, n: &Neighbours, hold: bool) {
        let set = self.set;
        let query = &set.queries[n.query];
        let positive = self.anchor(n.query, &n.positive);
        let negative = n.candidates.first().map(|c| self.anchor(n.query, c));
        let poisoned = n
            .nearest_query
            .filter(|_| args.inf_ir)
            .map(|o| self.anchor(o, &self.by_query[&o].positive));
        let term = synth::attributes::distinguishing_word(
            positive.text,
            negative.map(|a| a.text).unwrap_or(""),
            positive.query,
            &mut self.rng,
        );
        let mix = synth::phrasing::PhrasingMix {
            exclusion: args.exclusion_share,
            contrast: args.contrast_share,
        };
        let mut setting = synth::settings::applicable(positive.query, positive.text, &mut self.rng)
            .filter(|_| self.rng.uniform() < args.setting_share);
        let mut made = 0;
        for attempt in 0..args.per_query * 4 {
            if made == args.per_query {
                break;
            }
            let dimension = match setting.take() {
                Some(s) => Dimension::Setting(s),
                None => random_dimension(term.clone(), &mut self.rng),
            };
            let Some(records) =
                rendered_records(&dimension, positive, negative, poisoned, mix, &mut self.rng)
            else {
                continue;
            };
            made += 1;
            *self.kinds.entry(records.kind).or_default() += 1;
            if hold {
                self.hold_out(n, &query.id, attempt, records.kind, records.dual_view);
            } else {
                self.train.push(records.dual_view.to_json());
                self.train.extend(records.inf_ir.map(|r| r.to_json()));
            }
        }
        if hold {
            self.heldout_queries.push(query);
        } else if args.replay {
            self.train.push(replay_record(positive, negative).to_json());
            *self.kinds.entry("replay").or_default() += 1;
        }
        if made == 0 {
            self.skipped += 1;
        }
    }

    /// A held-out rendering: both versions join the evaluation corpus, the passage they were
    /// made from leaves it.
    fn hold_out(
        &mut self,
        n: &Neighbours,
        query_id: &str,
        attempt: usize,
        kind: &'static str,
        d: InstructionNegativeRecord,
    ) {
        self.removed.insert(n.positive.clone());
        self.heldout.push(HeldOut {
            id: format!("{query_id}-{attempt}"),
            kind,
            positive: PassageRef::New {
                id: format!("{}~{attempt}a", n.positive),
                text: d.positive.clone(),
            },
            negative: PassageRef::New {
                id: format!("{}~{attempt}b", n.positive),
                text: d.instruction_negatives[0].clone(),
            },
            record: d,
        });
    }
}
