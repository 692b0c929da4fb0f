//! A table drawn as a heatmap inside plot axes: zoom with the scroll wheel, pan by dragging,
//! double-click to reset. Row `r` is drawn at `y = -r`, so the first row is at the top.

pub use super::colorbar::{colorbar_ui, horizontal_colorbar_ui, tick_text};
use egui_plot::{Plot, PlotBounds, PlotImage, PlotPoint};
use ndarray::Array2;

use crate::colormap::Colormap;
use crate::engine::Strided;
use crate::engine::reduce::{self, Reduce, Sampling};

/// A computed window of a table: its values and where they sit.
pub struct HeatmapData {
    pub values: Array2<f64>,
    pub rows: Strided,
    pub cols: Strided,
}

/// A part of a heatmap outlined in white: the query's row of a matrix, the query's patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outline {
    Row(usize),
    /// `(row, col)`.
    Cell(usize, usize),
}

/// What happened to a heatmap this frame.
pub struct HeatmapResponse {
    /// The part of the table the axes show.
    pub visible: PlotBounds,
    /// The plot's size on screen in physical pixels (points times the zoom times the
    /// display's scale): a heatmap computes one bin of cells per physical pixel, so that a
    /// zoomed window (presentation mode, a high-DPI display) is drawn as sharp as it can be.
    pub size_px: egui::Vec2,
    /// The table cell `(row, col)` under the pointer.
    pub hovered: Option<(usize, usize)>,
    /// The cell clicked this frame.
    pub clicked: Option<(usize, usize)>,
    /// Where a table coordinate `(col, -row)` lands on screen.
    pub transform: egui_plot::PlotTransform,
    pub response: egui::Response,
    /// Where a pixel covers several cells: which, and their mean, minimum and maximum.
    pub pixel_note: Option<String>,
    /// Whether the picture is of other settings than the hovered values (which are the new
    /// settings' own) while its own is computed.
    pub stale: bool,
}

impl HeatmapResponse {
    /// Shows `text` at the pointer, followed by what the pixel under it covers.
    pub fn show_hover(&self, text: String) {
        let text = match &self.pixel_note {
            Some(note) => format!("{text}\n{note}"),
            None => text,
        };
        let text = if self.stale {
            format!(
                "{text}\n(the new settings' value: the picture under the pointer is still the previous settings')"
            )
        } else {
            text
        };
        self.response.clone().on_hover_text_at_pointer(text);
    }
}

/// The texture of a heatmap, kept between frames and refreshed when its data changes.
#[derive(Default)]
pub struct HeatmapTexture {
    texture: Option<egui::TextureHandle>,
    range: (f64, f64),
}

impl HeatmapTexture {
    /// Colour-maps `data` into the texture, over `fixed_range` or the values' own range.
    pub fn update(
        &mut self,
        ctx: &egui::Context,
        data: &HeatmapData,
        colormap: Colormap,
        fixed_range: Option<(f64, f64)>,
    ) {
        let (image, range) = colour_image(data, colormap, fixed_range);
        self.set(ctx, image, range);
    }

    /// Takes a colour-mapped image (made off the UI thread) and the range its colours span.
    pub fn set(&mut self, ctx: &egui::Context, image: egui::ColorImage, range: (f64, f64)) {
        self.range = range;
        match &mut self.texture {
            Some(texture) => texture.set(image, egui::TextureOptions::NEAREST),
            None => {
                self.texture =
                    Some(ctx.load_texture("heatmap", image, egui::TextureOptions::NEAREST))
            }
        }
    }

    /// The value range the colours span.
    pub fn range(&self) -> (f64, f64) {
        self.range
    }

    pub fn id(&self) -> Option<egui::TextureId> {
        self.texture.as_ref().map(|t| t.id())
    }
}

/// `data` colour-mapped over `fixed_range` or the values' own range, and that range.
pub fn colour_image(
    data: &HeatmapData,
    colormap: Colormap,
    fixed_range: Option<(f64, f64)>,
) -> (egui::ColorImage, (f64, f64)) {
    let finite = data.values.iter().copied().filter(|v| v.is_finite());
    let (min, max) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (min, max) = if min.is_finite() {
        (min, max)
    } else {
        (0.0, 1.0)
    };
    let range = match fixed_range {
        Some(range) => range,
        None => colormap.range(min, max),
    };
    let (lo, hi) = range;
    let (rows, cols) = data.values.dim();
    let pixels: Vec<egui::Color32> = data
        .values
        .iter()
        .map(|&v| {
            if v.is_finite() {
                colormap.color((v - lo) / (hi - lo))
            } else {
                // -inf (a masked ALiBi entry) in a colour of its own.
                colormap.masked()
            }
        })
        .collect();
    (
        egui::ColorImage::new([cols.max(1), rows.max(1)], pixels),
        range,
    )
}

