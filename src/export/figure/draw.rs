//! Lays a [`Figure`] out and draws it as an SVG document: vector axes, ticks, labels, curves and
//! colour bar; heatmaps as embedded PNG images (one pixel per cell, drawn unsmoothed where cells are
//! large enough to see, smoothly where a scale by a fraction would make false stripes).

use base64::Engine as _;
use svg::Document;
use svg::node::element::{
    Circle, ClipPath, Definitions, Group, Image, Line, Polyline, Rectangle, Text,
};

use super::{
    Axis, ColorBar, Content, Figure, Panel, ProjectedDot, ProjectedLabel, ProjectedLine,
    SeriesStyle,
};

const FONT: &str = "sans-serif";
const TEXT_COLOR: &str = "#222222";
const GRID_COLOR: &str = "#dddddd";
const TITLE_HEIGHT: f64 = 40.0;
const COLORBAR_WIDTH: f64 = 90.0;
const PANEL_TITLE_HEIGHT: f64 = 22.0;
/// The margin left of and below a plot whose axis is hidden.
const HIDDEN_AXIS_MARGIN: f64 = 8.0;
const PLOT_RIGHT_MARGIN: f64 = 12.0;

/// The plot area of a figure that is one panel with hidden axes and no colour bar (the
/// corkscrew), so that its camera can be framed for that shape.
pub(super) fn single_projected_plot_size(width: u32, height: u32) -> [f64; 2] {
    let cell_w = (f64::from(width) - 16.0).max(10.0);
    let cell_h = (f64::from(height) - TITLE_HEIGHT - 8.0).max(10.0);
    [
        (cell_w - HIDDEN_AXIS_MARGIN - PLOT_RIGHT_MARGIN).max(4.0),
        (cell_h - PANEL_TITLE_HEIGHT - HIDDEN_AXIS_MARGIN).max(4.0),
    ]
}

/// A rectangle in figure pixels.
#[derive(Debug, Clone, Copy)]
struct Area {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// A text element. Control characters (from a title, a file name, a tensor's or a model's
/// name) are written as escapes: XML forbids them even escaped, and one would make the SVG
/// unreadable (`svg` escapes `<` and `&` itself).
fn text(x: f64, y: f64, size: f64, anchor: &str, content: impl Into<String>) -> Text {
    Text::new(crate::import::printable(&content.into()))
        .set("x", x)
        .set("y", y)
        .set("font-family", FONT)
        .set("font-size", size)
        .set("fill", TEXT_COLOR)
        .set("text-anchor", anchor)
}

/// The font size, at most `size`, at which `text` fits in `width` pixels (by the average
/// width of a character of the sans-serif font), and no smaller than 7.
fn fitting_size(text: &str, size: f64, width: f64) -> f64 {
    let chars = text.chars().count().max(1) as f64;
    (width / (0.52 * chars)).clamp(7.0, size)
}

/// Readable tick positions for `[min, max]`: steps of 1, 2 or 5 times a power of ten.
pub(super) fn ticks(min: f64, max: f64, target: usize) -> Vec<f64> {
    let (low, high) = if min <= max { (min, max) } else { (max, min) };
    let span = high - low;
    if !span.is_finite() || span <= 0.0 {
        return if low.is_finite() {
            vec![low]
        } else {
            Vec::new()
        };
    }
    let rough = span / target.max(1) as f64;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| span / s <= target.max(1) as f64)
        .unwrap_or(10.0 * power);
    let first = (low / step).ceil() as i64;
    let last = (high / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A tick's text: short, without float noise, as a textbook prints it (1,000,000; 10³;
/// 2.5 × 10⁻⁴).
fn tick_text(value: f64, log10: bool) -> String {
    if log10 {
        let rounded = value.round();
        return if (value - rounded).abs() < 1e-9 {
            crate::numbers::power(10, rounded as i64)
        } else {
            crate::numbers::scientific(10f64.powf(value), 4)
        };
    }
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-3..1e9).contains(&magnitude) {
        crate::numbers::scientific(value, 2)
    } else {
        let text = crate::numbers::fixed(value, 4);
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            &text
        };
        if text == "-0" {
            "0".to_owned()
        } else {
            text.to_owned()
        }
    }
}

/// Maps data values of an axis to pixels of an interval.
struct Scale {
    min: f64,
    max: f64,
    from: f64,
    to: f64,
}

