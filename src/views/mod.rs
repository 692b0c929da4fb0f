//! One file per view. A view draws; the engines compute what it asks for.

pub mod alibi;
pub mod axes;
pub mod check;
pub mod context;
pub mod corkscrew;
pub mod dot_decay;
pub mod layouts;
pub mod learned;
pub mod patches;
pub mod precision;
pub mod relative;
pub mod sinusoidal;
pub mod tour;

use serde::{Deserialize, Serialize};

use crate::colormap::Colormap;
use crate::ui::engine::AppEngine;
use crate::ui::params::{SharedParam, SharedParams};
use crate::ui::status::Status;

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

    /// Moves one step forward or back through what the view shows in steps (the tour's steps,
    /// the skew trick's stages), as Page Down and Page Up ask; `false` where there is no step
    /// that way, and the app moves to the next or previous view instead.
    fn step(&mut self, _forward: bool) -> bool {
        false
    }

    /// Called when Page Down (`forward`) or Page Up steps into this view from its neighbour: a
    /// view shown in steps starts at its first step going forward and at its last going back,
    /// as a slide deck does.
    fn enter(&mut self, _forward: bool) {}
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
    fn unsaved<V: View + Default>(kind: ViewKind, _: Option<&dyn eframe::Storage>) -> Self {
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
    format!("{}.view.{view:?}", crate::ui::STATE_KEY)
}

/// One of every view, in the picker's order, with its settings read back from `storage`.
pub fn registry(storage: Option<&dyn eframe::Storage>) -> Vec<Registered> {
    VIEWS
        .iter()
        .map(|class| (class.make)(class.kind, storage))
        .collect()
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
    /// RoPE in float32, bfloat16 and float16: the score drift and the cache error
    Precision,
    /// RoPE over time, height and width: 1D, M-RoPE (Qwen2-VL) and per-axis (Flux)
    Axes,
    /// RoPE's two pair layouts, the row permutation between them, and the grouped-query bug
    Layouts,
}

impl ViewKind {
    /// Every view, in the picker's order: the registry's.
    pub fn all() -> Vec<ViewKind> {
        VIEWS.iter().map(|class| class.kind).collect()
    }

    /// What the view is, from its module.
    pub fn info(self) -> &'static ViewInfo {
        VIEWS
            .iter()
            .find(|class| class.kind == self)
            .map(|class| class.info)
            .unwrap_or_else(|| unreachable!("every view kind is in VIEWS"))
    }

    /// The view's name in the picker.
    pub fn label(self) -> &'static str {
        self.info().label
    }

    /// What to do first in this view, in one line (the status bar shows it).
    pub fn hint(self) -> &'static str {
        self.info().hint
    }

    /// Why this view does not use a shared parameter, or `None` when it does: its control is
    /// disabled with this as the tooltip.
    pub fn unused_reason(self, param: SharedParam) -> Option<&'static str> {
        (self.info().unused)(param)
    }

    /// What this view shows, explained.
    pub fn explanation(self) -> crate::widgets::explainer::Explanation {
        self.info().explanation
    }
}

/// What a view is before any of it is drawn: its name in the picker, its first hint, its
/// explanation, and why it leaves shared controls unused. Each view's module holds its own as
/// `INFO`.
pub struct ViewInfo {
    pub label: &'static str,
    /// What to do first, in one line (the status bar shows it).
    pub hint: &'static str,
    pub explanation: crate::widgets::explainer::Explanation,
    /// Why the view does not use a shared parameter, or `None` when it does.
    pub unused: fn(SharedParam) -> Option<&'static str>,
}

/// For a view that uses every shared control.
pub fn uses_every_control(_: SharedParam) -> Option<&'static str> {
    None
}

/// A view class in the registry: its kind, what it is, and how one is made (its settings read
/// back from storage).
pub struct ViewClass {
    pub kind: ViewKind,
    pub info: &'static ViewInfo,
    make: fn(ViewKind, Option<&dyn eframe::Storage>) -> Registered,
}

impl ViewClass {
    /// A view whose settings survive a restart.
    const fn saved<V>(kind: ViewKind, info: &'static ViewInfo) -> Self
    where
        V: View + Default + serde::Serialize + serde::de::DeserializeOwned,
    {
        Self {
            kind,
            info,
            make: Registered::saved::<V>,
        }
    }

    /// A view that keeps no settings between runs.
    const fn unsaved<V: View + Default>(kind: ViewKind, info: &'static ViewInfo) -> Self {
        Self {
            kind,
            info,
            make: Registered::unsaved::<V>,
        }
    }
}

/// Every view, in the order the picker lists them: adding a view is its module (with its
/// `INFO`), its [`ViewKind`] and one line here.
pub const VIEWS: &[ViewClass] = &[
    ViewClass::saved::<tour::TourView>(ViewKind::Tour, &tour::INFO),
    ViewClass::saved::<sinusoidal::SinusoidalView>(ViewKind::Sinusoidal, &sinusoidal::INFO),
    ViewClass::saved::<dot_decay::DotDecayView>(ViewKind::DotDecay, &dot_decay::INFO),
    ViewClass::saved::<relative::RelativeView>(ViewKind::Relative, &relative::INFO),
    ViewClass::saved::<alibi::AlibiView>(ViewKind::Alibi, &alibi::INFO),
    ViewClass::saved::<corkscrew::CorkscrewView>(ViewKind::Corkscrew, &corkscrew::INFO),
    ViewClass::saved::<layouts::LayoutsView>(ViewKind::Layouts, &layouts::INFO),
    ViewClass::saved::<patches::PatchView>(ViewKind::Patches, &patches::INFO),
    ViewClass::saved::<learned::LearnedView>(ViewKind::Learned, &learned::INFO),
    ViewClass::saved::<context::ContextView>(ViewKind::Context, &context::INFO),
    ViewClass::saved::<precision::PrecisionView>(ViewKind::Precision, &precision::INFO),
    ViewClass::saved::<axes::AxesView>(ViewKind::Axes, &axes::INFO),
    ViewClass::unsaved::<check::CheckView>(ViewKind::Check, &check::INFO),
];