/// Over a heatmap whose new picture is on its way: nothing when the picture is current, a
/// spinner and what is computed otherwise, and for a picture of other settings a veil that
/// says so (never a stale picture presented as current).
pub fn pending_overlay(
    ui: &mut egui::Ui,
    rect: egui::Rect,
    freshness: Freshness,
    pending: Option<&crate::jobs::Pending>,
) {
    let note = match freshness {
        Freshness::Current if pending.is_none() => return,
        Freshness::Current | Freshness::Resampling => "sharpening",
        Freshness::Preview => "coarse preview; the exact picture is coming",
        Freshness::Stale => {
            ui.painter_at(rect)
                .rect_filled(rect, 0.0, egui::Color32::from_black_alpha(150));
            "the picture is of the previous settings"
        }
        Freshness::Empty => "the first picture is on its way",
    };
    let Some(pending) = pending else {
        return;
    };
    let elapsed = pending.since.elapsed().as_secs_f64();
    let progress = pending
        .progress
        .filter(|p| *p > 0.0)
        .map(|p| format!(" · {:.0}%", p * 100.0))
        .unwrap_or_default();
    let text = egui::RichText::new(format!(
        "{} … {elapsed:.1} s{progress}\n{note}",
        pending.what
    ))
    .size(14.0)
    .color(egui::Color32::WHITE);
    // Inside the plot however narrow it is: the text wraps to the room there is.
    let inset = if rect.width() > 360.0 { 48.0 } else { 6.0 };
    let at = rect.left_top() + egui::vec2(inset, 10.0);
    let room = (rect.width() - inset - 46.0).max(40.0);
    let galley_size = egui::WidgetText::from(text.clone())
        .into_galley(
            ui,
            Some(egui::TextWrapMode::Wrap),
            room,
            egui::TextStyle::Body,
        )
        .size();
    let card = egui::Rect::from_min_size(at, galley_size + egui::vec2(40.0, 12.0)).intersect(rect);
    let painter = ui.painter_at(rect);
    painter.rect_filled(card, 4.0, egui::Color32::from_black_alpha(200));
    // A spinner of our own: a turning arc (egui's asks for an immediate repaint itself).
    let centre = card.left_center() + egui::vec2(16.0, 0.0);
    let turn = (elapsed * 4.0) as f32;
    let points: Vec<egui::Pos2> = (0..=12)
        .map(|k| {
            let a = turn + k as f32 * 0.4;
            centre + 7.0 * egui::vec2(a.cos(), a.sin())
        })
        .collect();
    painter.add(egui::Shape::line(
        points,
        egui::Stroke::new(2.0, egui::Color32::WHITE),
    ));
    // A label, not painted text: screen readers and tests read it.
    let text_rect = egui::Rect::from_min_size(card.min + egui::vec2(32.0, 6.0), galley_size);
    ui.put(
        text_rect,
        egui::Label::new(text)
            .wrap_mode(egui::TextWrapMode::Wrap)
            .selectable(false),
    );
}

fn zoom_key(link: egui::Id) -> egui::Id {
    link.with("zoom to")
}

/// Asks every heatmap of the `link` group to show rows `rows` and columns `cols` (table
/// coordinates) from the next time it is drawn, until [`zoom_done`].
pub fn request_zoom(ctx: &egui::Context, link: egui::Id, rows: (f64, f64), cols: (f64, f64)) {
    ctx.data_mut(|d| d.insert_temp(zoom_key(link), [rows.0, rows.1, cols.0, cols.1]));
}

/// Ends a [`request_zoom`] once every heatmap of the group has been drawn with it.
pub fn zoom_done(ctx: &egui::Context, link: egui::Id) {
    ctx.data_mut(|d| d.remove::<[f64; 4]>(zoom_key(link)));
}

