//! Training support: record formats, batching, and every objective against the seeds' worked
//! values, against an independent f64 implementation of the formulas, and (gradients) against
//! finite differences of that implementation.

use std::collections::BTreeSet;
use std::io::Write;

use burn::tensor::{Tensor, TensorData};
use engine::rng::SplitMix64;
use engine::training::{
    epoch_order, BatchLayout, Loss, Objective, RecordFile, TrainingRecord, TrainingTuple,
};
use engine::Device;

fn tuple(i: &str, q: &str, p: &str, negatives: &[&str]) -> TrainingTuple {
    TrainingTuple {
        instruction: i.into(),
        query: q.into(),
        positive: p.into(),
        negatives: negatives.iter().map(|s| s.to_string()).collect(),
        excluded: 0,
    }
}

fn inf_ir_record() -> TrainingRecord {
    TrainingRecord::parse(
        r#"{"query_positive":"Q+","instruction_positive":"I+","document":"P+",
            "instruction_negative":"I-","hard_negative_document_1":"P1-",
            "query_negative":"Q-","hard_negative_document_2":"P2-","extra":1}"#
            .replace('\n', " ")
            .as_str(),
    )
    .unwrap()
}

fn values(t: Tensor<1>) -> Vec<f32> {
    t.into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .unwrap()
}

/// seeds-spec §2.5 worked example: τ = 0.05, anchor t0 of one InF-IR record.
#[test]
fn worked_example_values() {
    let tuples = inf_ir_record().tuples(0);
    assert_eq!(tuples.len(), 3);
    let layout = BatchLayout::new(&tuples, true, 1.0, &mut SplitMix64::new(0));
    // pairs: (I+,Q+), (I-,Q+), (I+,Q-), then the cross pair (I-,Q-).
    assert_eq!(layout.pairs.len(), 4);
    assert_eq!(layout.passages, vec!["P+", "P1-", "P2-"]);
    let iq = |i: &str, q: &str| {
        let j = layout.instructions.iter().position(|x| x == i).unwrap();
        let k = layout.queries.iter().position(|x| x == q).unwrap();
        layout.pair(j, k).unwrap()
    };
    let mut s = vec![0.1f32; 4 * 3];
    s[iq("I+", "Q+") * 3] = 0.80; // cos(P+, iq00)
    s[iq("I+", "Q+") * 3 + 1] = 0.70; // cos(P1-, iq00)
    s[iq("I+", "Q+") * 3 + 2] = 0.60; // cos(P2-, iq00)
    s[iq("I-", "Q+") * 3] = 0.75; // cos(P+, iq11)
    let device = Device::flex();
    let scores = Tensor::<2>::from_data(TensorData::new(s, [4, 3]), &device);
    let anchor0 = |name: &str, literal: bool| {
        let mut loss = Loss::new(name.parse().unwrap());
        loss.literal = literal;
        values(loss.per_anchor(scores.clone(), &layout))[0] as f64
    };
    let close = |a: f64, b: f64| assert!((a - b).abs() < 2e-5, "{a} vs {b}");
    close(anchor0("uni-p", false), 0.14293);
    close(anchor0("multi-p-i", false), 0.41972);
    close(anchor0("uni-p-i", false), 0.45619);
    close(anchor0("multi-p-i", true), 1.25890);
    // InfoNCE is block P at its own temperature.
    let mut nce = Loss::new(Objective::InfoNce);
    nce.temperature = 0.05;
    close(
        values(nce.per_anchor(scores.clone(), &layout))[0] as f64,
        0.14293,
    );
}

#[test]
fn objective_names_round_trip_and_bad_names_fail() {
    for name in Objective::NAMES {
        let o: Objective = name.parse().unwrap();
        assert_eq!(o.to_string(), name);
    }
    assert_eq!(
        "uni-i-p".parse::<Objective>().unwrap().to_string(),
        "uni-p-i"
    );
    for bad in ["multi-p", "uni", "uni-x", "uni-p-p", "nce", ""] {
        let e = bad.parse::<Objective>().unwrap_err().to_string();
        assert!(e.contains("unknown loss"), "{bad}: {e}");
    }
    assert_eq!(Objective::InfoNce.default_temperature(), 0.02);
    assert_eq!(Loss::new("multi-p-i".parse().unwrap()).temperature, 0.05);
}

// ---------------------------------------------------------------------------------------
// An independent f64 implementation, written from the formulas over tuples and texts (no
// deduplicated layout), for the comparison and the finite differences.

type Vecs = std::collections::HashMap<String, Vec<f64>>;

fn cos(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// Mean loss over anchors. `pair_vec(i, q)` and `passage_vec(p)` give raw embeddings.
fn reference_loss(
    tuples: &[TrainingTuple],
    objective: &str,
    tau: f64,
    literal: bool,
    join: &dyn Fn(&str, &str) -> String,
    vecs: &Vecs,
) -> f64 {
    let s = |i: &str, q: &str, p: &str| cos(&vecs[&join(i, q)], &vecs[p]) / tau;
    let (multi, factors): (bool, Vec<&str>) = if objective == "infonce" {
        (false, vec!["p"])
    } else {
        let mut parts = objective.split('-');
        let multi = parts.next() == Some("multi");
        (multi, parts.collect())
    };
    // Occurrences of passages in the batch: positives and negatives of every tuple.
    let passages: Vec<&str> = tuples
        .iter()
        .flat_map(|t| {
            std::iter::once(t.positive.as_str()).chain(t.negatives.iter().map(|n| n.as_str()))
        })
        .collect();
    let mut total = 0.0;
    for a in tuples {
        let positive = (
            a.instruction.as_str(),
            a.query.as_str(),
            a.positive.as_str(),
        );
        let pos = s(positive.0, positive.1, positive.2);
        // Each block: the triples (instruction, query, passage) of its entries, with repeats.
        let block = |f: &str| -> Vec<(String, String, String)> {
            match f {
                "p" => passages
                    .iter()
                    .map(|p| (a.instruction.clone(), a.query.clone(), p.to_string()))
                    .collect(),
                "i" => tuples
                    .iter()
                    .map(|t| (t.instruction.clone(), a.query.clone(), a.positive.clone()))
                    .collect(),
                _ => tuples
                    .iter()
                    .map(|t| (t.instruction.clone(), t.query.clone(), a.positive.clone()))
                    .collect(),
            }
        };
        // Denominator terms of one softmax over the given blocks.
        let denominator = |blocks: &[&str]| -> f64 {
            let mut sum = 0.0;
            if literal {
                for f in blocks {
                    for e in block(f) {
                        sum += s(&e.0, &e.1, &e.2).exp();
                    }
                }
            } else {
                // Every distinct (instruction, query, passage) once, the positive included.
                let distinct: BTreeSet<(String, String, String)> =
                    blocks.iter().flat_map(|f| block(f)).collect();
                for e in distinct {
                    sum += s(&e.0, &e.1, &e.2).exp();
                }
            }
            sum
        };
        if multi {
            total += denominator(&factors).ln() - pos;
        } else {
            for f in &factors {
                total += denominator(&[f]).ln() - pos;
            }
        }
    }
    total / tuples.len() as f64
}

/// A batch with every kind of repetition: an InF-IR record (siblings share I+ and Q+), a dual
/// view record, a duplicated passage and a duplicated instruction across records.
fn mixed_batch() -> Vec<TrainingTuple> {
    let mut t = inf_ir_record().tuples(0);
    let dv = TrainingRecord::parse(
        r#"{"query":"Q+","instruction":"I+ only","positive":"D+","negatives":["P1-","H"],
            "instruction_negatives":["N*","N2"],"instruction_reversed":"I rev"}"#
            .replace('\n', " ")
            .as_str(),
    )
    .unwrap();
    t.extend(dv.tuples(8));
    t.push(tuple("I-", "Q3", "P+", &["D+"]));
    t
}

