//! A BERT model's weights in and out: the one table of weight names and shapes
//! (`weight_table`, in the modules' field order) that loading from a Hugging Face
//! `model.safetensors` (names as in `BertModel`, with or without a `bert.` prefix), saving and
//! random initialisation all walk. Every tensor is checked against `config.json` before use, so
//! a mismatched file is reported by name instead of failing deep inside a matmul.

use super::*;

/// Reads named tensors out of a safetensors file, checking dtype and shape.
pub(crate) struct WeightReader<'a> {
    tensors: SafeTensors<'a>,
    path: &'a Path,
    prefix: String,
    device: Device,
}

impl<'a> WeightReader<'a> {
    /// Parses the safetensors header. A truncated or corrupt file is reported here.
    pub(crate) fn new(bytes: &'a [u8], path: &'a Path, device: &Device) -> Result<Self> {
        let tensors = SafeTensors::deserialize(bytes)
            .map_err(|e| EngineError::model(path, format!("not a valid safetensors file: {e}")))?;
        let prefix = if tensors
            .names()
            .iter()
            .any(|n| n.starts_with("bert.embeddings."))
        {
            "bert.".to_string()
        } else {
            String::new()
        };
        Ok(WeightReader {
            tensors,
            path,
            prefix,
            device: device.clone(),
        })
    }

    /// A tensor of rank `D` with exactly `shape`, converted to f32.
    pub(crate) fn tensor<const D: usize>(
        &self,
        name: &str,
        shape: [usize; D],
    ) -> Result<Tensor<D>> {
        let full = format!("{}{}", self.prefix, name);
        let view = self
            .tensors
            .tensor(&full)
            .map_err(|_| EngineError::model(self.path, format!("tensor '{full}' is missing")))?;
        if view.shape() != shape {
            return Err(EngineError::model(
                self.path,
                format!(
                    "tensor '{full}' has shape {:?}, expected {:?} from config.json",
                    view.shape(),
                    shape
                ),
            ));
        }
        let values = match view.dtype() {
            safetensors::Dtype::I8 => self.dequantized(&full, &view, shape[D - 1])?,
            dtype => decode_f32(dtype, view.data()).ok_or_else(|| {
                EngineError::model(
                    self.path,
                    format!(
                        "tensor '{full}' has dtype {dtype:?}; supported: F32, F16, BF16, and I8 with row scales"
                    ),
                )
            })?,
        };
        Ok(Tensor::from_data(
            TensorData::new(values, shape),
            &self.device,
        ))
    }

    /// The f32 values of the int8 matrix `full` (rows of `width`) and its row scales
    /// (`full.scale`, written by [`crate::safetensors_io::to_int8`]).
    fn dequantized(
        &self,
        full: &str,
        view: &safetensors::tensor::TensorView<'_>,
        width: usize,
    ) -> Result<Vec<f32>> {
        use crate::safetensors_io::{dequantize_int8, INT8_SCALE_SUFFIX};
        let scale_name = format!("{full}{INT8_SCALE_SUFFIX}");
        let scales = self
            .tensors
            .tensor(&scale_name)
            .ok()
            .and_then(|s| decode_f32(s.dtype(), s.data()))
            .ok_or_else(|| {
                EngineError::model(
                    self.path,
                    format!("int8 tensor '{full}' has no readable row scales '{scale_name}'"),
                )
            })?;
        dequantize_int8(view.data(), &scales, width).ok_or_else(|| {
            EngineError::model(
                self.path,
                format!(
                    "int8 tensor '{full}': {} row scales do not fit its shape {:?}",
                    scales.len(),
                    view.shape()
                ),
            )
        })
    }

    fn linear(&self, name: &str, d_in: usize, d_out: usize) -> Result<Linear> {
        // Hugging Face stores [out, in]; burn's row layout is [in, out].
        let weight = self
            .tensor(&format!("{name}.weight"), [d_out, d_in])?
            .transpose();
        let bias = self.tensor(&format!("{name}.bias"), [d_out])?;
        Ok(Linear {
            weight: named_param(&format!("{name}.weight"), weight),
            bias: Some(named_param(&format!("{name}.bias"), bias)),
        })
    }

    fn layer_norm(&self, name: &str, d: usize, eps: f64) -> Result<LayerNorm> {
        let mut norm = LayerNormConfig::new(d).with_epsilon(eps).init(&self.device);
        // Older checkpoints name the parameters gamma/beta.
        let (w, b) = if self.has(&format!("{name}.weight")) {
            ("weight", "bias")
        } else {
            ("gamma", "beta")
        };
        norm.gamma = named_param(
            &format!("{name}.weight"),
            self.tensor(&format!("{name}.{w}"), [d])?,
        );
        norm.beta = Some(named_param(
            &format!("{name}.bias"),
            self.tensor(&format!("{name}.{b}"), [d])?,
        ));
        Ok(norm)
    }