/// Draws the texture `texture` of a window (`rows`, `cols`) in plot axes named `id`; with
/// `link`, its zoom, pan and cursor follow every other plot of that group (heatmaps of the same
/// shape side by side); with `square_cells`, a cell is as wide as it is tall (a square matrix
/// stays square).
#[allow(clippy::too_many_arguments)]
pub fn heatmap_ui(
    ui: &mut egui::Ui,
    id: &str,
    (rows, cols): (Strided, Strided),
    texture: Option<egui::TextureId>,
    axis_labels: (&str, &str),
    full_size: (usize, usize),
    outline: Option<Outline>,
    link: Option<egui::Id>,
    square_cells: bool,
) -> HeatmapResponse {
    let (rows_total, cols_total) = full_size;
    let mut plot = Plot::new(id);
    if square_cells {
        plot = plot.data_aspect(1.0);
    }
    if let Some(group) = link {
        plot = plot
            .link_axis(group, [true, true])
            .link_cursor(group, [true, true]);
    }
    let plot = plot
        .x_axis_label(axis_labels.0)
        .y_axis_label(axis_labels.1)
        // Rows grow downwards.
        .y_axis_formatter(|mark, _| {
            super::layout::tick_label(egui_plot::GridMark {
                value: -mark.value,
                ..mark
            })
        })
        .x_axis_formatter(|mark, _| super::layout::tick_label(mark))
        .height(ui.available_height())
        .width(ui.available_width())
        .include_x(0.0)
        .include_x(cols_total as f64)
        .include_y(0.0)
        .include_y(-(rows_total as f64))
        .x_grid_spacer(super::layout::nice_ticks)
        .y_grid_spacer(super::layout::nice_ticks)
        .allow_boxed_zoom(false)
        // The scroll wheel zooms (as in image viewers) instead of panning; dragging pans.
        .allow_scroll(false)
        .show_grid(false);
    let response = plot.show(ui, |plot_ui| {
        if let Some([row0, row1, col0, col1]) = link.and_then(|group| {
            plot_ui
                .ctx()
                .data(|d| d.get_temp::<[f64; 4]>(zoom_key(group)))
        }) {
            plot_ui.set_plot_bounds(egui_plot::PlotBounds::from_min_max(
                [col0, -row1],
                [col1, -row0],
            ));
        }
        let scroll = plot_ui.ctx().input(|i| i.smooth_scroll_delta);
        let scroll = scroll.x + scroll.y;
        if scroll != 0.0 && plot_ui.response().hovered() {
            plot_ui.zoom_bounds_around_hovered(egui::Vec2::splat((scroll * 0.005).exp()));
        }
        if let Some(texture) = texture {
            // The last bin may hold fewer cells than the others: the image ends with the table.
            let (x0, x1) = (
                cols.start as f64,
                (cols.last() + cols.step).min(cols.end) as f64,
            );
            let (y0, y1) = (
                rows.start as f64,
                (rows.last() + rows.step).min(rows.end) as f64,
            );
            let center = PlotPoint::new((x0 + x1) / 2.0, -(y0 + y1) / 2.0);
            let size = egui::vec2((x1 - x0) as f32, (y1 - y0) as f32);
            plot_ui.add(PlotImage::new("table", texture, center, size));
        }
        let stroke = egui::Stroke::new(1.5, egui::Color32::WHITE);
        match outline {
            Some(Outline::Row(row)) => {
                for edge in [row, row + 1] {
                    plot_ui.hline(
                        egui_plot::HLine::new("highlighted row", -(edge as f64)).stroke(stroke),
                    );
                }
            }
            Some(Outline::Cell(row, col)) => {
                let (x0, x1, y0, y1) = (
                    col as f64,
                    col as f64 + 1.0,
                    -(row as f64),
                    -(row as f64) - 1.0,
                );
                let corners = vec![[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]];
                plot_ui.line(
                    egui_plot::Line::new("outlined cell", egui_plot::PlotPoints::from(corners))
                        .stroke(egui::Stroke::new(2.5, egui::Color32::WHITE)),
                );
            }
            None => {}
        }
        let cell = plot_ui.pointer_coordinate().and_then(|p| {
            let (row, col) = (-p.y, p.x);
            let inside = row >= 0.0
                && col >= 0.0
                && (row as usize) < rows_total
                && (col as usize) < cols_total;
            inside.then_some((row as usize, col as usize))
        });
        (plot_ui.plot_bounds(), cell, plot_ui.response().clicked())
    });
    let (visible, hovered, clicked) = response.inner;
    super::layout::record_plot(ui.ctx(), id, &response.transform);
    HeatmapResponse {
        visible,
        size_px: response.response.rect.size() * ui.ctx().pixels_per_point(),
        hovered,
        clicked: if clicked { hovered } else { None },
        transform: response.transform,
        response: response.response,
        pixel_note: None,
        stale: false,
    }
}