impl Scale {
    fn of(axis: &Axis, start_px: f64, length_px: f64, vertical: bool) -> Self {
        // Vertical axes grow upwards unless they run down like table rows.
        let (from, to) = if vertical && !axis.downwards {
            (start_px + length_px, start_px)
        } else {
            (start_px, start_px + length_px)
        };
        Self {
            min: axis.min,
            max: axis.max,
            from,
            to,
        }
    }

    fn px(&self, value: f64) -> f64 {
        let span = self.max - self.min;
        let t = if span != 0.0 {
            (value - self.min) / span
        } else {
            0.5
        };
        self.from + t * (self.to - self.from)
    }
}

/// The figure as an SVG document.
pub(super) fn svg_document(figure: &Figure) -> Document {
    let (width, height) = (figure.width, figure.height);
    let mut document = Document::new()
        .set("xmlns:xlink", "http://www.w3.org/1999/xlink")
        .set("width", width)
        .set("height", height)
        .set("viewBox", (0, 0, width, height))
        .add(
            Rectangle::new()
                .set("width", width)
                .set("height", height)
                .set("fill", "#ffffff"),
        )
        .add(
            text(
                width / 2.0,
                26.0,
                fitting_size(&figure.title, 18.0, width - 16.0),
                "middle",
                figure.title.clone(),
            )
            .set("id", "figure-title")
            .set("font-weight", "bold"),
        );
    let right = if figure.colorbar.is_some() {
        COLORBAR_WIDTH
    } else {
        0.0
    };
    let grid = Area {
        x: 8.0,
        y: TITLE_HEIGHT,
        w: (width - 16.0 - right).max(10.0),
        h: (height - TITLE_HEIGHT - 8.0).max(10.0),
    };
    let count = figure.panels.len().max(1);
    let cols = figure
        .columns
        .unwrap_or((count as f64).sqrt().ceil() as usize)
        .clamp(1, count);
    let rows = count.div_ceil(cols);
    let (cell_w, cell_h) = (grid.w / cols as f64, grid.h / rows as f64);
    let mut definitions = Definitions::new();
    for (index, panel) in figure.panels.iter().enumerate() {
        let cell = Area {
            x: grid.x + (index % cols) as f64 * cell_w,
            y: grid.y + (index / cols) as f64 * cell_h,
            w: cell_w,
            h: cell_h,
        };
        let (group, clip) = panel_group(index, panel, cell, figure.colorbar.as_ref());
        definitions = definitions.add(clip);
        document = document.add(group);
    }
    if let Some(colorbar) = &figure.colorbar {
        let area = Area {
            x: width - right + 10.0,
            y: grid.y + PANEL_TITLE_HEIGHT,
            w: 18.0,
            h: (grid.h - PANEL_TITLE_HEIGHT - 48.0).max(20.0),
        };
        document = document.add(colorbar_group(colorbar, area));
    }
    document.add(definitions)
}

/// Lowers a figure of square panels (each with a colour bar of its own, no shared one) to the
/// height they fill at its width, so that no empty band is left above and below them; a
/// figure already short enough stays as it is.
pub fn trim_to_square_panels(figure: &mut Figure) {
    if figure.colorbar.is_some()
        || figure.panels.is_empty()
        || !figure
            .panels
            .iter()
            .all(|p| p.equal_aspect && p.colorbar.is_some())
    {
        return;
    }
    let count = figure.panels.len();
    let cols = figure
        .columns
        .unwrap_or((count as f64).sqrt().ceil() as usize)
        .clamp(1, count);
    let rows = count.div_ceil(cols) as f64;
    let cell_w = (figure.width - 16.0) / cols as f64;
    // As panel_group lays out a panel that is not small, with its own colour bar.
    let plot_w = cell_w - COLORBAR_WIDTH - 64.0 - PLOT_RIGHT_MARGIN;
    let cell_h = figure
        .panels
        .iter()
        .map(|p| {
            let ratio = (p.x.max - p.x.min).abs() / (p.y.max - p.y.min).abs();
            plot_w / ratio + PANEL_TITLE_HEIGHT + 44.0
        })
        .fold(0.0, f64::max);
    // A small panel's margins differ: leave such figures alone.
    if cell_w < 260.0 || cell_h < 200.0 || !cell_h.is_finite() {
        return;
    }
    let needed = (TITLE_HEIGHT + 8.0 + rows * cell_h).ceil();
    figure.height = figure.height.min(needed);
}

