//! The corkscrew's figure: RoPE's helices in 3D, projected by the view's camera into vector
//! lines, with the query's and key's positions marked.

use super::FigureArgs;
use super::options::{self, Words, count};
use super::{
    Axis, Content, Drawn, FigureError, FigureKind, FigureStyle, Panel, ProjectedDot,
    ProjectedLabel, ProjectedLine,
};
use crate::encoding::PairLayout;
use crate::encoding::rope::pair_scores;
use crate::scene::camera::OrbitCamera;
use crate::scene::corkscrew::{
    self, CorkscrewParams, MAX_DRAWN_POSITIONS, PairSelection, ProbeVector, SceneLayout,
};
use crate::table_args::CliError;

/// The corkscrew figure's own options.
#[derive(Debug, Clone, clap::Args)]
pub struct CorkscrewOptions {
    /// corkscrew: the pairs to draw, as a list such as 0,4,8-12 or all (default: every 8th)
    #[arg(long, value_name = "LIST")]
    pub pairs: Option<String>,

    /// corkscrew: positions drawn along the axis, from --start (1 to 65536, and at most --seq;
    /// default 256 or --seq)
    #[arg(long, value_name = "N")]
    pub positions: Option<i64>,

    /// corkscrew: the query position m, start to start+seq-1 (default start+12)
    #[arg(long, value_name = "M")]
    pub m: Option<i64>,

    /// corkscrew: the key position n, start to start+seq-1 (default start+4)
    #[arg(long, value_name = "N")]
    pub n: Option<i64>,

    /// corkscrew: the query vector: unit-pairs, ones or random:SEED
    #[arg(long, value_name = "VECTOR", value_parser = crate::scene::corkscrew::parse_probe)]
    pub query_vector: Option<ProbeVector>,

    /// corkscrew: the key vector: unit-pairs, ones or random:SEED
    #[arg(long, value_name = "VECTOR", value_parser = crate::scene::corkscrew::parse_probe)]
    pub key_vector: Option<ProbeVector>,

    /// corkscrew: the camera as YAW,PITCH,DISTANCE[,X,Y,Z] (degrees, degrees, world units,
    /// and the point it looks at), as the app's export dialog prints it (default: framing the
    /// scene)
    #[arg(long, value_name = "YAW,PITCH,DIST", allow_hyphen_values = true)]
    pub camera: Option<String>,
}

/// Helix points per projected line, at most.
const MAX_LINE_POINTS: usize = 20_000;

/// The corkscrew's parameters and camera.
#[derive(Debug, Clone, PartialEq)]
pub struct CorkscrewFigure {
    pub dim: usize,
    pub base: f64,
    pub layout: PairLayout,
    pub pairs: Vec<usize>,
    pub first_position: u64,
    pub position_count: usize,
    pub query: ProbeVector,
    pub key: ProbeVector,
    pub query_position: u64,
    pub key_position: u64,
    /// The context's length (positions start .. start + seq), which m and n lie in.
    pub seq: usize,
    /// `None`: the camera that frames the scene, as the app starts with.
    pub camera: Option<OrbitCamera>,
}