/// The rows (or columns) of `0..total` visible in `low..high`, at about one per pixel.
pub fn visible_range(low: f64, high: f64, total: usize, pixels: f32) -> Strided {
    let start = low.floor().max(0.0) as usize;
    let end = (high.ceil().max(0.0) as usize).min(total);
    let (start, end) = if start >= end {
        (0, total)
    } else {
        (start.min(total - 1), end)
    };
    let step = ((end - start) as f64 / f64::from(pixels.max(1.0)))
        .ceil()
        .max(1.0) as usize;
    Strided { start, end, step }
}

/// Where a heatmap of `rows` x `cols` and its colour bar go in `full`: the bar on the right;
/// with `square_cells`, the heatmap only as large as square cells fill, so that the bar sits
/// beside the matrix and no empty band is left above or below it.
pub fn heatmap_layout(
    full: egui::Rect,
    (rows, cols): (usize, usize),
    square_cells: bool,
) -> (egui::Rect, egui::Rect) {
    let colorbar_width = 90.0;
    let mut heatmap_rect = egui::Rect::from_min_max(
        full.min,
        egui::pos2(full.max.x - colorbar_width, full.max.y),
    );
    if square_cells {
        let (axes_x, axes_y) = (64.0, 44.0);
        let scale = ((heatmap_rect.width() - axes_x) / cols as f32)
            .min((heatmap_rect.height() - axes_y) / rows as f32)
            .max(0.0);
        heatmap_rect.set_width(cols as f32 * scale + axes_x);
        heatmap_rect.set_height(rows as f32 * scale + axes_y);
    }
    let colorbar_rect = egui::Rect::from_min_max(
        egui::pos2(heatmap_rect.max.x + 8.0, full.min.y),
        egui::pos2(heatmap_rect.max.x + colorbar_width, heatmap_rect.max.y),
    );
    (heatmap_rect, colorbar_rect)
}

/// What a heatmap's picture shows: the table, the window, the reduction, the colour map and the
/// fixed range.
type ComputedFor = (
    crate::engine::TableSpec,
    crate::engine::Window,
    Reduce,
    Colormap,
    Option<(f64, f64)>,
);

/// A window computed and colour-mapped on a worker thread, ready to become the texture.
pub struct RenderedWindow {
    data: HeatmapData,
    image: egui::ColorImage,
    range: (f64, f64),
    /// Whether `range` is that of every cell the picture covers (not only of its pixels).
    range_is_covered: bool,
    sampling: Sampling,
    /// The table's shape, for the status bar.
    shape: Vec<usize>,
}

/// A coarse preview's most bins along each axis.
const PREVIEW_BINS: usize = 96;