/// Random `dim`-wide vectors for `layout`'s pairs and passages (seeded), as matrices, with
/// multi-p-i's loss and its value on them (no extra terms yet).
fn random_scores(
    layout: &BatchLayout,
    dim: usize,
    seed: u64,
) -> (Vecs, Tensor<2>, Tensor<2>, Loss, f64) {
    let (vecs, pair_raw, passage_raw) = random_vecs(layout, dim, seed);
    let (pairs, passages) = matrices(layout, pair_raw, passage_raw, dim, &Device::flex());
    let loss = Loss::new("multi-p-i".parse().unwrap());
    let without = values(burn_loss(&loss, layout, pairs.clone(), passages.clone()))[0] as f64;
    (vecs, pairs, passages, loss, without)
}

/// What each instruction of [`mixed_batch`] rules out, `(instruction and query, passage)`: the
/// dual view's two tuples each other's positive, the changed view its other instruction
/// negative (N2) too, and the InF-IR record's P1- (the positive of (I-, Q+)) wherever a Q+
/// tuple lists it as a negative.
const RULED_OUT: [(&str, &str); 5] = [
    ("I+ only Q+", "N*"),
    ("I+ only Q+", "N2"),
    ("I+ only Q+", "P1-"),
    ("I rev Q+", "D+"),
    ("I rev Q+", "P1-"),
];

fn join(i: &str, q: &str) -> String {
    if i.is_empty() {
        q.to_string()
    } else {
        format!("{i} {q}")
    }
}

fn random_vecs(layout: &BatchLayout, dim: usize, seed: u64) -> (Vecs, Vec<f32>, Vec<f32>) {
    let mut rng = SplitMix64::new(seed);
    let mut vecs = Vecs::new();
    let pair_texts = layout.pair_texts(join);
    let mut pair_raw = Vec::new();
    for text in &pair_texts {
        let v: Vec<f64> = (0..dim).map(|_| rng.normal()).collect();
        pair_raw.extend(v.iter().map(|x| *x as f32));
        vecs.insert(text.clone(), v);
    }
    let mut passage_raw = Vec::new();
    for text in &layout.passages {
        let v: Vec<f64> = (0..dim).map(|_| rng.normal()).collect();
        passage_raw.extend(v.iter().map(|x| *x as f32));
        vecs.insert(text.clone(), v);
    }
    // f32 round trip, so both implementations see the same numbers.
    for v in vecs.values_mut() {
        for x in v.iter_mut() {
            *x = *x as f32 as f64;
        }
    }
    (vecs, pair_raw, passage_raw)
}

fn burn_loss(
    loss: &Loss,
    layout: &BatchLayout,
    pairs: Tensor<2>,
    passages: Tensor<2>,
) -> Tensor<1> {
    let p = engine::training::l2_normalize_rows(pairs);
    let d = engine::training::l2_normalize_rows(passages);
    loss.forward(p.matmul(d.transpose()), layout)
}

/// The mixed batch, its layout, and random `dim`-wide vectors for its texts (`random_vecs`
/// with `seed`): `(tuples, layout, vecs, pair rows, passage rows)`.
fn mixed_case(
    dim: usize,
    seed: u64,
) -> (Vec<TrainingTuple>, BatchLayout, Vecs, Vec<f32>, Vec<f32>) {
    let tuples = mixed_batch();
    let layout = BatchLayout::new(&tuples, true, 1.0, &mut SplitMix64::new(0));
    let (vecs, pair_raw, passage_raw) = random_vecs(&layout, dim, seed);
    (tuples, layout, vecs, pair_raw, passage_raw)
}

/// The pair and passage rows of `layout` as `dim`-wide matrices on `device`.
fn matrices(
    layout: &BatchLayout,
    pair_raw: Vec<f32>,
    passage_raw: Vec<f32>,
    dim: usize,
    device: &Device,
) -> (Tensor<2>, Tensor<2>) {
    let pairs = TensorData::new(pair_raw, [layout.pairs.len(), dim]);
    let passages = TensorData::new(passage_raw, [layout.passages.len(), dim]);
    (
        Tensor::<2>::from_data(pairs, device),
        Tensor::<2>::from_data(passages, device),
    )
}

#[test]
fn every_objective_matches_the_reference_formula() {
    let dim = 8;
    let (tuples, layout, vecs, pair_raw, passage_raw) = mixed_case(dim, 7);
    let device = Device::flex();
    let (pairs, passages) = matrices(&layout, pair_raw, passage_raw, dim, &device);
    for name in Objective::NAMES {
        for literal in [false, true] {
            for tau in [0.05, 1.0] {
                let mut loss = Loss::new(name.parse().unwrap());
                loss.literal = literal;
                loss.temperature = tau;
                let ours =
                    values(burn_loss(&loss, &layout, pairs.clone(), passages.clone()))[0] as f64;
                let reference = reference_loss(&tuples, name, tau, literal, &join, &vecs);
                assert!(
                    (ours - reference).abs() <= 1e-4 * (1.0 + reference.abs()),
                    "{name} literal={literal} tau={tau}: {ours} vs reference {reference}"
                );
            }
        }
    }
}