    fn embedding(&self, name: &str, n: usize, d: usize) -> Result<Embedding> {
        Ok(Embedding {
            weight: named_param(
                &format!("{name}.weight"),
                self.tensor(&format!("{name}.weight"), [n, d])?,
            ),
        })
    }

    fn has(&self, name: &str) -> bool {
        self.tensors
            .tensor(&format!("{}{}", self.prefix, name))
            .is_ok()
    }
}

/// The parameter id of the tensor named `name` (Hugging Face naming, no `bert.` prefix): a hash
/// of the name, so the same model loaded twice has the same ids. Optimiser states are keyed by
/// these ids, which is what lets a training checkpoint (weights + optimiser state) resume.
pub fn param_id(name: &str) -> ParamId {
    // FNV-1a, 64 bits.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    ParamId::from(h)
}

/// A trainable parameter with the stable id of `name` (see [`param_id`]).
pub fn named_param<const D: usize>(name: &str, value: Tensor<D>) -> Param<Tensor<D>> {
    let mut param = Param::from_tensor(value);
    param.id = param_id(name);
    param
}

/// Converts little-endian raw tensor bytes to f32.
pub(crate) fn decode_f32(dtype: safetensors::Dtype, data: &[u8]) -> Option<Vec<f32>> {
    use safetensors::Dtype;
    Some(match dtype {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        _ => return None,
    })
}

/// The shape of one group of tensors under one Hugging Face name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// `NAME.weight`, `[rows, width]`.
    Embedding { rows: usize, width: usize },
    /// `NAME.weight` `[d_out, d_in]` (PyTorch layout) and `NAME.bias` `[d_out]`.
    Linear { d_in: usize, d_out: usize },
    /// `NAME.weight` and `NAME.bias`, `[width]` each (`gamma`/`beta` in old checkpoints).
    LayerNorm { width: usize },
}

/// The one table of BERT's weight names (Hugging Face naming, no `bert.` prefix): every group
/// of tensors of a model shaped like `config`, in the order of the modules' fields. Loading,
/// saving and random initialisation all walk this table; nothing else spells a weight name.
fn weight_table(config: &BertConfig) -> Vec<(String, Group)> {
    let d = config.hidden_size;
    let ff = config.intermediate_size;
    let embedding = |rows| Group::Embedding { rows, width: d };
    let linear = |d_in, d_out| Group::Linear { d_in, d_out };
    let norm = Group::LayerNorm { width: d };
    let mut table = vec![
        (
            "embeddings.word_embeddings".to_string(),
            embedding(config.vocab_size),
        ),
        (
            "embeddings.position_embeddings".to_string(),
            embedding(config.max_position_embeddings),
        ),
        (
            "embeddings.token_type_embeddings".to_string(),
            embedding(config.type_vocab_size),
        ),
        ("embeddings.LayerNorm".to_string(), norm),
    ];
    for i in 0..config.num_hidden_layers {
        let p = format!("encoder.layer.{i}");
        table.extend([
            (format!("{p}.attention.self.query"), linear(d, d)),
            (format!("{p}.attention.self.key"), linear(d, d)),
            (format!("{p}.attention.self.value"), linear(d, d)),
            (format!("{p}.attention.output.dense"), linear(d, d)),
            (format!("{p}.attention.output.LayerNorm"), norm),
            (format!("{p}.intermediate.dense"), linear(d, ff)),
            (format!("{p}.output.dense"), linear(ff, d)),
            (format!("{p}.output.LayerNorm"), norm),
        ]);
    }
    table
}

/// A loaded group of the table.
enum Loaded {
    Embedding(Embedding),
    Linear(Linear),
    LayerNorm(LayerNorm),
}