/// Computes `window` of `spec` and colour-maps it (on a worker thread): first, for a large
/// window, a coarse preview of point samples, then the exact window block by block.
#[allow(clippy::too_many_arguments)]
async fn render_window(
    engine: &crate::ui::engine::EngineHandle,
    spec: &crate::engine::TableSpec,
    window: &crate::engine::Window,
    reduce: Reduce,
    colormap: Colormap,
    fixed_range: Option<(f64, f64)>,
    reporter: &crate::jobs::Reporter<Result<RenderedWindow, String>>,
) -> Result<Result<RenderedWindow, String>, crate::jobs::Cancelled> {
    let shape = spec.axes().unwrap_or_default();
    let rendered = |values: ndarray::Array2<f64>,
                    window: &crate::engine::Window,
                    sampling,
                    covered: Option<(f64, f64)>| {
        let data = HeatmapData {
            values,
            rows: window.rows,
            cols: window.cols,
        };
        // The bar spans every cell the picture covers where that is known, not just the
        // pixels' means; a range set by the caller wins over both.
        let range = fixed_range.or_else(|| covered.map(|(lo, hi)| colormap.range(lo, hi)));
        let (image, range) = colour_image(&data, colormap, range);
        RenderedWindow {
            data,
            image,
            range,
            range_is_covered: fixed_range.is_none()
                && (covered.is_some() || sampling == Sampling::Exact),
            sampling,
            shape: shape.clone(),
        }
    };
    if engine.worth_a_preview(spec, window, reduce) {
        let coarse = |axis: Strided| Strided {
            step: axis
                .step
                .max(axis.end.saturating_sub(axis.start).div_ceil(PREVIEW_BINS)),
            ..axis
        };
        let preview = crate::engine::Window {
            rows: coarse(window.rows),
            cols: coarse(window.cols),
            ..*window
        };
        if crate::engine::reduce::has_closed_form(spec, reduce) {
            // Where the reduction has a closed form the preview is one too, of larger blocks:
            // point samples of a fast-turning table draw its aliasing as noise.
            if let Ok(values) = crate::engine::reduce::compute_reduced_cpu(spec, &preview, reduce) {
                reporter.preview(Ok(rendered(
                    values,
                    &preview,
                    Sampling::Reduced(reduce),
                    None,
                )));
            }
        } else if let Ok(crate::engine::Table::Real(values)) =
            crate::engine::cpu::compute_window(spec, &preview)
            && let Ok(values) =
                values.into_shape_with_order((preview.rows.len(), preview.cols.len()))
        {
            reporter.preview(Ok(rendered(values, &preview, Sampling::PointSampled, None)));
        }
    }
    let progress = |fraction| reporter.progress(fraction);
    let exact = engine
        .heatmap_values(spec, window, reduce, reporter.cancel(), &progress)
        .await?;
    let covered = match &exact {
        Ok(exact) if exact.sampling != Sampling::Exact && fixed_range.is_none() => {
            crate::engine::range::covered_range(spec, window, reporter.cancel())?
        }
        _ => None,
    };
    Ok(exact
        .map(|exact| rendered(exact.values, window, exact.sampling, covered))
        .map_err(|error| error.to_string()))
}

/// "1,048,576 × 4096": a table's shape for the status bar.
fn shape_text(shape: &[usize]) -> String {
    shape
        .iter()
        .map(|&n| super::number_box::thousands(n as u64))
        .collect::<Vec<_>>()
        .join(" × ")
}

/// A heatmap of a table that computes, through the app's engine on a worker thread, only the
/// window on screen at screen resolution, and recomputes when the table, the view, the
/// reduction or the colour map changes. Meanwhile it shows what it has: the previous picture
/// where it still holds (a zoom or a pan draws it where its cells are, sharpened once the new
/// window arrives), a coarse preview labelled as one, or the previous settings' picture
/// dimmed and labelled stale. Where a pixel covers several cells it shows their mean, minimum
/// or maximum (see [`crate::engine::reduce`]), and its hover says which cells and what they
/// hold.
pub struct TableHeatmap {
    texture: HeatmapTexture,
    data: Option<HeatmapData>,
    shown_window: Option<(Strided, Strided)>,
    sampling: Sampling,
    range: (f64, f64),
    /// Whether `range` is that of every cell the picture covers (or only of its pixels).
    range_is_covered: bool,
    /// A range set by the caller, so that several heatmaps share one scale.
    pub fixed_range: Option<(f64, f64)>,
    /// A row or cell outlined on top of the table.
    pub outline: Option<Outline>,
    /// Cells as wide as they are tall: a square matrix stays square.
    pub square_cells: bool,
    /// Whether this heatmap reports its window to the status bar (the main one of a view does;
    /// thumbnails do not, so that the status names what the user is looking at).
    pub reports_status: bool,
    /// What the picture on screen shows, and whether it is a coarse preview.
    shown_for: Option<(ComputedFor, bool)>,
    job: crate::jobs::Latest<ComputedFor, Result<RenderedWindow, String>>,
    /// The settings asked for last.
    job_key: Option<ComputedFor>,
    visible: Option<(PlotBounds, egui::Vec2)>,
    /// The table's `[rows, cols]` the visible bounds belong to.
    visible_shape: Option<(usize, usize)>,
}

impl Default for TableHeatmap {
    fn default() -> Self {
        Self {
            texture: HeatmapTexture::default(),
            data: None,
            shown_window: None,
            sampling: Sampling::Exact,
            range: (0.0, 0.0),
            range_is_covered: false,
            fixed_range: None,
            outline: None,
            square_cells: false,
            reports_status: true,
            shown_for: None,
            job: crate::jobs::Latest::default(),
            job_key: None,
            visible: None,
            visible_shape: None,
        }
    }
}

/// How the picture on screen relates to the settings asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// The picture of these settings.
    Current,
    /// These settings, but a coarse preview of them.
    Preview,
    /// The same table seen through another window (before a zoom or pan): its cells are where
    /// they belong, at the previous resolution.
    Resampling,
    /// The picture of other settings.
    Stale,
    /// No picture yet: the first is being computed.
    Empty,
}