#[test]
fn gradients_match_finite_differences() {
    let dim = 4;
    let (tuples, layout, vecs, pair_raw, passage_raw) = mixed_case(dim, 11);
    let device = Device::flex().autodiff();
    for name in ["multi-p-i", "uni-p-i-iq", "multi-i-iq", "infonce"] {
        let mut loss = Loss::new(name.parse().unwrap());
        loss.temperature = 0.5;
        let (pairs, passages) =
            matrices(&layout, pair_raw.clone(), passage_raw.clone(), dim, &device);
        let (pairs, passages) = (pairs.require_grad(), passages.require_grad());
        let value = burn_loss(&loss, &layout, pairs.clone(), passages.clone());
        let grads = value.backward();
        let grad = |t: &Tensor<2>| -> Vec<f32> {
            t.grad(&grads).unwrap().into_data().try_into_vec().unwrap()
        };
        let (g_pairs, g_passages) = (grad(&pairs), grad(&passages));
        let pair_texts = layout.pair_texts(join);
        let texts: Vec<(&String, Vec<f32>)> = pair_texts
            .iter()
            .enumerate()
            .map(|(r, t)| (t, g_pairs[r * dim..(r + 1) * dim].to_vec()))
            .chain(
                layout
                    .passages
                    .iter()
                    .enumerate()
                    .map(|(r, t)| (t, g_passages[r * dim..(r + 1) * dim].to_vec())),
            )
            .collect();
        let mut checked = 0;
        for (text, grad) in texts {
            for (k, &g) in grad.iter().enumerate() {
                let eps = 1e-6;
                let mut v = vecs.clone();
                v.get_mut(text).unwrap()[k] += eps;
                let up = reference_loss(&tuples, name, 0.5, false, &join, &v);
                v.get_mut(text).unwrap()[k] -= 2.0 * eps;
                let down = reference_loss(&tuples, name, 0.5, false, &join, &v);
                let numeric = (up - down) / (2.0 * eps);
                let analytic = g as f64;
                assert!(
                    (numeric - analytic).abs() <= 1e-4 + 1e-3 * numeric.abs(),
                    "{name}: d/d{text}[{k}]: autodiff {analytic} vs numeric {numeric}"
                );
                checked += 1;
            }
        }
        assert!(checked > 40);
    }
}

#[test]
fn dual_view_record_swaps_the_pair_and_shares_the_batch() {
    let r = TrainingRecord::parse(
        r#"{"query":"q","instruction":"i","positive":"D+","negatives":["H1","H2"],"instruction_negatives":["N*","N1"],"instruction_reversed":"i rev"}"#,
    )
    .unwrap();
    let t = r.tuples(3);
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].positive, "D+");
    assert_eq!(t[0].negatives, vec!["N*", "N1", "H1"]);
    assert_eq!(t[0].excluded, 2, "the instruction negatives kept");
    assert_eq!(t[1].instruction, "i rev");
    assert_eq!(t[1].positive, "N*");
    // N1, which "i" rules out, is what its reversal asks for: no negative of that view.
    assert_eq!(t[1].negatives, vec!["D+", "H1", "H2"]);
    assert_eq!(t[1].excluded, 1);
    let plain = TrainingRecord::parse(
        r#"{"query":"q","instruction":"i","positive":"D+","negatives":[],"instruction_negatives":[]}"#,
    )
    .unwrap();
    assert_eq!(plain.tuples(30).len(), 1);
}

