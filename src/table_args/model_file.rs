//! A model's `config.json` or `.gguf` file as the Check view draws it: what `poslab config`
//! prints of it (each setting with its field, the warnings), and for each layer type's RoPE
//! the wavelength of every pair beside the unscaled RoPE of the same base and width.

use std::path::{Path, PathBuf};

use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling};
use crate::import::model_config::RopeLayer;

/// One layer type's wavelengths.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerWavelengths {
    /// The layer type (`full_attention`), or the model's name when it has one RoPE.
    pub name: String,
    /// `2π / θ_i` for each pair, as the model runs it at its full context.
    pub scaled: Vec<f64>,
    /// The same without the scaling (and without frequencies given outright): base^(2i/R) 2π.
    pub unscaled: Vec<f64>,
    /// Whether a scaling changes any pair.
    pub is_scaled: bool,
}

/// A model file read for the Check view.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFile {
    pub path: PathBuf,
    /// What `poslab config` prints.
    pub text: String,
    pub layers: Vec<LayerWavelengths>,
    /// The context the model runs at (`max_position_embeddings`, `context_length`).
    pub context: Option<usize>,
    /// How many warnings the file raised.
    pub warnings: usize,
}

/// Whether `path` names a model's config (`.json`) or a GGUF file, by its extension.
pub fn is_model_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json") || e.eq_ignore_ascii_case("gguf"))
}

/// Reads `path` and works out its layer types' wavelengths (a worker's job: a GGUF file is
/// read in part, a config parsed).
pub fn read(path: &Path) -> Result<ModelFile, String> {
    let config = crate::table_args::config::read_config(path).map_err(|e| e.message)?;
    if config.rope_layers.is_empty() {
        return Err(format!(
            "{}: {} does not use RoPE, so there are no frequencies to draw (poslab config {} says what it uses)",
            path.display(),
            config.name,
            path.display()
        ));
    }
    let layers = config
        .rope_layers
        .iter()
        .map(|layer| wavelengths(layer, &config.name, config.context))
        .collect::<Result<Vec<_>, String>>()?;
    Ok(ModelFile {
        path: path.to_owned(),
        text: crate::table_args::config::describe(&config, path),
        layers,
        context: config.context,
        warnings: config.lints.len(),
    })
}

fn wavelengths(
    layer: &RopeLayer,
    model: &str,
    context: Option<usize>,
) -> Result<LayerWavelengths, String> {
    let name = layer.layer_type.clone().unwrap_or_else(|| model.to_owned());
    layer
        .freqs
        .validate(layer.head_dim, layer.base)
        .map_err(|e| format!("{name}: {e}"))?;
    let rotary = layer.freqs.rotary(layer.head_dim);
    let plain = RopeFrequencies {
        rotary_dim: Some(rotary),
        scaling: RopeScaling::default(),
        given: None,
    };
    let seq = context.unwrap_or(1).max(1);
    let turn = |inv: Vec<f64>| -> Vec<f64> {
        inv.into_iter().map(|w| std::f64::consts::TAU / w).collect()
    };
    let scaled = turn(layer.freqs.inv_freq(layer.head_dim, layer.base, seq));
    let unscaled = turn(plain.inv_freq(layer.head_dim, layer.base, seq));
    let is_scaled = scaled
        .iter()
        .zip(&unscaled)
        .any(|(a, b)| (a - b).abs() > 1e-9 * b);
    Ok(LayerWavelengths {
        name,
        scaled,
        unscaled,
        is_scaled,
    })
}