impl TableHeatmap {
    /// A heatmap that does not report to the status bar (a thumbnail, a secondary map).
    pub fn secondary() -> Self {
        Self {
            reports_status: false,
            ..Self::default()
        }
    }

    /// The window of the table on screen, with its values: one value per pixel, reduced where
    /// a pixel covers several cells.
    pub fn shown(&self, _engine: &crate::ui::engine::AppEngine) -> Option<HeatmapData> {
        self.data.as_ref().map(|d| HeatmapData {
            values: d.values.clone(),
            rows: d.rows,
            cols: d.cols,
        })
    }

    pub fn range(&self) -> (f64, f64) {
        self.range
    }

    /// How the picture on screen relates to the settings last drawn.
    pub fn freshness_now(&self) -> Option<Freshness> {
        let key = self.job_key.as_ref()?;
        Some(self.freshness(key))
    }

    /// Whether the picture on screen is a coarse preview.
    pub fn shows_preview(&self) -> bool {
        self.shown_for.as_ref().is_some_and(|(_, preview)| *preview)
    }

    /// Whether a newer picture is being computed.
    pub fn is_pending(&self) -> bool {
        self.job.is_pending()
    }

    /// Whether a worker thread of this heatmap still runs (tests wait for none).
    pub fn is_busy(&self) -> bool {
        self.job.is_busy()
    }

    /// How the picture on screen relates to `key`, the settings asked for.
    fn freshness(&self, key: &ComputedFor) -> Freshness {
        match &self.shown_for {
            Some((shown, preview)) if shown == key => {
                if *preview {
                    Freshness::Preview
                } else {
                    Freshness::Current
                }
            }
            // The same table through another window: where a preview, still one of these
            // settings (a first preview taken before the plot had its size), not stale.
            Some((shown, true))
                if shown.0 == key.0 && shown.2 == key.2 && shown.3 == key.3 && shown.4 == key.4 =>
            {
                Freshness::Preview
            }
            Some((shown, false))
                if shown.0 == key.0 && shown.2 == key.2 && shown.3 == key.3 && shown.4 == key.4 =>
            {
                Freshness::Resampling
            }
            Some(_) => Freshness::Stale,
            None => Freshness::Empty,
        }
    }

    /// Asks for the picture of `key` (unless it is on its way), takes what has arrived, and
    /// tells the status bar what is pending.
    #[allow(clippy::too_many_arguments)]
    fn refresh(
        &mut self,
        ctx: &egui::Context,
        spec: &crate::engine::TableSpec,
        window: &crate::engine::Window,
        reduce: Reduce,
        colormap: Colormap,
        engine: &crate::ui::engine::AppEngine,
        status: &mut crate::ui::status::Status,
    ) -> ComputedFor {
        let key = (spec.clone(), *window, reduce, colormap, self.fixed_range);
        if !self.job.wants(&key) {
            let handle = engine.handle();
            let (spec, window, fixed) = (spec.clone(), *window, self.fixed_range);
            let what = format!("computing {}", shape_text(&spec.axes().unwrap_or_default()));
            self.job
                .request_async(Some(ctx), key.clone(), what, move |reporter| {
                    Box::pin(async move {
                        render_window(&handle, &spec, &window, reduce, colormap, fixed, &reporter)
                            .await
                    })
                });
        }
        for update in self.job.poll(Some(ctx)) {
            match update {
                crate::jobs::Update::Preview(Ok(rendered)) => {
                    self.show(ctx, rendered, &key, true);
                }
                crate::jobs::Update::Done(Ok(rendered), took) => {
                    let (shape, sampling) = (rendered.shape.clone(), rendered.sampling);
                    self.show(ctx, rendered, &key, false);
                    if self.reports_status {
                        status.computed(shape, window, sampling, took);
                    }
                }
                crate::jobs::Update::Preview(Err(message))
                | crate::jobs::Update::Done(Err(message), _)
                | crate::jobs::Update::Failed(message) => status.error(message),
            }
        }
        if let Some(pending) = self.job.pending() {
            status.pending(pending.clone());
            ctx.request_repaint();
        }
        self.job_key = Some(key.clone());
        key
    }