#[test]
fn bad_records_name_the_field() {
    let cases = [
        ("[1,2]", "JSON object"),
        (r#"{"query_positive":"q"}"#, "instruction_positive"),
        (r#"{"query":"q","instruction":"i"}"#, "positive"),
        (
            r#"{"query":"q","instruction":"i","positive":""}"#,
            "'positive' is empty",
        ),
        (
            r#"{"query":"q","instruction":"i","positive":"p","negatives":"x"}"#,
            "list of strings",
        ),
        (
            r#"{"query":"q","instruction":"i","positive":"p","instruction_reversed":"r"}"#,
            "instruction_negatives",
        ),
        (
            r#"{"query":"q","instruction":"i","positive":"p","instruction_negatives":["n"],"instruction_reversed":" "}"#,
            "'instruction_reversed' is empty",
        ),
        (r#"{"text":"hello"}"#, "not a training record"),
        ("{not json", "key must be a string"),
    ];
    for (line, expected) in cases {
        let e = TrainingRecord::parse(line).unwrap_err();
        assert!(e.contains(expected), "{line}: {e}");
    }
}

fn write(name: &str, text: &str) -> std::path::PathBuf {
    // One folder per file: a folder is emptied when it is handed out.
    let path = crate::common::tmp_folder(&format!("training-{name}")).join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    path
}

#[test]
fn record_file_reports_file_and_line_or_skips() {
    let good = r#"{"query":"q","instruction":"i","positive":"p","negatives":[],"instruction_negatives":[]}"#;
    let text = format!("{good}\n\n{{\"query\":\"q\"}}\n{good}\n");
    let path = write("bad.jsonl", &text);
    let strict = RecordFile::open(&path, false, &mut |_, _| {});
    crate::common::assert_err(strict, "", &["bad.jsonl:3:"]);
    let mut file = RecordFile::open(&path, true, &mut |_, _| {}).unwrap();
    assert_eq!(file.len(), 2);
    assert_eq!(file.skipped.len(), 1);
    assert_eq!(file.skipped[0].line, 3);
    assert!(matches!(
        file.read(1).unwrap(),
        TrainingRecord::InstructionNegative(_)
    ));
    let empty = write("empty.jsonl", "\n\n");
    let nothing = RecordFile::open(&empty, true, &mut |_, _| {});
    crate::common::assert_err(nothing, "", &["empty.jsonl", "no training records"]);
}

#[test]
fn epoch_order_is_a_seeded_permutation() {
    let a = epoch_order(100, 42, 0);
    assert_eq!(a, epoch_order(100, 42, 0));
    assert_ne!(a, epoch_order(100, 42, 1));
    assert_ne!(a, epoch_order(100, 43, 0));
    let mut sorted = a.clone();
    sorted.sort();
    assert_eq!(sorted, (0..100).collect::<Vec<_>>());
}

#[test]
fn the_query_alone_joins_every_i_block() {
    let tuples: Vec<TrainingTuple> = (0..4)
        .map(|i| tuple(&format!("I{i}"), &format!("Q{i}"), &format!("P{i}"), &[]))
        .collect();
    let layout = BatchLayout::new(&tuples, true, 0.0, &mut SplitMix64::new(1)).with_query_alone();
    let empty = layout
        .instructions
        .iter()
        .position(|i| i.is_empty())
        .unwrap();
    for (i, t) in layout.tuples.iter().enumerate() {
        let block = layout.instruction_block_for(i);
        assert!(
            block.contains(&empty) && block.contains(&t.instruction),
            "{block:?}"
        );
        assert!(layout.pair(empty, t.query).is_some());
    }
    // The query-alone pairs are cross pairs: the tuples' own pairs come first, unchanged.
    assert_eq!(layout.tuple_pairs, 4);
    assert_eq!(layout.pairs.len(), 8);
    let texts = layout.pair_texts(|i, q| {
        if i.is_empty() {
            q.to_string()
        } else {
            format!("{i} {q}")
        }
    });
    assert_eq!(texts[4..], ["Q0", "Q1", "Q2", "Q3"]);
    // A batch whose tuples already have the query alone reuses that instruction.
    let mut with_plain = tuples.clone();
    with_plain.push(tuple("", "Q0", "P0", &[]));
    let l = BatchLayout::new(&with_plain, true, 0.0, &mut SplitMix64::new(1)).with_query_alone();
    assert_eq!(l.instructions.iter().filter(|i| i.is_empty()).count(), 1);
}

#[test]
fn an_excluded_passage_is_asked_to_fall_below_its_bare_query_score() {
    let tuples = mixed_batch();
    let plain = BatchLayout::new(&tuples, true, 1.0, &mut SplitMix64::new(0));
    assert!(
        plain.exclusions().is_empty(),
        "no bare queries laid out, no exclusions"
    );
    let layout = plain.with_bare_queries();
    let texts = |contrasts: Vec<engine::training::BareContrast>| {
        let pair = |i: usize| layout.pair_texts(join)[i].clone();
        contrasts
            .iter()
            .map(|c| {
                (
                    pair(c.instructed),
                    pair(c.bare),
                    layout.passages[c.passage].clone(),
                )
            })
            .collect::<BTreeSet<(String, String, String)>>()
    };
    let found = texts(layout.exclusions());
    // H and the other query's D+ are neither instruction negatives nor a positive of a Q+
    // tuple, so they are not exclusions.
    let want: BTreeSet<(String, String, String)> = RULED_OUT
        .iter()
        .map(|(pair, p)| (pair.to_string(), "Q+".to_string(), p.to_string()))
        .collect();
    assert_eq!(found, want);

    // The term's value against the formula: the weighted mean of
    // -log σ((s(p, q) - s(p, (I, q))) / τ) over the exclusions, added to the contrastive loss.
    let dim = 8;
    let device = Device::flex();
    let (vecs, pairs, passages, mut loss, without) = random_scores(&layout, dim, 5);
    // The bare-query rows change nothing in the contrastive blocks: the same vectors (keyed by
    // text) laid out without them give every anchor the same loss.
    let rows_of = |l: &BatchLayout| -> (Vec<f32>, Vec<f32>) {
        let flat = |texts: &[String]| -> Vec<f32> {
            texts
                .iter()
                .flat_map(|t| vecs[t].iter().map(|x| *x as f32))
                .collect()
        };
        (flat(&l.pair_texts(join)), flat(&l.passages))
    };
    let plain = BatchLayout::new(&tuples, true, 1.0, &mut SplitMix64::new(0));
    let (plain_pairs, plain_passages) = rows_of(&plain);
    let (plain_pairs, plain_passages) = matrices(&plain, plain_pairs, plain_passages, dim, &device);
    let anchors = |l: &BatchLayout, p: Tensor<2>, d: Tensor<2>| {
        let p = engine::training::l2_normalize_rows(p);
        let d = engine::training::l2_normalize_rows(d);
        values(loss.per_anchor(p.matmul(d.transpose()), l))
    };
    let with_bare = anchors(&layout, pairs.clone(), passages.clone());
    let without_bare = anchors(&plain, plain_pairs, plain_passages);
    assert_eq!(with_bare.len(), without_bare.len());
    for (a, b) in with_bare.iter().zip(&without_bare) {
        assert!((a - b).abs() < 1e-5, "{with_bare:?} vs {without_bare:?}");
    }
    loss.exclusion_weight = 0.5;
    let with = values(burn_loss(&loss, &layout, pairs.clone(), passages.clone()))[0] as f64;
    let tau = loss.temperature;
    // Mean of -log σ(gap / τ), gap the winner's cosine minus the loser's.
    let softplus_mean = |set: &BTreeSet<(String, String, String)>, instructed_wins: bool| {
        let sign = if instructed_wins { 1.0 } else { -1.0 };
        set.iter()
            .map(|(pair, bare, p)| {
                let gap = sign * (cos(&vecs[pair], &vecs[p]) - cos(&vecs[bare], &vecs[p])) / tau;
                (1.0 + (-gap).exp()).ln()
            })
            .sum::<f64>()
            / set.len() as f64
    };
    let term = softplus_mean(&want, false);
    assert!(term > 0.0);
    assert!(
        (with - without - 0.5 * term).abs() < 1e-4 * (1.0 + term),
        "exclusion term {} vs the formula's {}",
        (with - without) / 0.5,
        term
    );

    // The inclusion term: every tuple with an instruction, its positive asked to score higher
    // with the instruction than under the bare query, -log σ((s(p, (I, q)) - s(p, q)) / τ).
    let included = texts(layout.inclusions());
    let want_included: BTreeSet<(String, String, String)> = [
        ("I+ Q+", "Q+", "P+"),
        ("I- Q+", "Q+", "P1-"),
        ("I+ Q-", "Q-", "P2-"),
        ("I+ only Q+", "Q+", "D+"),
        ("I rev Q+", "Q+", "N*"),
        ("I- Q3", "Q3", "P+"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(included, want_included);
    loss.exclusion_weight = 0.0;
    loss.inclusion_weight = 2.0;
    let with = values(burn_loss(&loss, &layout, pairs, passages))[0] as f64;
    let term = softplus_mean(&want_included, true);
    assert!(
        (with - without - 2.0 * term).abs() < 1e-4 * (1.0 + term),
        "inclusion term {} vs the formula's {}",
        (with - without) / 2.0,
        term
    );
}

#[test]
fn an_excluded_group_is_asked_to_keep_its_bare_query_order() {
    let tuples = mixed_batch();
    let layout = BatchLayout::new(&tuples, true, 1.0, &mut SplitMix64::new(0)).with_bare_queries();
    // One group: the changed view's two instruction negatives (the reversed view has one).
    let groups = layout.excluded_groups();
    assert_eq!(groups.len(), 1);
    let pair = |i: usize| layout.pair_texts(join)[i].clone();
    let g = &groups[0];
    assert_eq!(
        (pair(g.instructed), pair(g.bare)),
        ("I+ only Q+".into(), "Q+".into())
    );
    let names: BTreeSet<&str> = g
        .passages
        .iter()
        .map(|&p| layout.passages[p].as_str())
        .collect();
    assert_eq!(names, ["N*", "N2"].into_iter().collect());

    let dim = 8;
    let (vecs, pair_raw, passage_raw) = random_vecs(&layout, dim, 11);
    let device = Device::flex();
    let (pairs, passages) = matrices(&layout, pair_raw.clone(), passage_raw.clone(), dim, &device);
    let mut loss = Loss::new("multi-p-i".parse().unwrap());
    let without = values(burn_loss(&loss, &layout, pairs.clone(), passages.clone()))[0] as f64;
    loss.excluded_order_weight = 3.0;
    let with = values(burn_loss(&loss, &layout, pairs, passages.clone()))[0] as f64;
    // KL(p_bare ‖ p_instructed) over {N*, N2}, each the softmax of cosines / τ.
    let tau = loss.temperature;
    let softmax = |from: &str| -> Vec<f64> {
        let logits: Vec<f64> = ["N*", "N2"]
            .iter()
            .map(|p| cos(&vecs[from], &vecs[*p]) / tau)
            .collect();
        let max = logits.iter().cloned().fold(f64::MIN, f64::max);
        let z: f64 = logits.iter().map(|l| (l - max).exp()).sum();
        logits.iter().map(|l| (l - max).exp() / z).collect()
    };
    let (p, q) = (softmax("Q+"), softmax("I+ only Q+"));
    let kl: f64 = p.iter().zip(&q).map(|(p, q)| p * (p / q).ln()).sum();
    assert!(
        kl > 1e-3,
        "random vectors give the two orders different weights: {kl}"
    );
    assert!(
        (with - without - 3.0 * kl).abs() < 1e-4 * (1.0 + kl),
        "excluded-order term {} vs the formula's {kl}",
        (with - without) / 3.0
    );
    // Scored by the instruction exactly as by the bare query, the group costs nothing.
    let mut same = pair_raw;
    let (bare_row, instructed_row) = (g.bare * dim, g.instructed * dim);
    for k in 0..dim {
        same[instructed_row + k] = same[bare_row + k];
    }
    let (pairs, passages) = matrices(&layout, same, passage_raw, dim, &device);
    let scores = engine::training::l2_normalize_rows(pairs)
        .matmul(engine::training::l2_normalize_rows(passages).transpose());
    let term = values(loss.excluded_order(scores, &layout).unwrap())[0];
    assert!(term.abs() < 1e-6, "{term}");
}

#[test]
fn a_ruled_out_passage_is_asked_to_fall_below_the_unanswering_negatives() {
    let tuples = mixed_batch();
    // No bare queries needed: both scores are under the instruction.
    let layout = BatchLayout::new(&tuples, true, 1.0, &mut SplitMix64::new(0));
    let pair = |i: usize| layout.pair_texts(join)[i].clone();
    let found: BTreeSet<(String, String, String)> = layout
        .demotions()
        .iter()
        .map(|d| {
            (
                pair(d.instructed),
                layout.passages[d.ruled_out].clone(),
                layout.passages[d.unanswering].clone(),
            )
        })
        .collect();
    // The passages each instruction rules out against H, the one negative that answers no Q+
    // tuple; Q3's tuple rules nothing out, the InF-IR tuples
    // list no negatives that answer the query.
    let want: BTreeSet<(String, String, String)> = RULED_OUT
        .iter()
        .map(|(pair, e)| (pair.to_string(), e.to_string(), "H".to_string()))
        .collect();
    assert_eq!(found, want);

    // The term against the formula: the mean of -log σ((s(H, (I, q)) - s(e, (I, q))) / τ).
    let (vecs, pairs, passages, mut loss, without) = random_scores(&layout, 8, 17);
    loss.demotion_weight = 1.5;
    let with = values(burn_loss(&loss, &layout, pairs, passages))[0] as f64;
    let tau = loss.temperature;
    let term = want
        .iter()
        .map(|(pair, e, n)| {
            let gap = (cos(&vecs[pair], &vecs[n]) - cos(&vecs[pair], &vecs[e])) / tau;
            (1.0 + (-gap).exp()).ln()
        })
        .sum::<f64>()
        / want.len() as f64;
    assert!(term > 0.0);
    assert!(
        (with - without - 1.5 * term).abs() < 1e-4 * (1.0 + term),
        "demotion term {} vs the formula's {term}",
        (with - without) / 1.5
    );
    // Fixed distractors: the same value, but no gradient reaches H, only the ruled-out side.
    let dim = 8;
    let (_, pair_raw, passage_raw) = random_vecs(&layout, dim, 17);
    let device = Device::flex().autodiff();
    let passage_grad = |fixed: bool| {
        let mut loss = Loss::new("multi-p-i".parse().unwrap());
        loss.demotion_weight = 1.0;
        loss.demotion_fixed_distractors = fixed;
        let (pairs, passages) =
            matrices(&layout, pair_raw.clone(), passage_raw.clone(), dim, &device);
        let passages = passages.require_grad();
        let scores = engine::training::l2_normalize_rows(pairs)
            .matmul(engine::training::l2_normalize_rows(passages.clone()).transpose());
        let term = loss.demotion(scores, &layout).unwrap();
        let value = values(term.clone())[0] as f64;
        let grads = term.backward();
        let g: Vec<f32> = passages
            .grad(&grads)
            .unwrap()
            .into_data()
            .try_into_vec()
            .unwrap();
        let row_norm = |name: &str| {
            let r = layout.passages.iter().position(|p| p == name).unwrap();
            g[r * dim..(r + 1) * dim]
                .iter()
                .map(|x| x.abs())
                .sum::<f32>()
        };
        (value, row_norm("H"), row_norm("N*"))
    };
    let (trained, fixed) = (passage_grad(false), passage_grad(true));
    assert!((trained.0 - term).abs() < 1e-4 * (1.0 + term));
    assert!((fixed.0 - term).abs() < 1e-4 * (1.0 + term));
    assert!(trained.1 > 1e-6, "trained distractors move: {trained:?}");
    assert_eq!(fixed.1, 0.0, "fixed distractors get no gradient: {fixed:?}");
    assert!(
        fixed.2 > 1e-6,
        "the ruled-out passage still moves: {fixed:?}"
    );
    // A batch without instruction negatives or reversed views demotes nothing.
    let plain = vec![tuple("I-", "Q3", "P+", &["D+"])];
    assert!(BatchLayout::new(&plain, true, 1.0, &mut SplitMix64::new(0))
        .demotions()
        .is_empty());
}

#[test]
fn instruction_sampling_keeps_the_anchor_and_its_siblings() {
    let tuples: Vec<TrainingTuple> = (0..20)
        .map(|i| tuple(&format!("I{i}"), &format!("Q{i}"), &format!("P{i}"), &[]))
        .collect();
    // Fraction 0: no sampled instructions, no cross pairs; each anchor's block is its own
    // instruction and those sharing its query.
    let layout = BatchLayout::new(&tuples[..4], true, 0.0, &mut SplitMix64::new(1));
    assert!(layout.instruction_block.is_empty());
    assert_eq!(layout.pairs.len(), 4);
    assert_eq!(layout.instruction_block_for(2), vec![2]);
    let siblings = inf_ir_record().tuples(0);
    let l = BatchLayout::new(&siblings, true, 0.0, &mut SplitMix64::new(1));
    // Anchor t0 (I+, Q+): I+ and the poisoned I- share Q+.
    assert_eq!(l.instruction_block_for(0).len(), 2);
    assert_eq!(l.instruction_block_for(2).len(), 1);
    // Fraction 1: all 4 instructions with all 4 queries.
    let full = BatchLayout::new(&tuples[..4], true, 1.0, &mut SplitMix64::new(1));
    assert_eq!(full.pairs.len(), 16);
    let half = BatchLayout::new(&tuples, true, 0.5, &mut SplitMix64::new(1));
    assert!(
        half.instruction_block.len() > 3 && half.instruction_block.len() < 17,
        "{}",
        half.instruction_block.len()
    );
    let none = BatchLayout::new(&tuples, false, 1.0, &mut SplitMix64::new(1));
    assert_eq!(none.pairs.len(), 20);
    assert!(none.instruction_block.is_empty());
}

#[test]
fn random_model_round_trips_through_safetensors() {
    let config = crate::common::tiny_config(2);
    let device = Device::flex();
    let a = engine::bert::BertModel::random(&config, 3, &device).unwrap();
    let bytes = a.to_safetensors(None).unwrap();
    assert_eq!(bytes, engine::bert::random_safetensors(&config, 3).unwrap());
    let b = engine::bert::BertModel::from_safetensors(
        &bytes,
        std::path::Path::new("x"),
        &config,
        &device,
    )
    .unwrap();
    assert_eq!(b.named_tensors().unwrap(), a.named_tensors().unwrap());
    assert_ne!(bytes, engine::bert::random_safetensors(&config, 4).unwrap());
}

/// A deterministic spread of values in [-7, 7], the range GELU sees in BERT and beyond.
fn spread(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| (rng.uniform() * 14.0 - 7.0) as f32)
        .collect()
}

/// The largest absolute difference between the elements of `a` and `b`.
fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max)
}

#[test]
fn the_gelu_kernel_equals_burns_gelu_on_contiguous_and_transposed_tensors() {
    let device = Device::flex();
    let x = Tensor::<3>::from_data(
        TensorData::new(spread(3 * 40 * 700, 1), [3, 40, 700]),
        &device,
    );
    for x in [x.clone(), x.swap_dims(1, 2)] {
        let want = values(burn::tensor::activation::gelu(x.clone()).flatten::<1>(0, 2));
        let got = values(engine::kernels::gelu(x).flatten::<1>(0, 2));
        let worst = max_abs_diff(&want, &got);
        assert!(worst < 2e-6, "max |kernel - burn| = {worst:e}");
    }
}

/// The kernel's backward pass (autodiff, as `trainer train` runs it) against burn's GELU.
#[cfg(feature = "autodiff")]
#[test]
fn the_gelu_kernel_gradient_equals_burns() {
    let device = Device::flex().autodiff();
    let weights = Tensor::<2>::from_data(TensorData::new(spread(64 * 300, 3), [64, 300]), &device);
    let grad = |f: fn(Tensor<2>) -> Tensor<2>| {
        let x = Tensor::<2>::from_data(TensorData::new(spread(300 * 64, 2), [300, 64]), &device)
            .require_grad();
        // A transposed input, as the attention layers pass them.
        let loss = (f(x.clone().transpose()) * weights.clone()).sum();
        let grads = loss.backward();
        values(x.grad(&grads).unwrap().flatten::<1>(0, 1))
    };
    let want = grad(burn::tensor::activation::gelu);
    let got = grad(engine::kernels::gelu);
    let worst = max_abs_diff(&want, &got);
    assert!(worst < 1e-5, "max |kernel grad - burn grad| = {worst:e}");
}

/// The softmax kernel under autodiff (its one-pass backward from the saved output) against
/// burn's composed softmax: values and gradients, on a transposed input with masked entries,
/// as the attention layers give it, and a row that is all masked but one.
#[cfg(feature = "autodiff")]
#[test]
fn the_softmax_kernel_and_its_gradient_equal_burns() {
    let device = Device::flex().autodiff();
    let weights = Tensor::<3>::from_data(
        TensorData::new(spread(2 * 64 * 40, 5), [2, 64, 40]),
        &device,
    );
    let run = |f: fn(Tensor<3>) -> Tensor<3>| {
        let mut scores = spread(2 * 40 * 64, 4);
        // [sequence, key, query]: the second sequence's last 9 keys are padding, masked as the
        // encoder masks them, and the first sequence's query 0 sees key 0 alone.
        for (i, v) in scores.iter_mut().enumerate() {
            let (sequence, key, query) = (i / (40 * 64), (i / 64) % 40, i % 64);
            let padding = sequence == 1 && key >= 31;
            let alone = sequence == 0 && query == 0 && key > 0;
            if padding || alone {
                *v = engine::bert::MASKED;
            }
        }
        let x =
            Tensor::<3>::from_data(TensorData::new(scores, [2, 40, 64]), &device).require_grad();
        let y = f(x.clone().swap_dims(1, 2));
        let loss = (y.clone() * weights.clone()).sum();
        let grads = loss.backward();
        (
            values(y.flatten::<1>(0, 2)),
            values(x.grad(&grads).unwrap().flatten::<1>(0, 2)),
        )
    };
    let (want_y, want_grad) = run(|x| burn::tensor::activation::softmax(x, 2));
    let (got_y, got_grad) = run(engine::kernels::softmax_last);
    let worst = max_abs_diff(&want_y, &got_y);
    assert!(worst < 1e-6, "max |kernel - burn| = {worst:e}");
    let worst = max_abs_diff(&want_grad, &got_grad);
    assert!(worst < 1e-5, "max |kernel grad - burn grad| = {worst:e}");
    assert!(
        want_grad.iter().any(|g| g.abs() > 1e-2),
        "a gradient that says something"
    );
}

/// The attention weights in one pass (scale, mask bias, softmax) are the separate operations'
/// values to the bit, forward and backward (against the softmax kernel after burn's scale and
/// addition, the route the attention layers took before), with padded keys masked per text
/// and a bias broadcast over heads and queries.
#[cfg(feature = "autodiff")]
#[test]
fn the_attention_weights_kernel_equals_the_separate_operations_bit_for_bit() {
    let (texts, heads, length) = (3, 4, 21);
    let scale = 1.0 / (8.0f64).sqrt();
    for device in [Device::flex(), Device::flex().autodiff()] {
        // Text t's last 2t keys are padding.
        let mask: Vec<f32> = (0..texts * length)
            .map(|i| f32::from(i % length < length - 2 * (i / length)))
            .collect();
        let mask = Tensor::<2>::from_data(TensorData::new(mask, [texts, length]), &device);
        let bias = engine::bert::mask_bias(mask).reshape([texts, 1, 1, length]);
        let weights = spread_tensor([texts, heads, length, length], 41, &device);
        let run = |fused: bool| {
            let mut q = spread_tensor([texts, length, heads, 8], 42, &device);
            if device.is_autodiff() {
                q = q.require_grad();
            }
            let k = spread_tensor([texts, length, heads, 8], 43, &device);
            let scores = q
                .clone()
                .swap_dims(1, 2)
                .matmul(k.clone().swap_dims(1, 2).transpose());
            let y = if fused {
                engine::kernels::attention_weights(scores, scale, bias.clone())
            } else {
                engine::kernels::softmax_last(scores.mul_scalar(scale) + bias.clone())
            };
            let grad = device.is_autodiff().then(|| {
                let grads = (y.clone() * weights.clone()).sum().backward();
                bits(q.grad(&grads).unwrap())
            });
            (bits(y), grad)
        };
        let (want, got) = (run(false), run(true));
        assert!(want.0 == got.0, "values differ on {device:?}");
        assert!(want.1 == got.1, "gradients differ on {device:?}");
    }
}

/// The layer norm with its one-sweep backward pass: forward values burn's `LayerNorm` to the
/// bit (the same fused operation), gradients of the input, gamma and beta within rounding of
/// burn's autodiff through the separate operations, on a transposed input.
#[cfg(feature = "autodiff")]
#[test]
fn the_layer_norm_kernel_and_its_gradients_equal_burns() {
    let width = 40;
    let plain = Device::flex();
    let norm_on = |device: &Device| {
        let mut norm = burn::nn::LayerNormConfig::new(width)
            .with_epsilon(1e-12)
            .init(device);
        norm.gamma = burn::module::Param::from_tensor(spread_tensor([width], 51, device));
        norm.beta = Some(burn::module::Param::from_tensor(spread_tensor(
            [width],
            52,
            device,
        )));
        norm
    };
    let x = spread_tensor([2, width, 30], 53, &plain).swap_dims(1, 2);
    let norm = norm_on(&plain);
    assert_eq!(
        bits(engine::kernels::layer_norm(x.clone(), &norm, 1e-12)),
        bits(norm.forward(x)),
        "forward values"
    );

    let device = Device::flex().autodiff();
    let weights = spread_tensor([2, 30, width], 54, &device);
    let run = |kernel: bool| {
        let norm = norm_on(&device);
        let x = spread_tensor([2, width, 30], 53, &device).require_grad();
        let input = x.clone().swap_dims(1, 2);
        let y = if kernel {
            engine::kernels::layer_norm(input, &norm, 1e-12)
        } else {
            norm.forward(input)
        };
        let grads = (y.clone() * weights.clone()).sum().backward();
        let beta = norm.beta.as_ref().unwrap();
        [
            values(y.flatten::<1>(0, 2)),
            values(x.grad(&grads).unwrap().flatten::<1>(0, 2)),
            values(norm.gamma.grad(&grads).unwrap()),
            values(beta.grad(&grads).unwrap()),
        ]
    };
    let (want, got) = (run(false), run(true));
    for (what, (want, got)) in ["output", "dx", "dgamma", "dbeta"]
        .iter()
        .zip(want.iter().zip(&got))
    {
        let scale = want.iter().fold(1.0f32, |m, v| m.max(v.abs()));
        let worst = max_abs_diff(want, got);
        assert!(
            worst < 2e-5 * scale,
            "{what}: max |kernel - burn| = {worst:e}"
        );
        assert!(want.iter().any(|g| g.abs() > 1e-2), "{what} says something");
    }
}

/// A tensor of `dims` with spread values, on `device`.
fn spread_tensor<const D: usize>(dims: [usize; D], seed: u64, device: &Device) -> Tensor<D> {
    let n: usize = dims.iter().product();
    Tensor::<D>::from_data(TensorData::new(spread(n, seed), dims), device)
}

/// The bits of a tensor's values.
fn bits<const D: usize>(t: Tensor<D>) -> Vec<u32> {
    let n: usize = t.dims().iter().product();
    values(t.reshape([n])).iter().map(|v| v.to_bits()).collect()
}

/// The CPU backend's product written straight into its output is burn-flex's to the bit: on
/// plain, transposed and strided operands (the attention layers' views), with broadcast
/// batches, and in each of burn-flex's threading regimes (one thread; large matrices threaded
/// inside the product; a large batch of small matrices across threads).
#[test]
fn the_product_kernel_equals_burns_product_bit_for_bit() {
    let device = Device::flex();
    let cases: Vec<(Tensor<4>, Tensor<4>)> = vec![
        // One thread: 2 x 3 matrices of 5 x 7 by 7 x 4.
        (
            spread_tensor([2, 3, 5, 7], 11, &device),
            spread_tensor([2, 3, 7, 4], 12, &device),
        ),
        // Queries by transposed keys, heads split from the hidden size (swap_dims views).
        (
            spread_tensor([3, 50, 4, 16], 13, &device).swap_dims(1, 2),
            spread_tensor([3, 50, 4, 16], 14, &device)
                .swap_dims(1, 2)
                .transpose(),
        ),
        // A large batch of small matrices (threads across matrices).
        (
            spread_tensor([8, 2, 64, 64], 15, &device),
            spread_tensor([8, 2, 64, 64], 16, &device),
        ),
        // Large matrices (threads inside the product), the right operand broadcast.
        (
            spread_tensor([2, 1, 200, 210], 17, &device),
            spread_tensor([1, 1, 210, 220], 18, &device),
        ),
        // A narrowed (offset) left operand.
        (
            spread_tensor([1, 2, 9, 40], 19, &device).narrow(3, 5, 30),
            spread_tensor([1, 2, 30, 6], 20, &device),
        ),
    ];
    for (lhs, rhs) in cases {
        let want = bits(lhs.clone().matmul(rhs.clone()));
        let got = engine::kernels::matmul(lhs.clone(), rhs.clone());
        assert_eq!(got.dims(), lhs.clone().matmul(rhs.clone()).dims());
        assert_eq!(bits(got), want, "{:?} x {:?}", lhs.dims(), rhs.dims());
    }
    // Two dimensions, and a dense layer over every row of a batch.
    let (a, b) = (
        spread_tensor([33, 70], 21, &device),
        spread_tensor([70, 45], 22, &device),
    );
    assert_eq!(
        bits(engine::kernels::matmul(a.clone(), b.clone())),
        bits(a.matmul(b))
    );
    let layer = burn::nn::LinearConfig::new(70, 45).init(&device);
    let x = spread_tensor([4, 9, 70], 23, &device);
    let got = values(engine::kernels::linear(x.clone(), &layer).flatten::<1>(0, 2));
    let worst = max_abs_diff(&values(layer.forward(x).flatten::<1>(0, 2)), &got);
    assert!(
        worst < 1e-5,
        "max |dense layer - burn's linear| = {worst:e}"
    );
}

/// The product's backward pass (autodiff, as `trainer train` runs it) against burn's: the
/// gradients of both operands, through transposed views, and through a dense layer's weight
/// and bias.
#[cfg(feature = "autodiff")]
#[test]
fn the_product_kernel_gradients_equal_burns() {
    let device = Device::flex().autodiff();
    type Product = fn(Tensor<4>, Tensor<4>) -> Tensor<4>;
    let run = |product: Product| {
        let q = spread_tensor([2, 30, 3, 8], 31, &device).require_grad();
        let k = spread_tensor([2, 30, 3, 8], 32, &device).require_grad();
        let weights = spread_tensor([2, 3, 30, 30], 33, &device);
        let scores = product(
            q.clone().swap_dims(1, 2),
            k.clone().swap_dims(1, 2).transpose(),
        );
        let grads = (scores * weights).sum().backward();
        let grad = |t: &Tensor<4>| values(t.grad(&grads).unwrap().flatten::<1>(0, 3));
        (grad(&q), grad(&k))
    };
    let (want_q, want_k) = run(|a, b| a.matmul(b));
    let (got_q, got_k) = run(engine::kernels::matmul);
    for (want, got) in [(want_q, got_q), (want_k, got_k)] {
        let worst = max_abs_diff(&want, &got);
        assert!(worst < 1e-4, "max |kernel grad - burn grad| = {worst:e}");
        assert!(
            want.iter().any(|g| g.abs() > 1e-2),
            "a gradient that says something"
        );
    }

    let layer = burn::nn::LinearConfig::new(20, 12).init(&device);
    let x = spread_tensor([3, 7, 20], 34, &device).require_grad();
    let weights = spread_tensor([3, 7, 12], 35, &device);
    let grads_of = |y: Tensor<3>| {
        let grads = (y * weights.clone()).sum().backward();
        let bias = layer.bias.as_ref().unwrap();
        [
            values(x.grad(&grads).unwrap().flatten::<1>(0, 2)),
            values(layer.weight.grad(&grads).unwrap().flatten::<1>(0, 1)),
            values(bias.grad(&grads).unwrap()),
        ]
    };
    let want = grads_of(layer.forward(x.clone()));
    let got = grads_of(engine::kernels::linear(x.clone(), &layer));
    for (want, got) in want.iter().zip(&got) {
        let worst = max_abs_diff(want, got);
        assert!(
            worst < 1e-4,
            "max |dense layer grad - burn grad| = {worst:e}"
        );
    }
}

#[test]
fn interpolation_mixes_each_weight_and_refuses_bad_shares_and_shapes() {
    use engine::bert::BertModel;
    use engine::training::interpolate::interpolate;
    let config = crate::common::tiny_config(2);
    let device = Device::flex();
    let start = BertModel::random(&config, 3, &device).unwrap();
    let tuned = BertModel::random(&config, 4, &device).unwrap();
    let tensors = |m: &BertModel| m.named_tensors().unwrap();
    let mixed = interpolate(&start, &tuned, 0.25, &device).unwrap();
    let (a, b, m) = (tensors(&start), tensors(&tuned), tensors(&mixed));
    assert_eq!(a.len(), m.len());
    for ((a, b), m) in a.iter().zip(&b).zip(&m) {
        assert_eq!((&a.0, &a.1), (&m.0, &m.1));
        for ((x, y), z) in a.2.iter().zip(&b.2).zip(&m.2) {
            assert!((z - (0.25 * x + 0.75 * y)).abs() < 1e-6, "{}: {z}", m.0);
        }
    }
    assert_eq!(
        tensors(&interpolate(&start, &tuned, 0.0, &device).unwrap()),
        b
    );
    assert_eq!(
        tensors(&interpolate(&start, &tuned, 1.0, &device).unwrap()),
        a
    );
    // A negative share extrapolates past `tuned`, away from `start` (ExPO).
    let past = tensors(&interpolate(&start, &tuned, -0.25, &device).unwrap());
    for ((a, b), m) in a.iter().zip(&b).zip(&past) {
        for ((x, y), z) in a.2.iter().zip(&b.2).zip(&m.2) {
            assert!((z - (1.25 * y - 0.25 * x)).abs() < 1e-5, "{}: {z}", m.0);
        }
    }
    for bad in [-1.1, 1.5, f64::NAN] {
        assert!(interpolate(&start, &tuned, bad, &device).is_err(), "{bad}");
    }
    let other = BertModel::random(&crate::common::tiny_config(1), 3, &device).unwrap();
    let err = interpolate(&start, &other, 0.5, &device).unwrap_err();
    assert!(err.to_string().contains("different shapes"), "{err}");
}

#[test]
fn the_start_pull_moves_each_trainable_weight_back_by_lr_times_strength() {
    use burn::module::{Module, ModuleVisitor, Param};
    use engine::bert::BertModel;
    use engine::training::model::TrainModel;
    use engine::training::start_pull::StartPull;
    let config = crate::common::tiny_config(2);
    let device = Device::flex();
    let train_device = device.clone().autodiff();
    let start = BertModel::random(&config, 3, &device).unwrap();
    // The embeddings frozen: the pull must leave them alone.
    let tuned = BertModel::random(&config, 4, &train_device)
        .unwrap()
        .freeze_lowest(1)
        .unwrap();
    let before = tuned.named_tensors().unwrap();
    let pull = StartPull::new(&start, 5.0).unwrap();
    let model = TrainModel {
        bert: tuned,
        cross: None,
    };
    // lr 0.05 x strength 5: a quarter of the way back.
    let pulled = pull.apply(model, 0.05).unwrap();
    let (a, b, m) = (
        start.named_tensors().unwrap(),
        before,
        pulled.bert.named_tensors().unwrap(),
    );
    let mut moved = 0;
    for ((a, b), m) in a.iter().zip(&b).zip(&m) {
        let frozen = m.0.starts_with("embeddings.");
        for ((x, y), z) in a.2.iter().zip(&b.2).zip(&m.2) {
            let want = if frozen { *y } else { 0.75 * y + 0.25 * x };
            assert!((z - want).abs() < 1e-7, "{}: {z} against {want}", m.0);
            moved += usize::from(!frozen && x != y);
        }
    }
    assert!(moved > 1000, "{moved} weights moved");
    // The trainable weights still take gradients, the frozen ones still do not.
    struct Grads(Vec<bool>);
    impl ModuleVisitor for Grads {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0.push(param.val().is_require_grad());
        }
    }
    let (mut after, mut fresh) = (Grads(Vec::new()), Grads(Vec::new()));
    pulled.bert.visit(&mut after);
    BertModel::random(&config, 4, &train_device)
        .unwrap()
        .freeze_lowest(1)
        .unwrap()
        .visit(&mut fresh);
    assert_eq!(after.0, fresh.0);
    assert!(after.0.iter().any(|&g| g) && after.0.iter().any(|&g| !g));
    // A model of another shape, and strengths that are not positive, are refused.
    let small = TrainModel {
        bert: BertModel::random(&crate::common::tiny_config(1), 4, &train_device).unwrap(),
        cross: None,
    };
    let Err(err) = pull.apply(small, 0.05) else {
        panic!("a model of another shape was pulled");
    };
    assert!(err.to_string().contains("fewer weights"), "{err}");
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(StartPull::new(&start, bad).is_err(), "{bad}");
    }
}