/// A borrowed group of a model, in table order (for saving).
enum Held<'a> {
    Embedding(&'a Embedding),
    Linear(&'a Linear),
    LayerNorm(&'a LayerNorm),
}

/// The loaded groups, handed out in table order to the modules' fields.
struct Groups(std::vec::IntoIter<Loaded>);

impl Groups {
    fn embedding(&mut self) -> Embedding {
        match self.0.next() {
            Some(Loaded::Embedding(e)) => e,
            _ => unreachable!("weight_table and the modules' fields are in the same order"),
        }
    }

    fn linear(&mut self) -> Linear {
        match self.0.next() {
            Some(Loaded::Linear(l)) => l,
            _ => unreachable!("weight_table and the modules' fields are in the same order"),
        }
    }

    fn layer_norm(&mut self) -> LayerNorm {
        match self.0.next() {
            Some(Loaded::LayerNorm(n)) => n,
            _ => unreachable!("weight_table and the modules' fields are in the same order"),
        }
    }
}

impl BertModel {
    /// Builds the model from a model folder's `model.safetensors`.
    pub fn from_files(
        files: &crate::model_files::ModelFiles,
        config: &BertConfig,
        device: &Device,
    ) -> Result<Self> {
        use crate::model_files::WEIGHTS;
        Self::from_safetensors(
            files.required(WEIGHTS, "weights in safetensors format")?,
            &files.path_of(WEIGHTS),
            config,
            device,
        )
    }

    /// Builds the model from safetensors bytes, checking every tensor against `config`.
    pub fn from_safetensors(
        bytes: &[u8],
        path: &Path,
        config: &BertConfig,
        device: &Device,
    ) -> Result<Self> {
        let loaded = load_groups(bytes, path, config, device)?;
        let mut groups = Groups(loaded.into_iter());
        let embeddings = BertEmbeddings {
            word: groups.embedding(),
            position: groups.embedding(),
            token_type: groups.embedding(),
            norm: groups.layer_norm(),
        };
        let layers = (0..config.num_hidden_layers)
            .map(|_| BertLayer {
                attention: BertAttention {
                    query: groups.linear(),
                    key: groups.linear(),
                    value: groups.linear(),
                    output: groups.linear(),
                    norm: groups.layer_norm(),
                    heads: config.num_attention_heads,
                },
                intermediate: groups.linear(),
                output: groups.linear(),
                norm: groups.layer_norm(),
                int8: None,
            })
            .collect();
        Ok(BertModel {
            embeddings,
            layers,
            config: config.clone(),
            attention: Default::default(),
        })
    }

    /// The model's groups in [`weight_table`] order.
    fn held(&self) -> Vec<Held<'_>> {
        let e = &self.embeddings;
        let mut out = vec![
            Held::Embedding(&e.word),
            Held::Embedding(&e.position),
            Held::Embedding(&e.token_type),
            Held::LayerNorm(&e.norm),
        ];
        for layer in &self.layers {
            let a = &layer.attention;
            out.extend([
                Held::Linear(&a.query),
                Held::Linear(&a.key),
                Held::Linear(&a.value),
                Held::Linear(&a.output),
                Held::LayerNorm(&a.norm),
                Held::Linear(&layer.intermediate),
                Held::Linear(&layer.output),
                Held::LayerNorm(&layer.norm),
            ]);
        }
        out
    }
}

/// One named tensor in Hugging Face layout: `(name, shape, values)`.
pub type NamedTensor = (String, Vec<usize>, Vec<f32>);

impl BertModel {
    /// Every weight under its Hugging Face name (no `bert.` prefix), linear weights transposed
    /// back to PyTorch's `[out, in]`: the inverse of [`BertModel::from_safetensors`].
    pub fn named_tensors(&self) -> Result<Vec<NamedTensor>> {
        let mut out = Vec::new();
        for ((name, _), held) in weight_table(&self.config).iter().zip(self.held()) {
            match held {
                Held::Embedding(e) => push_param(&mut out, &format!("{name}.weight"), &e.weight)?,
                Held::Linear(l) => push_linear(&mut out, name, l)?,
                Held::LayerNorm(n) => push_norm(&mut out, name, n)?,
            }
        }
        Ok(out)
    }

    /// The weights as a `model.safetensors` file. Tensors of `base` (the file the model was
    /// loaded from) that the engine does not use, such as BERT's pooler, are copied unchanged,
    /// so other tools load the result exactly like the original.
    pub fn to_safetensors(&self, base: Option<&[u8]>) -> Result<Vec<u8>> {
        let mut tensors = self.named_tensors()?;
        if let Some(base) = base {
            let original = SafeTensors::deserialize(base)
                .map_err(|e| EngineError::Invalid(format!("base weights: {e}")))?;
            let prefix = if original
                .names()
                .iter()
                .any(|n| n.starts_with("bert.embeddings."))
            {
                "bert."
            } else {
                ""
            };
            let ours: std::collections::BTreeSet<String> =
                tensors.iter().map(|(n, _, _)| n.clone()).collect();
            for name in original.names() {
                let bare = name.strip_prefix(prefix).unwrap_or(name);
                if ours.contains(bare) {
                    continue;
                }
                let view = original
                    .tensor(name)
                    .map_err(|e| EngineError::Invalid(format!("base tensor '{name}': {e}")))?;
                // Integer buffers (e.g. position_ids) are not weights; dropping them is what
                // transformers itself does on save.
                if let Some(values) = decode_f32(view.dtype(), view.data()) {
                    tensors.push((bare.to_string(), view.shape().to_vec(), values));
                }
            }
        }
        crate::safetensors_io::write_f32(&tensors)
    }

    /// A freshly initialised model of shape `config` (BERT's initialisation: normal weights with
    /// standard deviation 0.02, zero biases, unit layer norms), deterministic in `seed`.
    pub fn random(config: &BertConfig, seed: u64, device: &Device) -> Result<Self> {
        let bytes = random_safetensors(config, seed)?;
        Self::from_safetensors(&bytes, Path::new("<random>"), config, device)
    }
}

/// The `model.safetensors` bytes of [`BertModel::random`].
pub fn random_safetensors(config: &BertConfig, seed: u64) -> Result<Vec<u8>> {
    let mut rng = crate::rng::SplitMix64::new(seed);
    let mut normal = |shape: Vec<usize>| {
        let n = shape.iter().product();
        let values = (0..n)
            .map(|_| rng.normal() as f32 * 0.02)
            .collect::<Vec<f32>>();
        (shape, values)
    };
    let constant = |width: usize, v: f32| (vec![width], vec![v; width]);
    let mut tensors: Vec<NamedTensor> = Vec::new();
    let mut push =
        |name: String, (shape, values): (Vec<usize>, Vec<f32>)| tensors.push((name, shape, values));
    for (name, group) in weight_table(config) {
        match group {
            Group::Embedding { rows, width } => {
                push(format!("{name}.weight"), normal(vec![rows, width]))
            }
            Group::Linear { d_in, d_out } => {
                push(format!("{name}.weight"), normal(vec![d_out, d_in]));
                push(format!("{name}.bias"), constant(d_out, 0.0));
            }
            Group::LayerNorm { width } => {
                push(format!("{name}.weight"), constant(width, 1.0));
                push(format!("{name}.bias"), constant(width, 0.0));
            }
        }
    }
    crate::safetensors_io::write_f32(&tensors)
}

fn param_values<const D: usize>(param: &Param<Tensor<D>>) -> Result<(Vec<usize>, Vec<f32>)> {
    let t = param.val();
    let shape = t.dims().to_vec();
    let values = t
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| EngineError::Invalid(format!("reading weights back: {e:?}")))?;
    Ok((shape, values))
}