    fn show(
        &mut self,
        ctx: &egui::Context,
        rendered: RenderedWindow,
        key: &ComputedFor,
        preview: bool,
    ) {
        self.texture.set(ctx, rendered.image, rendered.range);
        self.range = rendered.range;
        self.range_is_covered = rendered.range_is_covered;
        self.sampling = rendered.sampling;
        self.shown_window = Some((rendered.data.rows, rendered.data.cols));
        self.data = Some(rendered.data);
        self.shown_for = Some((key.clone(), preview));
    }

    /// Draws `spec` (a 2-D table, or head `head` of a 3-D one), with a colour bar on the right;
    /// a pixel covering several cells shows their `reduce`.
    #[allow(clippy::too_many_arguments)]
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        id: &str,
        spec: &crate::engine::TableSpec,
        head: usize,
        axis_labels: (&str, &str),
        reduce: Reduce,
        colormap: Colormap,
        engine: &crate::ui::engine::AppEngine,
        status: &mut crate::ui::status::Status,
    ) -> Option<HeatmapResponse> {
        let [_, rows, cols] = spec.matrix_shape();
        let reshaped = self.visible_shape != Some((rows, cols));
        if reshaped {
            // Bounds of a table of another shape say nothing about this one: show all of it,
            // at the resolution the plot had (so that no second frame is needed to sharpen it).
            self.visible = self.visible.map(|(_, size)| {
                let all = PlotBounds::from_min_max([0.0, -(rows as f64)], [cols as f64, 0.0]);
                (all, size)
            });
            self.visible_shape = Some((rows, cols));
        }
        let window = self.window_on_screen(rows, cols, head);
        let key = self.refresh(ui.ctx(), spec, &window, reduce, colormap, engine, status);
        let freshness = self.freshness(&key);
        let full = ui.available_rect_before_wrap();
        let (heatmap_rect, colorbar_rect) = heatmap_layout(full, (rows, cols), self.square_cells);
        let mut result = None;
        let texture = self.texture.id();
        ui.scope_builder(egui::UiBuilder::new().max_rect(heatmap_rect), |ui| {
            // Until the first picture arrives, the axes of the table with nothing in them.
            let shown = self.shown_window.unwrap_or((window.rows, window.cols));
            let mut response = heatmap_ui(
                ui,
                id,
                shown,
                texture,
                axis_labels,
                (rows, cols),
                self.outline,
                None,
                self.square_cells,
            );
            // The plot's bounds on the frame the table changed shape are still the old
            // table's: the whole new table is what is asked for until the plot has fitted it.
            if !reshaped {
                self.visible = Some((response.visible, response.size_px));
            }
            if freshness == Freshness::Current
                && let (Some(cell), Sampling::Reduced(reduce)) = (response.hovered, self.sampling)
            {
                response.pixel_note = pixel_note(spec, head, shown, cell, reduce);
            }
            pending_overlay(ui, response.response.rect, freshness, self.job.pending());
            response.stale = freshness == Freshness::Stale;
            result = Some(response);
        });
        // The window follows the plot's bounds of this frame: when they moved (a zoom, a new
        // table shape), compute again next frame instead of waiting for the mouse to move.
        if self.window_on_screen(rows, cols, head) != window {
            ui.ctx().request_repaint();
        }
        ui.scope_builder(egui::UiBuilder::new().max_rect(colorbar_rect), |ui| {
            if self.shown_for.is_none() {
                // Nothing drawn yet: a bar of 0 to 0 would say something false.
                return;
            }
            let stale = freshness == Freshness::Stale;
            let of_pixels = !self.range_is_covered
                && self.fixed_range.is_none()
                && matches!(self.sampling, Sampling::Reduced(_));
            ui.horizontal_top(|ui| {
                // Room below the bar for a note on what its range is.
                let room = if stale || of_pixels { 40.0 } else { 0.0 };
                let height = (colorbar_rect.height() - room).min(400.0);
                colorbar_ui(ui, colormap, self.range, height);
            });
            if of_pixels && !stale {
                ui.label(
                    egui::RichText::new("range of\nthe pixels")
                        .small()
                        .color(ui.visuals().weak_text_color()),
                )
                .on_hover_text("Each pixel reduces many cells, and this table is too large to find its own extremes here: the bar spans the pixels' values, and single cells reach beyond it (choose min or max per pixel to see the envelope)");
            }
            if stale {
                ui.label(
                    egui::RichText::new("previous\nsettings")
                        .small()
                        .color(ui.visuals().weak_text_color()),
                )
                .on_hover_text("The colour bar is the range of the picture on screen, which is of the previous settings; the new one is being computed");
            }
        });
        ui.allocate_rect(full, egui::Sense::hover());
        result
    }

    /// A small image of head `head` of `spec`, with no axes: for small multiples.
    #[allow(clippy::too_many_arguments)]
    pub fn thumbnail_ui(
        &mut self,
        ui: &mut egui::Ui,
        spec: &crate::engine::TableSpec,
        head: usize,
        size_px: f32,
        reduce: Reduce,
        colormap: Colormap,
        engine: &crate::ui::engine::AppEngine,
        status: &mut crate::ui::status::Status,
    ) -> egui::Response {
        let [_, rows, cols] = spec.matrix_shape();
        let along = |n: usize| Strided {
            step: n.div_ceil(size_px.max(1.0) as usize).max(1),
            ..Strided::all(n)
        };
        let window = crate::engine::Window {
            heads: Strided {
                start: head,
                end: head + 1,
                step: 1,
            },
            rows: along(rows),
            cols: along(cols),
        };
        let key = self.refresh(ui.ctx(), spec, &window, reduce, colormap, engine, status);
        let freshness = self.freshness(&key);
        let response = match self.texture.id() {
            Some(id) => ui.add(
                egui::Image::new((id, egui::vec2(size_px, size_px)))
                    .texture_options(egui::TextureOptions::NEAREST),
            ),
            None => ui.allocate_response(egui::vec2(size_px, size_px), egui::Sense::hover()),
        };
        if freshness == Freshness::Stale {
            ui.painter()
                .rect_filled(response.rect, 0.0, egui::Color32::from_black_alpha(150));
        }
        response
    }
    /// The rows and columns the heatmap shows, at about one pixel per bin of cells.
    fn window_on_screen(&self, rows: usize, cols: usize, head: usize) -> crate::engine::Window {
        let heads = Strided {
            start: head,
            end: head + 1,
            step: 1,
        };
        match self.visible {
            None => crate::engine::Window {
                heads,
                rows: Strided {
                    step: rows.div_ceil(1024).max(1),
                    ..Strided::all(rows)
                },
                cols: Strided {
                    step: cols.div_ceil(1024).max(1),
                    ..Strided::all(cols)
                },
            },
            Some((bounds, size)) => {
                let mut rows = visible_range(-bounds.max()[1], -bounds.min()[1], rows, size.y);
                let mut cols = visible_range(bounds.min()[0], bounds.max()[0], cols, size.x);
                if self.square_cells {
                    // Square cells, square bins: a pixel covers as many rows as columns (and a
                    // Toeplitz table meets every step-th offset only).
                    let step = rows.step.max(cols.step);
                    (rows.step, cols.step) = (step, step);
                }
                crate::engine::Window { heads, rows, cols }
            }
        }
    }
}