impl FigureKind for CorkscrewFigure {
    const OPTIONS: &'static [&'static str] = &[
        "seq",
        "dim",
        "base",
        "start",
        "layout",
        "pairs",
        "positions",
        "m",
        "n",
        "query_vector",
        "key_vector",
        "camera",
    ];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let seq = options::seq(args)?;
        let dim = options::dim(args)?;
        let base = options::base(args);
        let start = options::start(args)?;
        let layout = args.sinusoidal.layout.unwrap_or_default();
        if dim % 2 != 0 {
            return Err(CliError::usage(format!(
                "--dim {dim} is not allowed: RoPE needs an even dimension"
            )));
        }
        let selection = match args.corkscrew.pairs.as_deref() {
            None => PairSelection::EveryKth(8),
            Some("all") => PairSelection::All,
            Some(list) => PairSelection::List(list.to_owned()),
        };
        let asked = selection.pairs(dim / 2)?;
        let asked_count = asked.len();
        let (pairs, thinned) = corkscrew::thin_pairs(asked);
        if thinned {
            // Said, not done silently.
            crate::table_args::output::note(&format!(
                "note: --pairs selects {asked_count} pairs, more than the {} a figure draws: it draws {} of them, one in every {} ({}, {}, …, {}); name up to {} with --pairs to choose",
                corkscrew::MAX_HELICES,
                pairs.len(),
                asked_count.div_ceil(corkscrew::MAX_HELICES),
                pairs[0],
                pairs[1],
                pairs[pairs.len() - 1],
                corkscrew::MAX_HELICES
            ));
        }
        let most = seq.min(MAX_DRAWN_POSITIONS);
        let positions = count(
            "positions",
            args.corkscrew.positions,
            most.min(256),
            1..=most,
        )?;
        let (first, last) = (start as usize, start as usize + seq - 1);
        let m = count("m", args.corkscrew.m, first + 12.min(seq - 1), first..=last)? as u64;
        let n = count("n", args.corkscrew.n, first + 4.min(seq - 1), first..=last)? as u64;
        let camera = args
            .corkscrew
            .camera
            .as_deref()
            .map(parse_camera)
            .transpose()?;
        Ok(Self {
            dim,
            base,
            layout,
            pairs,
            first_position: start,
            position_count: positions,
            query: args
                .corkscrew
                .query_vector
                .unwrap_or(ProbeVector::UnitPairs),
            key: args.corkscrew.key_vector.unwrap_or(ProbeVector::UnitPairs),
            query_position: m,
            key_position: n,
            seq,
            camera,
        })
    }

    fn write_options(&self, words: &mut Words) {
        let vector = |v: ProbeVector| match v {
            ProbeVector::UnitPairs => "unit-pairs".to_owned(),
            ProbeVector::Ones => "ones".to_owned(),
            ProbeVector::Random(seed) => format!("random:{seed}"),
        };
        let pairs: Vec<String> = self.pairs.iter().map(|p| p.to_string()).collect();
        words.option("seq", self.seq);
        words.option("dim", self.dim);
        words.option("base", self.base);
        words.option("start", self.first_position);
        words.option("layout", self.layout.rope_name());
        words.option("pairs", pairs.join(","));
        words.option("positions", self.position_count);
        words.option("m", self.query_position);
        words.option("n", self.key_position);
        words.option("query-vector", vector(self.query));
        words.option("key-vector", vector(self.key));
        if let Some(camera) = self.camera {
            let mut parts = vec![
                camera.yaw_rad.to_degrees(),
                camera.pitch_rad.to_degrees(),
                camera.distance,
            ];
            if camera.target != glam::Vec3::ZERO {
                parts.extend(camera.target.to_array());
            }
            let parts: Vec<String> = parts.iter().map(|v| format!("{v}")).collect();
            // One word, so that a negative yaw is not read as an option.
            words.joined("camera", parts.join(","));
        }
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        draw_corkscrew(self, style)
    }
}

