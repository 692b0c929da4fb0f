//! The WGSL sources, loaded at compile time. WGSL has no `#include`, so each module is the
//! shared kernel code (and the exact fixed-point sum) followed by its family's file.

/// A shader module: its label and source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShaderSource {
    pub label: &'static str,
    pub source: &'static str,
}

macro_rules! shader {
    // One 32-bit word an invocation (common/output_words.wgsl).
    ($label:literal, $($file:literal),+) => {
        shader!(@with "common/output_words.wgsl", $label, $($file),+)
    };
    // Four words an invocation, one 16-byte store (common/output_quads.wgsl).
    (quads $label:literal, $($file:literal),+) => {
        shader!(@with "common/output_quads.wgsl", $label, $($file),+)
    };
    (@with $output:literal, $label:literal, $($file:literal),+) => {
        ShaderSource {
            label: $label,
            source: concat!(
                include_str!("../../../shaders/common/kernel.wgsl"),
                "\n",
                include_str!(concat!("../../../shaders/", $output)),
                "\n",
                include_str!("../../../shaders/common/fixed_sum.wgsl"),
                $("\n", include_str!(concat!("../../../shaders/", $file))),+
            ),
        }
    };
}

pub const SINUSOIDAL: ShaderSource = shader!(
    "sinusoidal.wgsl",
    "common/torch_f32.wgsl",
    "sinusoidal_columns.wgsl",
    "sinusoidal.wgsl"
);
/// The sinusoidal table four columns an invocation (see `Plan::wide`).
pub const SINUSOIDAL_WIDE: ShaderSource = shader!(
    quads "sinusoidal_wide.wgsl",
    "sinusoidal_columns.wgsl",
    "sinusoidal_wide.wgsl"
);
pub const TOEPLITZ: ShaderSource = shader!("toeplitz.wgsl", "toeplitz.wgsl");
pub const ROPE: ShaderSource = shader!("rope.wgsl", "common/torch_f32.wgsl", "rope.wgsl");
pub const ALIBI: ShaderSource = shader!("alibi.wgsl", "grid.wgsl", "alibi.wgsl");
pub const GRID: ShaderSource = shader!("grid.wgsl", "grid.wgsl");
pub const ROPE_2D: ShaderSource = shader!("rope2d.wgsl", "rope2d.wgsl");
pub const RELATIVE: ShaderSource = shader!("relative.wgsl", "relative.wgsl");
pub const BINARY: ShaderSource = shader!("binary.wgsl", "binary.wgsl");
/// Stores only, for `poslab bench`'s ceiling.
pub const FILL: ShaderSource = shader!("fill.wgsl", "fill.wgsl");
/// Stores only, four words an invocation.
pub const FILL_WIDE: ShaderSource = shader!(quads "fill_wide.wgsl", "fill_wide.wgsl");

/// The reduction of heatmap cells to pixels, which has bindings of its own.
pub const REDUCE: ShaderSource = ShaderSource {
    label: "reduce.wgsl",
    source: concat!(
        include_str!("../../../shaders/common/fixed_sum.wgsl"),
        "\n",
        include_str!("../../../shaders/reduce.wgsl")
    ),
};

/// The RoPE corkscrew's render pipelines (the 3D canvas).
pub const CORKSCREW: ShaderSource = ShaderSource {
    label: "corkscrew.wgsl",
    source: include_str!("../../../shaders/corkscrew.wgsl"),
};

/// The copy of an offscreen picture into egui's render pass.
pub const BLIT: ShaderSource = ShaderSource {
    label: "blit.wgsl",
    source: include_str!("../../../shaders/blit.wgsl"),
};

/// Every module, for validation.
pub const ALL: [ShaderSource; 14] = [
    SINUSOIDAL,
    SINUSOIDAL_WIDE,
    TOEPLITZ,
    ROPE,
    ALIBI,
    GRID,
    ROPE_2D,
    RELATIVE,
    BINARY,
    FILL,
    FILL_WIDE,
    REDUCE,
    CORKSCREW,
    BLIT,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses and validates every shader with naga, and translates it to SPIR-V as wgpu does
    /// for Vulkan (naga's translator has failed on valid WGSL before), with no GPU.
    #[test]
    fn every_shader_parses_validates_and_translates() {
        for shader in ALL {
            let module = naga::front::wgsl::parse_str(shader.source).unwrap_or_else(|e| {
                panic!("{}: {}", shader.label, e.emit_to_string(shader.source))
            });
            let info = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {e:?}", shader.label));
            naga::back::spv::write_vec(&module, &info, &Default::default(), None)
                .unwrap_or_else(|e| panic!("{}: {e}", shader.label));
        }
    }

    /// No shader makes an infinity or a NaN from a constant: WGSL refuses them in constant
    /// expressions, and where naga lets `bitcast<f32>` of a constant's bits through, browsers'
    /// compiler (Tint) refuses the whole shader, and every dispatch of it reads back nothing
    /// (the web page's reduced heatmaps were all zero so).
    #[test]
    fn no_shader_makes_an_infinity_from_a_constant() {
        for shader in ALL {
            let constants: Vec<(&str, u32)> = shader
                .source
                .lines()
                .filter_map(|line| {
                    let rest = line.trim().strip_prefix("const ")?;
                    let (name, value) = rest.split_once(':')?;
                    let value = value.split_once('=')?.1.trim().trim_end_matches(';');
                    let digits = value.strip_prefix("0x")?.trim_end_matches('u');
                    Some((name.trim(), u32::from_str_radix(digits, 16).ok()?))
                })
                .collect();
            for (name, bits) in constants {
                let not_finite = !f32::from_bits(bits).is_finite();
                assert!(
                    !(not_finite && shader.source.contains(&format!("bitcast<f32>({name})"))),
                    "{}: bitcast<f32>({name}) is {} at compile time",
                    shader.label,
                    f32::from_bits(bits)
                );
            }
        }
    }

    /// The sizes that a shader and the code dispatching it must agree on.
    #[test]
    fn shaders_and_dispatches_agree_on_their_sizes() {
        use super::super::reduce;
        for (shader, line) in [
            (
                SINUSOIDAL,
                format!(
                    "const MEAN_ROWS: u32 = {}u;",
                    reduce::MEAN_ROWS_PER_INVOCATION
                ),
            ),
            (
                SINUSOIDAL,
                format!("const BLOCK_RUN: u32 = {}u;", reduce::BLOCKS_PER_INVOCATION),
            ),
        ] {
            assert!(
                shader.source.lines().any(|l| l == line),
                "{} lacks `{line}`",
                shader.label
            );
        }
    }
}
