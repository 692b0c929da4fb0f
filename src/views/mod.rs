//! One file per view. A view draws; the engines compute what it asks for.

pub mod alibi;
pub mod check;
pub mod context;
pub mod corkscrew;
pub mod dot_decay;
pub mod explain;
pub mod learned;
pub mod patches;
pub mod relative;
pub mod sinusoidal;
pub mod tour;

use serde::{Deserialize, Serialize};

use crate::app::engine::AppEngine;
use crate::app::params::{SharedParam, SharedParams};
use crate::app::status::Status;
use crate::widgets::colormap::Colormap;

/// What every view draws with: the shared parameters, the colour map, the engine that computes
/// what it shows, and the status bar it reports to.
pub struct ViewContext<'a> {
    pub shared: &'a SharedParams,
    pub colormap: Colormap,
    /// What a heatmap pixel covering several cells shows.
    pub reduce: crate::engine::reduce::Reduce,
    pub engine: &'a AppEngine,
    pub status: &'a mut Status,
    /// A change to the shared parameters a view asks for (a control of its own that is one of
    /// them, like the corkscrew's pairing), applied after it has drawn.
    pub shared_edit: Option<SharedParams>,
}

/// A view of the app.
pub trait View: std::any::Any {
    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>);

    /// The view's figure and the table behind it, as they are now, for export; `None` for a
    /// view with nothing to export.
    fn export(&self, shared: &SharedParams) -> Option<ViewExport>;

    /// Whether a table dropped on the window is this view's to open (otherwise the Check view
    /// opens it).
    fn takes_dropped_tables(&self) -> bool {
        false
    }
}

/// Writes a view (as `Any`) to storage under a key.
type SaveView = fn(&dyn std::any::Any, &mut dyn eframe::Storage, &str);

/// A view in the registry: the view, what it is, and how its own settings are saved.
pub struct Registered {
    pub kind: ViewKind,
    pub view: Box<dyn View>,
    /// Writes the view's settings under its key; `None` for a view that keeps none.
    save: Option<SaveView>,
}

impl Registered {
    /// A view whose settings survive a restart, read back from `storage` (each view under a
    /// key of its own, so that one that no longer reads back costs only that view its
    /// settings).
    fn saved<V>(kind: ViewKind, storage: Option<&dyn eframe::Storage>) -> Self
    where
        V: View + Default + serde::Serialize + serde::de::DeserializeOwned,
    {
        let view: V = storage
            .and_then(|storage| eframe::get_value(storage, &view_key(kind)))
            .unwrap_or_default();
        Self {
            kind,
            view: Box::new(view),
            save: Some(|view, storage, key| {
                if let Some(view) = view.downcast_ref::<V>() {
                    eframe::set_value(storage, key, view);
                }
            }),
        }
    }

    /// A view that keeps no settings between runs.
    fn unsaved<V: View + Default>(kind: ViewKind) -> Self {
        Self {
            kind,
            view: Box::new(V::default()),
            save: None,
        }
    }

    /// Writes the view's settings to `storage`.
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        if let Some(save) = self.save {
            let view: &dyn std::any::Any = self.view.as_ref();
            save(view, storage, &view_key(self.kind));
        }
    }
}

/// The key a view's own settings are saved under.
pub fn view_key(view: ViewKind) -> String {
    format!("{}.view.{view:?}", crate::app::STATE_KEY)
}

/// Every view, in the order the picker lists them, with its settings read back from
/// `storage`: adding a view is its module and one line here (and its [`ViewKind`]).
pub fn registry(storage: Option<&dyn eframe::Storage>) -> Vec<Registered> {
    vec![
        Registered::saved::<tour::TourView>(ViewKind::Tour, storage),
        Registered::saved::<sinusoidal::SinusoidalView>(ViewKind::Sinusoidal, storage),
        Registered::saved::<dot_decay::DotDecayView>(ViewKind::DotDecay, storage),
        Registered::saved::<relative::RelativeView>(ViewKind::Relative, storage),
        Registered::saved::<alibi::AlibiView>(ViewKind::Alibi, storage),
        Registered::saved::<corkscrew::CorkscrewView>(ViewKind::Corkscrew, storage),
        Registered::saved::<patches::PatchView>(ViewKind::Patches, storage),
        Registered::saved::<learned::LearnedView>(ViewKind::Learned, storage),
        Registered::saved::<context::ContextView>(ViewKind::Context, storage),
        Registered::unsaved::<check::CheckView>(ViewKind::Check),
    ]
}

/// What a view exports: its figure, and the table behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewExport {
    pub figure: crate::export::figure::FigureSpec,
    /// `None` where the data is a file the user has (the Check view).
    pub data: Option<crate::engine::TableSpec>,
    /// A file name stem for both, e.g. `alibi_head3`.
    pub name: String,
}