/// The corkscrew's helices projected by its camera: vectors in a vector figure.
fn draw_corkscrew(figure: &CorkscrewFigure, style: &FigureStyle) -> Result<Drawn, FigureError> {
    let query = figure.query.values(figure.dim, figure.layout);
    let key = figure.key.values(figure.dim, figure.layout);
    let scene = corkscrew::build(&CorkscrewParams {
        dim: figure.dim,
        base: figure.base,
        layout: figure.layout,
        pairs: &figure.pairs,
        first_position: figure.first_position,
        position_count: figure.position_count,
        query: &query,
        // A key other than the query has helices of its own, as in the app.
        key: Some(&key),
    })?;
    let layout = SceneLayout::of(&scene);
    let plot = super::draw::single_projected_plot_size(style.width, style.height);
    let aspect = (plot[0] / plot[1].max(1.0)) as f32;
    let camera = figure
        .camera
        .unwrap_or_else(|| OrbitCamera::framing(layout.half_extent(), aspect));
    let size = [plot[0] as f32, plot[1] as f32];
    let project = |point: glam::Vec3| {
        camera
            .project(point, size)
            .map(|[x, y]| [f64::from(x) / plot[0], f64::from(y) / plot[1]])
    };
    let scores = pair_scores(
        &query,
        &key,
        figure.layout,
        figure.base,
        figure.query_position,
        figure.key_position,
    )?;
    let count = scene.helices.len();
    let mut lines = Vec::new();
    let mut dots = Vec::new();
    let mut labels = Vec::new();
    for (index, helix) in scene.helices.iter().enumerate() {
        let color = helix_color(index, count);
        let vertices = &scene.vertices[helix.vertices.clone()];
        let step = vertices.len().div_ceil(MAX_LINE_POINTS).max(1);
        let axis: Vec<[f64; 2]> = [0.0, (scene.position_count.max(2) - 1) as f32]
            .iter()
            .filter_map(|&x| project(layout.world(index, [x, 0.0, 0.0])))
            .collect();
        lines.push(ProjectedLine {
            points: axis,
            color: [170, 170, 170],
            width: 0.8,
        });
        lines.push(ProjectedLine {
            points: vertices
                .iter()
                .step_by(step)
                .filter_map(|v| project(layout.world(index, v.position)))
                .collect(),
            color,
            width: 1.2,
        });
        if let Some(key_helix) = scene.key_helices.get(index) {
            // Fainter, as the app draws it: the key's rings lie on this one.
            let faint = color.map(|c| (f32::from(c) * 0.55) as u8);
            lines.push(ProjectedLine {
                points: scene.vertices[key_helix.vertices.clone()]
                    .iter()
                    .step_by(step)
                    .filter_map(|v| project(layout.world(index, v.position)))
                    .collect(),
                color: faint,
                width: 1.0,
            });
        }
        let inside = |p: u64| {
            p >= scene.first_position && p - scene.first_position < scene.position_count as u64
        };
        let score = &scores[helix.pair];
        for (position, (a, b), ring) in [
            (figure.key_position, score.key, true),
            (figure.query_position, score.query, false),
        ] {
            if inside(position) {
                let x = (position - scene.first_position) as f32;
                if let Some(at) = project(layout.world(index, [x, a as f32, b as f32])) {
                    dots.push(ProjectedDot { at, color, ring });
                }
            }
        }
        if let Some(at) = project(layout.world(index, [0.0, 0.0, 0.0]) - glam::Vec3::X * 0.4) {
            labels.push(ProjectedLabel {
                at,
                text: format!("pair {}", helix.pair),
                color,
            });
        }
    }
    for (point, text) in layout.position_labels(&scene) {
        if let Some(at) = project(point) {
            labels.push(ProjectedLabel {
                at,
                text,
                color: [60, 60, 60],
            });
        }
    }
    let total: f64 = scores.iter().map(|s| s.score).sum();
    let panel = Panel {
        equal_aspect: false,
        colorbar: None,
        title: format!(
            "q_m · k_n = {total:.9} at m = {}, n = {}",
            figure.query_position, figure.key_position
        ),
        x: Axis::new("", 0.0, 1.0).hidden(),
        y: Axis::new("", 0.0, 1.0).hidden(),
        content: Content::Projected {
            lines,
            dots,
            labels,
        },
    };
    let layout_name = match figure.layout {
        PairLayout::Interleaved => "interleaved pairs (2i, 2i+1)",
        PairLayout::Half => "half pairs (i, i + d/2)",
    };
    Ok(Drawn::new(
        format!(
            "RoPE corkscrew, d = {}, base {}, {layout_name}, positions {}..{}",
            figure.dim,
            figure.base,
            scene.first_position,
            scene.first_position + scene.position_count as u64 - 1
        ),
        vec![panel],
    ))
}

/// The colour of the `k`-th of `n` helices (as the app draws them).
pub fn helix_color(k: usize, n: usize) -> [u8; 3] {
    crate::scene::series_color(k, n)
}

/// `YAW,PITCH,DISTANCE` in degrees, degrees and world units, looking at the scene's centre,
/// or at `X,Y,Z` given after them.
fn parse_camera(text: &str) -> Result<OrbitCamera, CliError> {
    let bad = || {
        CliError::usage(format!(
            "--camera {text} is not allowed: give YAW,PITCH,DISTANCE in degrees, degrees \
             (-85 to 85) and world units, e.g. -25.8,17.2,40, optionally followed by X,Y,Z"
        ))
    };
    let parts: Vec<f32> = text
        .split(',')
        .map(|p| p.trim().parse::<f32>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let (angles, target) = match parts.as_slice() {
        [yaw, pitch, distance] => ([*yaw, *pitch, *distance], glam::Vec3::ZERO),
        [yaw, pitch, distance, x, y, z] => ([*yaw, *pitch, *distance], glam::Vec3::new(*x, *y, *z)),
        _ => return Err(bad()),
    };
    let [yaw, pitch, distance] = angles;
    let usable = yaw.is_finite()
        && pitch.abs() <= 85.0
        && distance > 0.0
        && distance.is_finite()
        && target.is_finite();
    if !usable {
        return Err(bad());
    }
    Ok(OrbitCamera {
        target,
        yaw_rad: yaw.to_radians(),
        pitch_rad: pitch.to_radians(),
        distance,
    })
}