/// A panel's x axis: ticks and their numbers, its name, and (for curves) grid lines.
fn x_axis(
    index: usize,
    panel: &Panel,
    plot: Area,
    x_scale: &Scale,
    (tick_size, bottom): (f64, f64),
    is_heatmap: bool,
) -> Group {
    let mut axis = Group::new().set("id", format!("axis-x-{index}"));
    for tick in ticks(panel.x.min, panel.x.max, (plot.w / 80.0).max(2.0) as usize) {
        let x = x_scale.px(tick);
        if !is_heatmap {
            axis = axis.add(vertical_line(x, plot, GRID_COLOR));
        }
        axis = axis
            .add(
                Line::new()
                    .set("x1", x)
                    .set("x2", x)
                    .set("y1", plot.y + plot.h)
                    .set("y2", plot.y + plot.h + 4.0)
                    .set("stroke", TEXT_COLOR),
            )
            .add(text(
                x,
                plot.y + plot.h + 6.0 + tick_size,
                tick_size,
                "middle",
                tick_text(tick, panel.x.log10),
            ));
    }
    axis = axis.add(text(
        plot.x + plot.w / 2.0,
        plot.y + plot.h + bottom - 6.0,
        tick_size + 1.0,
        "middle",
        panel.x.label.clone(),
    ));
    axis
}

/// A panel's y axis: ticks and their numbers, its name turned upright, and (for curves) grid
/// lines.
fn y_axis(
    index: usize,
    panel: &Panel,
    (cell, plot): (Area, Area),
    y_scale: &Scale,
    tick_size: f64,
    is_heatmap: bool,
) -> Group {
    let mut axis = Group::new().set("id", format!("axis-y-{index}"));
    for tick in ticks(panel.y.min, panel.y.max, (plot.h / 60.0).max(2.0) as usize) {
        let y = y_scale.px(tick);
        if !is_heatmap {
            axis = axis.add(
                Line::new()
                    .set("x1", plot.x)
                    .set("x2", plot.x + plot.w)
                    .set("y1", y)
                    .set("y2", y)
                    .set("stroke", GRID_COLOR),
            );
        }
        axis = axis
            .add(
                Line::new()
                    .set("x1", plot.x - 4.0)
                    .set("x2", plot.x)
                    .set("y1", y)
                    .set("y2", y)
                    .set("stroke", TEXT_COLOR),
            )
            .add(text(
                plot.x - 6.0,
                y + tick_size * 0.35,
                tick_size,
                "end",
                tick_text(tick, panel.y.log10),
            ));
    }
    let (lx, ly) = (cell.x + tick_size, plot.y + plot.h / 2.0);
    axis = axis.add(
        text(lx, ly, tick_size + 1.0, "middle", panel.y.label.clone())
            .set("transform", format!("rotate(-90 {lx} {ly})")),
    );
    axis
}

/// Where a panel's data is drawn in its `cell`, `left` and `bottom` kept for the axes: the
/// whole of what remains, or (with equal aspect) the largest part of it the data's ratio fits.
fn plot_area(panel: &Panel, cell: Area, left: f64, bottom: f64) -> Area {
    let mut plot = Area {
        x: cell.x + left,
        y: cell.y + PANEL_TITLE_HEIGHT,
        w: (cell.w - left - PLOT_RIGHT_MARGIN).max(4.0),
        h: (cell.h - PANEL_TITLE_HEIGHT - bottom).max(4.0),
    };
    let data_ratio = (panel.x.max - panel.x.min).abs() / (panel.y.max - panel.y.min).abs();
    if panel.equal_aspect && data_ratio.is_finite() && data_ratio > 0.0 {
        if plot.w / plot.h > data_ratio {
            let w = plot.h * data_ratio;
            plot.x += (plot.w - w) / 2.0;
            plot.w = w;
        } else {
            let h = plot.w / data_ratio;
            plot.y += (plot.h - h) / 2.0;
            plot.h = h;
        }
    }
    plot
}