fn push_param<const D: usize>(
    out: &mut Vec<NamedTensor>,
    name: &str,
    param: &Param<Tensor<D>>,
) -> Result<()> {
    let (shape, values) = param_values(param)?;
    out.push((name.to_string(), shape, values));
    Ok(())
}

fn push_linear(out: &mut Vec<NamedTensor>, name: &str, linear: &Linear) -> Result<()> {
    // burn stores [in, out]; PyTorch [out, in].
    let (shape, values) = param_values(&linear.weight)?;
    let (d_in, d_out) = (shape[0], shape[1]);
    let mut t = vec![0.0f32; values.len()];
    for i in 0..d_in {
        for o in 0..d_out {
            t[o * d_in + i] = values[i * d_out + o];
        }
    }
    out.push((format!("{name}.weight"), vec![d_out, d_in], t));
    if let Some(bias) = &linear.bias {
        push_param(out, &format!("{name}.bias"), bias)?;
    }
    Ok(())
}

fn push_norm(out: &mut Vec<NamedTensor>, name: &str, norm: &LayerNorm) -> Result<()> {
    push_param(out, &format!("{name}.weight"), &norm.gamma)?;
    if let Some(beta) = &norm.beta {
        push_param(out, &format!("{name}.bias"), beta)?;
    }
    Ok(())
}

/// Every group of `config`'s weight table read from the safetensors `bytes` and checked, in
/// table order; a file with more layers than `config` declares is refused.
fn load_groups(
    bytes: &[u8],
    path: &Path,
    config: &BertConfig,
    device: &Device,
) -> Result<Vec<Loaded>> {
    let r = WeightReader::new(bytes, path, device)?;
    let eps = config.layer_norm_eps;
    let loaded = weight_table(config)
        .iter()
        .map(|(name, group)| {
            Ok(match *group {
                Group::Embedding { rows, width } => {
                    Loaded::Embedding(r.embedding(name, rows, width)?)
                }
                Group::Linear { d_in, d_out } => Loaded::Linear(r.linear(name, d_in, d_out)?),
                Group::LayerNorm { width } => Loaded::LayerNorm(r.layer_norm(name, width, eps)?),
            })
        })
        .collect::<Result<Vec<Loaded>>>()?;
    let extra = format!(
        "encoder.layer.{}.attention.self.query.weight",
        config.num_hidden_layers
    );
    if r.has(&extra) {
        return Err(EngineError::model(
            path,
            format!(
                "the file has more than the {} layers config.json declares",
                config.num_hidden_layers
            ),
        ));
    }
    Ok(loaded)
}