/// The views the picker offers (and `poslab app --view` names, in kebab case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
pub enum ViewKind {
    /// The sinusoidal table as a heatmap
    #[default]
    Sinusoidal,
    /// Dot products between positions, and their decay
    DotDecay,
    /// ALiBi's biases, per head
    Alibi,
    /// 2D patch maps of vision transformers
    Patches,
    /// RoPE's rotations in 3D
    Corkscrew,
    /// Context extension: PI, NTK, YaRN, Llama 3 and more
    Context,
    /// Check a table computed elsewhere
    Check,
    /// Relative positions: offsets, clipping, T5 buckets, the skew trick
    Relative,
    /// From counting to sinusoids: the guided tour
    Tour,
    /// Learned position tables
    Learned,
}

impl ViewKind {
    /// Every view, in the picker's order: the registry's.
    pub fn all() -> Vec<ViewKind> {
        registry(None).iter().map(|entry| entry.kind).collect()
    }

    pub fn label(self) -> &'static str {
        match self {
            ViewKind::Sinusoidal => "Sinusoidal table",
            ViewKind::DotDecay => "Dot-product decay",
            ViewKind::Alibi => "ALiBi",
            ViewKind::Patches => "2D patch maps",
            ViewKind::Corkscrew => "RoPE corkscrew (3D)",
            ViewKind::Context => "Context extension",
            ViewKind::Check => "Check a table",
            ViewKind::Relative => "Relative positions",
            ViewKind::Tour => "From counting to sinusoids",
            ViewKind::Learned => "Learned tables",
        }
    }

    /// What to do first in this view, in one line (the status bar shows it).
    pub fn hint(self) -> &'static str {
        match self {
            ViewKind::Sinusoidal => {
                "Click a column to plot it · scroll to zoom, drag to pan, double-click to reset · hover a cell for its value"
            }
            ViewKind::DotDecay => {
                "Move the anchor row · pin a curve, then change the base or dimension to compare · hover the matrix for PE[i]·PE[j]"
            }
            ViewKind::Alibi => {
                "Pick a head, or All heads to compare them · move the query to see what it attends to · hover for the bias"
            }
            ViewKind::Corkscrew => {
                "Drag to orbit, scroll to zoom · Play (Space) or the arrow keys move the query · lock the offset to see the score stay put"
            }
            ViewKind::Patches => {
                "Click a patch to make it the query · pick what each map shows · hover a patch for its value"
            }
            ViewKind::Context => {
                "Pick a model and a target length L' · tick methods to compare · hover a pair for its wavelengths, the map for its angle"
            }
            ViewKind::Check => {
                "Open (Ctrl+O) or drop a .npy, .csv or .safetensors table · Identify it, or compare it with a kind"
            }
            ViewKind::Learned => {
                "Open (button), type or drop a .npy or .safetensors position table · hover the similarity for two rows' cosine · 3D: drag to orbit"
            }
            ViewKind::Tour => {
                "Step with Prev and Next, the step list or the arrow keys · every slider works in every step that uses it · hover a cell for its value"
            }
            ViewKind::Relative => {
                "Pick a scheme above the boards · hover a cell for what it holds · skew trick: the arrow keys step, Space plays"
            }
        }
    }

    /// Why this view does not use a shared parameter, or `None` when it does: its control is
    /// disabled with this as the tooltip.
    pub fn unused_reason(self, param: SharedParam) -> Option<&'static str> {
        use SharedParam::*;
        match (self, param) {
            (ViewKind::Sinusoidal | ViewKind::DotDecay, Heads) => {
                Some("Sinusoidal tables have no heads: every head adds the same table")
            }
            (ViewKind::Alibi, Dim | Base | Layout | Spacing) => {
                Some("ALiBi has no frequencies: its bias is -m·|i - j| with one slope m per head")
            }
            (ViewKind::Alibi, Start) => {
                Some("ALiBi depends only on the distance i - j, not on where the sequence starts")
            }
            (ViewKind::Corkscrew, Heads) => {
                Some("RoPE rotates every head's query and key the same way")
            }
            (ViewKind::Corkscrew, Spacing) => {
                Some("RoPE's frequencies are base^(-2i/d) (Vaswani spacing) in every reference")
            }
            (ViewKind::Patches, Seq | Start) => {
                Some("The patch maps take their positions from the patch grid set in the view")
            }
            (ViewKind::Learned, _) => Some(
                "A learned table brings its own positions and width; the sinusoidal table beside it takes the same size",
            ),
            (ViewKind::Tour, _) => Some(
                "The tour sets its own length, width and base above its pictures, so that they stay with the lesson",
            ),
            (ViewKind::Relative, _) => Some(
                "The relative view sets its own small lengths in the view, so that every cell can be read",
            ),
            (ViewKind::Context, _) => Some(
                "The context-extension lab takes the head width, base and lengths from the model chosen in the view",
            ),
            (ViewKind::Patches, Layout | Spacing) => {
                Some("2D encodings fix their own layout (MAE: sin then cos; rope-vit: x then y)")
            }
            _ => None,
        }
    }
}