fn panel_group(
    index: usize,
    panel: &Panel,
    cell: Area,
    colorbar: Option<&ColorBar>,
) -> (Group, ClipPath) {
    let small = cell.w < 260.0 || cell.h < 200.0;
    // A colour bar of the panel's own takes the right of its cell.
    let own_colorbar = panel.colorbar.as_ref();
    let colorbar = own_colorbar.or(colorbar);
    let cell = match own_colorbar {
        Some(_) => Area {
            w: (cell.w - COLORBAR_WIDTH).max(10.0),
            ..cell
        },
        None => cell,
    };
    let tick_size = if small { 10.0 } else { 12.0 };
    let left = if panel.y.hidden {
        HIDDEN_AXIS_MARGIN
    } else if small {
        44.0
    } else {
        64.0
    };
    let bottom = if panel.x.hidden {
        HIDDEN_AXIS_MARGIN
    } else if small {
        34.0
    } else {
        44.0
    };
    let plot = plot_area(panel, cell, left, bottom);
    let clip_id = format!("clip-{index}");
    let clip = ClipPath::new().set("id", clip_id.clone()).add(
        Rectangle::new()
            .set("x", plot.x)
            .set("y", plot.y)
            .set("width", plot.w)
            .set("height", plot.h),
    );
    let x_scale = Scale::of(&panel.x, plot.x, plot.w, false);
    let y_scale = Scale::of(&panel.y, plot.y, plot.h, true);
    let mut group = Group::new().set("id", format!("panel-{index}")).add(text(
        plot.x + plot.w / 2.0,
        plot.y - 6.0,
        fitting_size(&panel.title, if small { 12.0 } else { 14.0 }, cell.w - 8.0),
        "middle",
        panel.title.clone(),
    ));

    // Grid lines and ticks.
    let is_heatmap = matches!(panel.content, Content::Heatmap { .. } | Content::Board(_));
    if !panel.x.hidden {
        group = group.add(x_axis(
            index,
            panel,
            plot,
            &x_scale,
            (tick_size, bottom),
            is_heatmap,
        ));
    }
    if !panel.y.hidden {
        group = group.add(y_axis(
            index,
            panel,
            (cell, plot),
            &y_scale,
            tick_size,
            is_heatmap,
        ));
    }

    let mut content = Group::new()
        .set("id", format!("content-{index}"))
        .set("clip-path", format!("url(#{clip_id})"));
    // The legend, drawn over the data so that no line or dot crosses its names.
    let mut on_top: Option<Group> = None;
    match &panel.content {
        Content::Heatmap {
            values,
            rows,
            cols,
            outlined,
            overlay,
        } => {
            content = heatmap_content(
                content,
                index,
                (plot, &x_scale, &y_scale),
                (values, *rows, *cols),
                outlined,
                overlay,
                colorbar,
            );
            if !overlay.is_empty() {
                on_top = Some(legend(overlay, plot));
            }
        }
        Content::Board(board) => {
            content =
                content.add(board_group(board, plot, colorbar).set("id", format!("board-{index}")));
        }
        Content::Plot(series) => {
            content = content.add(series_group(series, index, &x_scale, &y_scale, plot));
            on_top = Some(legend(series, plot));
        }
        Content::Projected {
            lines,
            dots,
            labels,
        } => {
            content = projected_content(content, index, plot, (lines, dots, labels), tick_size);
        }
    }
    if let Some(own) = own_colorbar {
        let area = Area {
            x: cell.x + cell.w + 6.0,
            y: plot.y,
            w: 14.0,
            h: (plot.h - 20.0).max(10.0),
        };
        group = group.add(colorbar_group(own, area).set("id", format!("colorbar-{index}")));
    }
    group = group.add(content).add(
        Rectangle::new()
            .set("id", format!("plot-area-{index}"))
            .set("x", plot.x)
            .set("y", plot.y)
            .set("width", plot.w)
            .set("height", plot.h)
            .set("fill", "none")
            .set("stroke", if panel.x.hidden { "none" } else { TEXT_COLOR })
            .set("stroke-width", 1.0),
    );
    if let Some(legend) = on_top {
        group = group.add(legend);
    }
    (group, clip)
}