/// What the pixel holding `cell` covers and holds, for the hover of a reduced heatmap.
fn pixel_note(
    spec: &crate::engine::TableSpec,
    head: usize,
    (rows, cols): (Strided, Strided),
    (row, col): (usize, usize),
    reduce: Reduce,
) -> Option<String> {
    if row < rows.start || row >= rows.end || col < cols.start || col >= cols.end {
        return None;
    }
    let row_bin = reduce::bin(&rows, (row - rows.start) / rows.step);
    let col_bin = reduce::bin(&cols, (col - cols.start) / cols.step);
    let span = |r: &std::ops::Range<usize>, one: &str, many: &str| {
        if r.len() == 1 {
            format!("{one} {}", r.start)
        } else {
            format!("{many} {}–{}", r.start, r.end - 1)
        }
    };
    let where_ = format!(
        "{} × {}",
        span(&row_bin, "row", "rows"),
        span(&col_bin, "column", "columns")
    );
    Some(
        match reduce::pixel_summary(spec, head, row_bin.clone(), col_bin.clone()) {
            Ok((acc, cells)) if acc.count() > 0 => format!(
                "this pixel shows the {} of {cells} cells ({where_}):\nmean {:.6}, min {:.6}, max {:.6}",
                reduce.label(),
                acc.value(Reduce::Mean),
                acc.value(Reduce::Min),
                acc.value(Reduce::Max),
            ),
            Ok((_, cells)) => format!("this pixel covers {cells} masked cells ({where_})"),
            Err(error) => format!("this pixel covers {where_}: {error}"),
        },
    )
}