/// A heatmap's cells in the plot area (crisp where they are large enough), the cells it
/// outlines, and the lines drawn over it.
fn heatmap_content(
    mut content: Group,
    index: usize,
    (plot, x_scale, y_scale): (Area, &Scale, &Scale),
    (values, rows, cols): (&[f64], usize, usize),
    outlined: &[(usize, usize)],
    overlay: &[super::Series],
    colorbar: Option<&ColorBar>,
) -> Group {
    let colorbar = colorbar.cloned().unwrap_or(ColorBar {
        colormap: crate::colormap::Colormap::Viridis,
        min: 0.0,
        max: 1.0,
        label: String::new(),
    });
    // Cells of at least 3 units a side stay crisp; smaller ones are smoothed, since
    // a nearest-neighbour scale by a ratio such as 133/128 would make some cells one
    // pixel wide and others two: stripes that are not in the table.
    let crisp = plot.w / cols as f64 >= CRISP_CELL && plot.h / rows as f64 >= CRISP_CELL;
    content = content.add(
        heatmap_image(values, rows, cols, &colorbar, crisp)
            .set("id", format!("heatmap-{index}"))
            .set("x", plot.x)
            .set("y", plot.y)
            .set("width", plot.w)
            .set("height", plot.h),
    );
    let (cell_w, cell_h) = (plot.w / cols as f64, plot.h / rows as f64);
    for &(row, col) in outlined {
        content = content.add(
            Rectangle::new()
                .set("x", plot.x + col as f64 * cell_w)
                .set("y", plot.y + row as f64 * cell_h)
                .set("width", cell_w)
                .set("height", cell_h)
                .set("fill", "none")
                .set("stroke", "#ffffff")
                .set("stroke-width", 2.0),
        );
    }
    if !overlay.is_empty() {
        content = content.add(series_group(overlay, index, x_scale, y_scale, plot));
    }
    content
}

/// A projected 3D scene's lines, dots and labels, on white, in the plot area.
fn projected_content(
    mut content: Group,
    index: usize,
    plot: Area,
    (lines, dots, labels): (&[ProjectedLine], &[ProjectedDot], &[ProjectedLabel]),
    tick_size: f64,
) -> Group {
    let at = |p: [f64; 2]| (plot.x + p[0] * plot.w, plot.y + p[1] * plot.h);
    content = content.add(
        Rectangle::new()
            .set("x", plot.x)
            .set("y", plot.y)
            .set("width", plot.w)
            .set("height", plot.h)
            .set("fill", "#ffffff"),
    );
    for (k, line) in lines.iter().enumerate() {
        let points: Vec<String> = line
            .points
            .iter()
            .map(|&p| {
                let (x, y) = at(p);
                format!("{x:.2},{y:.2}")
            })
            .collect();
        content = content.add(
            Polyline::new()
                .set("id", format!("line-{index}-{k}"))
                .set("points", points.join(" "))
                .set("fill", "none")
                .set("stroke", hex(line.color))
                .set("stroke-width", line.width)
                .set("stroke-linejoin", "round"),
        );
    }
    for dot in dots {
        let (x, y) = at(dot.at);
        let circle = Circle::new().set("cx", x).set("cy", y).set("r", 4.5);
        content = content.add(if dot.ring {
            circle
                .set("fill", "#ffffff")
                .set("stroke", "#222222")
                .set("stroke-width", 1.5)
        } else {
            circle
                .set("fill", hex(dot.color))
                .set("stroke", "#222222")
                .set("stroke-width", 1.0)
        });
    }
    for label in labels {
        let (x, y) = at(label.at);
        content = content
            .add(text(x, y, tick_size, "end", label.text.clone()).set("fill", hex(label.color)));
    }
    content
}

fn vertical_line(x: f64, plot: Area, color: &str) -> Line {
    Line::new()
        .set("x1", x)
        .set("x2", x)
        .set("y1", plot.y)
        .set("y2", plot.y + plot.h)
        .set("stroke", color)
}

/// The names of a plot's series in its top right corner.
fn legend(series: &[super::Series], plot: Area) -> Group {
    let mut group = Group::new().set("id", "legend");
    let named: Vec<&super::Series> = series.iter().filter(|s| !s.name.is_empty()).collect();
    if named.is_empty() {
        return group;
    }
    // A white card behind the names (about 6.5 px a character at 12 px), so that data under
    // the corner does not run through them.
    let longest = named
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    // Within its own plot: a wider card reached over the panel to its left (a white box on
    // the context figure's map); names longer than the plot run into the margin beside it.
    let width = (longest as f64 * 6.5 + 36.0).min(plot.w - 8.0).max(0.0);
    group = group.add(
        Rectangle::new()
            .set("x", plot.x + plot.w - 4.0 - width)
            .set("y", plot.y + 3.0)
            .set("width", width)
            .set("height", named.len() as f64 * 16.0 + 4.0)
            .set("fill", "#ffffff")
            .set("fill-opacity", 0.85)
            .set("rx", 3.0),
    );
    for (k, s) in named.iter().enumerate() {
        let y = plot.y + 16.0 + k as f64 * 16.0;
        let x = plot.x + plot.w - 8.0;
        group = group
            .add(
                Line::new()
                    .set("x1", x - 18.0)
                    .set("x2", x)
                    .set("y1", y - 4.0)
                    .set("y2", y - 4.0)
                    .set("stroke", hex(s.color))
                    .set("stroke-width", 3.0),
            )
            .add(text(x - 24.0, y, 12.0, "end", s.name.clone()));
    }
    group
}

/// A board's cells as rectangles with their labels (where they fit, by the app's rule), the
/// borders between regions in white, outlined cells in red.
fn board_group(
    board: &crate::scene::board::Board,
    plot: Area,
    colorbar: Option<&ColorBar>,
) -> Group {
    use crate::colormap::{cell_color, label_color};
    use crate::scene::board::label_fitting;
    let colormap = colorbar.map_or(crate::colormap::Colormap::Viridis, |c| c.colormap);
    let (cell_w, cell_h) = (
        plot.w / board.cols.max(1) as f64,
        plot.h / board.rows.max(1) as f64,
    );
    let mut group = Group::new();
    let longest = board.longest_label();
    for cell in &board.cells {
        let (x, y) = (
            plot.x + cell.col as f64 * cell_w,
            plot.y + cell.row as f64 * cell_h,
        );
        let fill = cell_color(colormap, board.range, cell.value);
        let gap = (cell_w.min(cell_h) * 0.04).min(1.0);
        let mut rect = Rectangle::new()
            .set("x", x + gap)
            .set("y", y + gap)
            .set("width", (cell_w - 2.0 * gap).max(0.1))
            .set("height", (cell_h - 2.0 * gap).max(0.1))
            .set("fill", hex([fill.r(), fill.g(), fill.b()]));
        if cell.outlined {
            rect = rect.set("stroke", "#ff5050").set("stroke-width", 2.5);
        }
        group = group.add(rect);
        if let Some((label, size)) = label_fitting(cell, cell_w as f32, cell_h as f32, longest) {
            let ink = label_color(fill);
            group = group.add(
                text(
                    x + cell_w / 2.0,
                    y + cell_h / 2.0 + f64::from(size) * 0.35,
                    f64::from(size),
                    "middle",
                    label,
                )
                .set("fill", hex([ink.r(), ink.g(), ink.b()])),
            );
        }
    }
    for [a, b] in board.region_borders() {
        group = group.add(
            Line::new()
                .set("x1", plot.x + a[0] * cell_w)
                .set("y1", plot.y + a[1] * cell_h)
                .set("x2", plot.x + b[0] * cell_w)
                .set("y2", plot.y + b[1] * cell_h)
                .set("stroke", "#ffffff")
                .set("stroke-width", (cell_w.min(cell_h) / 12.0).clamp(1.5, 3.0)),
        );
    }
    group
}

/// `values` through the colour bar's map as a PNG data URI, one pixel per cell; values that are
/// not finite (a causal mask's -inf) have the map's masked colour, as in the app.
fn heatmap_image(
    values: &[f64],
    rows: usize,
    cols: usize,
    colorbar: &ColorBar,
    crisp: bool,
) -> Image {
    let mut rgba = Vec::with_capacity(rows * cols * 4);
    let span = colorbar.max - colorbar.min;
    for &v in values {
        if v.is_finite() {
            let t = if span > 0.0 {
                (v - colorbar.min) / span
            } else {
                0.5
            };
            let c = colorbar.colormap.color(t);
            rgba.extend_from_slice(&[c.r(), c.g(), c.b(), 255]);
        } else {
            rgba.extend_from_slice(&colorbar.colormap.masked().to_array());
        }
    }
    image_of(&rgba, cols as u32, rows as u32, crisp)
}

/// The smallest cell, in figure units, drawn without smoothing.
const CRISP_CELL: f64 = 3.0;

/// An RGBA image as a PNG data URI, scaled without smoothing (`crisp`) or smoothly.
fn image_of(rgba: &[u8], width: u32, height: u32, crisp: bool) -> Image {
    let png = resvg::tiny_skia::IntSize::from_wh(width.max(1), height.max(1))
        .and_then(|size| resvg::tiny_skia::Pixmap::from_vec(rgba.to_vec(), size))
        .and_then(|pixmap| pixmap.encode_png().ok())
        .unwrap_or_default();
    let uri = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    );
    // SVG 2's href, and SVG 1.1's xlink:href for the renderers (Inkscape, older browsers, LaTeX
    // converters) that read only that.
    let image = Image::new()
        .set("href", uri.clone())
        .set("xlink:href", uri)
        .set("preserveAspectRatio", "none");
    if crisp {
        image
            .set("image-rendering", "optimizeSpeed")
            .set("style", "image-rendering:pixelated")
    } else {
        image.set("image-rendering", "optimizeQuality")
    }
}

fn colorbar_group(colorbar: &ColorBar, area: Area) -> Group {
    let steps = 256u32;
    let mut rgba = Vec::with_capacity(steps as usize * 4);
    for k in (0..steps).rev() {
        let c = colorbar.colormap.color(k as f64 / (steps - 1) as f64);
        rgba.extend_from_slice(&[c.r(), c.g(), c.b(), 255]);
    }
    let mut group = Group::new().set("id", "colorbar").add(
        image_of(&rgba, 1, steps, false)
            .set("x", area.x)
            .set("y", area.y)
            .set("width", area.w)
            .set("height", area.h),
    );
    let scale = Scale {
        min: colorbar.min,
        max: colorbar.max,
        from: area.y + area.h,
        to: area.y,
    };
    for tick in ticks(colorbar.min, colorbar.max, 6) {
        let y = scale.px(tick);
        group = group
            .add(
                Line::new()
                    .set("x1", area.x + area.w)
                    .set("x2", area.x + area.w + 4.0)
                    .set("y1", y)
                    .set("y2", y)
                    .set("stroke", TEXT_COLOR),
            )
            .add(text(
                area.x + area.w + 6.0,
                y + 4.0,
                11.0,
                "start",
                tick_text(tick, false),
            ));
    }
    group.add(text(
        area.x,
        area.y + area.h + 20.0,
        12.0,
        "start",
        colorbar.label.clone(),
    ))
}

/// Curves and point sets in data coordinates, clipped by the caller.
fn series_group(
    series: &[super::Series],
    index: usize,
    x_scale: &Scale,
    y_scale: &Scale,
    plot: Area,
) -> Group {
    let mut group = Group::new();
    for (k, s) in series.iter().enumerate() {
        let id = format!("series-{index}-{k}");
        let color = hex(s.color);
        match s.style {
            SeriesStyle::Line { width } => {
                // A value that is not a number breaks the line (a curve cut where it leaves
                // the plot): one polyline per run of finite points.
                let mut runs: Vec<Vec<String>> = vec![Vec::new()];
                for p in &s.points {
                    if p[1].is_finite() {
                        if let Some(run) = runs.last_mut() {
                            run.push(format!("{:.2},{:.2}", x_scale.px(p[0]), y_scale.px(p[1])));
                        }
                    } else if runs.last().is_some_and(|run| !run.is_empty()) {
                        runs.push(Vec::new());
                    }
                }
                runs.retain(|run| !run.is_empty());
                let polyline = |points: &[String]| {
                    Polyline::new()
                        .set("points", points.join(" "))
                        .set("fill", "none")
                        .set("stroke", color.clone())
                        .set("stroke-width", width)
                        .set("stroke-linejoin", "round")
                };
                if runs.len() <= 1 {
                    let points = runs.first().map(Vec::as_slice).unwrap_or(&[]);
                    group = group.add(polyline(points).set("id", id));
                } else {
                    let mut lines = Group::new().set("id", id);
                    for run in &runs {
                        lines = lines.add(polyline(run));
                    }
                    group = group.add(lines);
                }
            }
            SeriesStyle::Dots { radius } => {
                let mut dots = Group::new().set("id", id);
                for p in s.points.iter().filter(|p| p[1].is_finite()) {
                    dots = dots.add(
                        Circle::new()
                            .set("cx", x_scale.px(p[0]))
                            .set("cy", y_scale.px(p[1]))
                            .set("r", radius)
                            .set("fill", color.clone()),
                    );
                }
                group = group.add(dots);
            }
            SeriesStyle::HorizontalLine => {
                if let Some(p) = s.points.first() {
                    let y = y_scale.px(p[1]);
                    group = group.add(
                        Line::new()
                            .set("id", id)
                            .set("x1", plot.x)
                            .set("x2", plot.x + plot.w)
                            .set("y1", y)
                            .set("y2", y)
                            .set("stroke", color)
                            .set("stroke-dasharray", "6 4"),
                    );
                }
            }
        }
    }
    group
}
