//! What the Check view shows of a file, made on worker threads: the outcome of identifying it
//! or comparing it with a kind (the report, the comparison, where the file differs and the
//! envelopes its errors are measured against), the file read, and the pictures.

use std::path::Path;
use std::sync::Arc;

use ndarray::ArrayD;

use super::{Loaded, MAX_SHOWN};
use crate::check::identify::{MAX_ELEMENTS, identify};
use crate::check::{Comparison, Located, Tolerance, drawn_slice, squeezed};
use crate::colormap::Colormap;
use crate::engine::reduce::Reduce;
use crate::engine::{TableSpec, cpu};
use crate::import::tables::{TableFormat, list_tensors, read_table_typed};
use crate::widgets::heatmap::HeatmapData;

/// What the file was compared with, the report, and the reference.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    pub title: String,
    /// The whole report, as `poslab check` prints it.
    pub report: String,
    /// The report without the list of elements outside (the view lists them to click).
    pub summary: String,
    pub matches: bool,
    pub comparison: Option<Comparison>,
    /// Where a file that does not match differs.
    pub located: Option<Arc<Located>>,
    pub envelopes: Arc<Envelopes>,
    #[serde(with = "crate::jobs::remote::bulk_option")]
    pub(super) reference: Option<Arc<ArrayD<f64>>>,
}

/// Identifying a file's table, or comparing it with the table its expectation's words name:
/// a job for a worker (a Web Worker on the web: a 4096 x 4096 table takes seconds).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct CheckJob {
    pub(super) name: String,
    /// `poslab table` words of the expected table (read again where the job runs; the view
    /// has read them once to say what is wrong with them); `None` identifies the table.
    pub(super) words: Option<Vec<String>>,
    #[serde(with = "crate::jobs::remote::bulk")]
    pub(super) values: Arc<ArrayD<f64>>,
    pub(super) stored: Option<crate::import::StoredFloat>,
    pub(super) explicit: Option<Tolerance>,
}

impl crate::jobs::remote::RemoteJob for CheckJob {
    const NAME: &'static str = "check-outcome";
    type Output = Result<Outcome, String>;

    fn run(
        self,
        _progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        let spec = match self
            .words
            .map(|words| crate::table_args::table_spec_from_words(&words))
        {
            None => None,
            Some(Ok(spec)) => Some(spec),
            Some(Err(error)) => return Ok(Err(error)),
        };
        Ok(Ok(compute_outcome(
            self.name,
            spec,
            &self.values,
            self.stored,
            self.explicit,
        )))
    }
}

/// Reading a table file: a job for a worker. On the web the file's bytes travel with it (the
/// page holds the files it was handed; the worker holds none).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct LoadJob {
    pub(super) path: std::path::PathBuf,
    pub(super) tensor: Option<String>,
    #[serde(with = "crate::jobs::remote::bytes_option")]
    pub(super) handed_over: Option<Arc<[u8]>>,
}

impl crate::jobs::remote::RemoteJob for LoadJob {
    const NAME: &'static str = "check-load";
    type Output = Result<Loaded, String>;

    fn run(
        self,
        _progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        let path = match self.handed_over {
            Some(bytes) => crate::import::handed_over::add(&self.path.to_string_lossy(), bytes),
            None => self.path,
        };
        Ok(read_file(&path, self.tensor))
    }
}

/// Points a side of an error curve at most: a 1M-row table's curve is binned (the largest
/// error of the rows a point stands for), so that drawing it costs a frame nothing.
const CURVE_POINTS: usize = 2048;

/// One chart's curves, ready to draw: `(index, log10 value)`.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct CurveSet {
    /// The largest |file − reference|.
    pub errors: Vec<[f64; 2]>,
    /// The largest difference the tolerance allows.
    pub allowed: Vec<[f64; 2]>,
    /// Half an ulp of the float32 angle `p·ω` of the fastest pair (rows of a sin/cos table),
    /// which grows with position.
    pub angles: Option<Vec<[f64; 2]>>,
}

/// The error against row and against column, made off the UI thread with the outcome.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Envelopes {
    pub rows: CurveSet,
    pub columns: CurveSet,
}

/// `(first index of the bin, log10 of its largest value)` for bins of `values` at most
/// [`CURVE_POINTS`] in all; bins with no positive finite value are left out (no logarithm).
fn binned_log(values: &[f64]) -> Vec<[f64; 2]> {
    let step = values.len().div_ceil(CURVE_POINTS).max(1);
    values
        .chunks(step)
        .enumerate()
        .filter_map(|(k, bin)| {
            let largest = bin
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0f64, |m, &v| m.max(v));
            (largest > 0.0).then(|| [(k * step) as f64, largest.log10()])
        })
        .collect()
}

impl Envelopes {
    /// `spec`: the reference's table, when known (not for a reading identify found).
    fn of(
        comparison: &Comparison,
        reference: &ArrayD<f64>,
        located: &Located,
        spec: Option<&TableSpec>,
    ) -> Self {
        let shape = reference.shape();
        let (rows, columns) = crate::check::locate::rows_and_columns(shape);
        let mut allowed_by_row = vec![0.0f64; rows];
        let mut allowed_by_column = vec![0.0f64; columns];
        for (k, &r) in reference.iter().enumerate() {
            if !r.is_finite() {
                continue;
            }
            let allowed = comparison.allowed(r);
            let (row, column) = crate::check::locate::row_and_column(k, rows, columns);
            allowed_by_row[row] = allowed_by_row[row].max(allowed);
            allowed_by_column[column] = allowed_by_column[column].max(allowed);
        }
        let start = match spec {
            Some(TableSpec::Sinusoidal(p)) => p.start,
            Some(TableSpec::RopeAngles { params, .. } | TableSpec::RopeCache { params, .. }) => {
                params.start
            }
            _ => 0,
        };
        let fastest = spec
            .map(crate::engine::exact_frequencies)
            .unwrap_or_default()
            .into_iter()
            .fold(0.0f64, f64::max);
        // Position 0 rounds nothing (and has no logarithm): left out as a zero.
        let angles = (fastest > 0.0 && shape.len() == 2).then(|| {
            let half_ulps: Vec<f64> = (0..rows)
                .map(|row| {
                    let angle = (start + row as u64) as f64 * fastest;
                    if angle > 0.0 {
                        crate::check::f32_ulp(angle) / 2.0
                    } else {
                        0.0
                    }
                })
                .collect();
            binned_log(&half_ulps)
        });
        Self {
            rows: CurveSet {
                errors: binned_log(&located.row_errors),
                allowed: binned_log(&allowed_by_row),
                angles,
            },
            columns: CurveSet {
                errors: binned_log(&located.column_errors),
                allowed: binned_log(&allowed_by_column),
                angles: None,
            },
        }
    }
}

/// Identifies `values`, or compares them with `spec`'s table.
pub(super) fn compute_outcome(
    name: String,
    spec: Option<TableSpec>,
    values: &ArrayD<f64>,
    stored: Option<crate::import::StoredFloat>,
    explicit: Option<Tolerance>,
) -> Outcome {
    let tolerance = explicit.unwrap_or_default();
    // Where the file differs from identify's closest reading, as identify found it.
    let mut identified_differs = None;
    // What the view shows above its own list of where the file differs, when not the report.
    let mut identified_summary = None;
    let (title, report, comparison, reference) = match spec {
        None if values.len() > MAX_ELEMENTS => (
            name,
            format!(
                "{} values: too many to identify (at most {MAX_ELEMENTS})",
                values.len()
            ),
            None,
            None,
        ),
        None => {
            let stored = stored.filter(|_| explicit.is_none());
            let mut identification = identify(values, tolerance, stored);
            let report = identification.report();
            identified_summary = Some(identification.summary());
            identified_differs = identification.closest_differs.take();
            let best = identification.best();
            (
                name,
                report,
                best.map(|c| c.comparison.clone()),
                best.map(|c| c.reference.clone()),
            )
        }
        Some(spec) => {
            let computed = spec
                .check_fits(crate::engine::available_memory_bytes())
                .map_err(|e| e.to_string())
                .and_then(|_| cpu::compute(&spec).map_err(|e| e.to_string()));
            let computed = computed.and_then(|table| {
                match crate::check::grid_contradiction(&spec, values.shape()) {
                    Some(problem) => Err(problem),
                    None => Ok(table),
                }
            });
            match computed {
                Ok(table) => {
                    let reference = squeezed(&table.into_real());
                    // A grid of rows ([H, W, D]) is checked as the table's [H*W, D], as
                    // `poslab check` reads it.
                    let grid = crate::check::leading_rows(values.shape()).and_then(|_| {
                        match crate::check::rows_as_reference(values.clone(), reference.shape()) {
                            (rows, Some(note)) => Some((rows, note)),
                            (_, None) => None,
                        }
                    });
                    let checked = grid.as_ref().map_or(values, |(rows, _)| rows);
                    let verdict =
                        crate::check::verdict(&spec, &reference, checked, stored, explicit);
                    let note = grid.map(|(_, n)| format!("{n}\n")).unwrap_or_default();
                    let envelopes = verdict
                        .located
                        .as_ref()
                        .map(|located| {
                            Envelopes::of(&verdict.comparison, &reference, located, Some(&spec))
                        })
                        .unwrap_or_default();
                    return Outcome {
                        title: format!("{name} as {}", spec.kind_name()),
                        report: format!("{note}{}", verdict.report()),
                        summary: format!("{note}{}", verdict.summary()),
                        matches: verdict.matches,
                        comparison: Some(verdict.comparison),
                        located: verdict.located.map(Arc::new),
                        envelopes: Arc::new(envelopes),
                        reference: Some(Arc::new(reference)),
                    };
                }
                Err(error) => (name, error, None, None),
            }
        }
    };
    let matches = comparison.as_ref().is_some_and(|c| c.matches());
    // The closest reading of a table identify does not quite match: where it differs.
    let located = match (&comparison, &reference) {
        _ if identified_differs.is_some() => identified_differs,
        (Some(comparison), Some(reference)) if !matches => crate::check::locate(
            comparison,
            reference,
            values,
            stored,
            crate::check::locate::DEFAULT_SHOWN,
        ),
        _ => None,
    };
    let envelopes = match (&comparison, &reference, &located) {
        (Some(comparison), Some(reference), Some(located)) => {
            Envelopes::of(comparison, reference, located, None)
        }
        _ => Envelopes::default(),
    };
    Outcome {
        title,
        summary: identified_summary.unwrap_or_else(|| report.clone()),
        report,
        matches,
        comparison,
        located: located.map(Arc::new),
        envelopes: Arc::new(envelopes),
        reference: reference.map(Arc::new),
    }
}

/// Reads a table to check (on a worker thread): a .safetensors file's tensors too, the one
/// asked for or its first.
pub(super) fn read_file(path: &Path, tensor: Option<String>) -> Result<Loaded, String> {
    let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
    let tensors = if TableFormat::from_path(path) == Some(TableFormat::Safetensors) {
        list_tensors(path).map_err(|e| e.to_string())?
    } else {
        Vec::new()
    };
    // A file of several tensors opens on its first; the picker changes it.
    let tensor = tensor.or_else(|| tensors.first().map(|t| t.name.clone()));
    let (values, stored) =
        read_table_typed(path, tensor.as_deref(), max_bytes).map_err(|e| e.to_string())?;
    Ok(Loaded {
        path: path.to_owned(),
        tensors,
        tensor,
        values: Arc::new(squeezed(&values)),
        stored,
        generation: 0,
    })
}

/// A picture made off the UI thread: its values, colours and range, and its colour map.
pub(super) type DrawnPicture = (HeatmapData, egui::ColorImage, (f64, f64), Colormap);

/// The pictures of an outcome (the reference, the file, their difference and, for a
/// mismatch, the map of elements outside): a job for a worker, since a 4096 x 4096 table is
/// 16M differences and three reductions.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct PicturesJob {
    #[serde(with = "crate::jobs::remote::bulk")]
    pub(super) values: Arc<ArrayD<f64>>,
    #[serde(with = "crate::jobs::remote::bulk")]
    pub(super) reference: Arc<ArrayD<f64>>,
    pub(super) head: usize,
    pub(super) colormap: Colormap,
    pub(super) reduce: Reduce,
    /// The comparison, when the map of the elements outside is drawn.
    pub(super) outside: Option<Comparison>,
}

/// A [`DrawnPicture`] as it crosses from a worker: its colours as RGBA bytes.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SentPicture {
    #[serde(with = "crate::jobs::remote::bulk")]
    values: ndarray::Array2<f64>,
    rows: crate::engine::Strided,
    cols: crate::engine::Strided,
    size: [usize; 2],
    #[serde(with = "crate::jobs::remote::bytes")]
    rgba: Vec<u8>,
    range: (f64, f64),
    colormap: Colormap,
}

impl SentPicture {
    fn of((data, image, range, colormap): DrawnPicture) -> Self {
        Self {
            values: data.values,
            rows: data.rows,
            cols: data.cols,
            size: image.size,
            rgba: bytemuck::cast_slice(&image.pixels).to_vec(),
            range,
            colormap,
        }
    }

    pub(super) fn drawn(self) -> DrawnPicture {
        let data = HeatmapData {
            values: self.values,
            rows: self.rows,
            cols: self.cols,
        };
        let mut pixels: Vec<egui::Color32> = bytemuck::pod_collect_to_vec(&self.rgba);
        pixels.resize(self.size[0] * self.size[1], egui::Color32::TRANSPARENT);
        let image = egui::ColorImage::new(self.size, pixels);
        (data, image, self.range, self.colormap)
    }
}

impl crate::jobs::remote::RemoteJob for PicturesJob {
    const NAME: &'static str = "check-pictures";
    type Output = Vec<SentPicture>;

    fn run(
        self,
        _progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        let (values, reference) = (self.values.as_ref(), self.reference.as_ref());
        let difference = (values - reference).mapv(|v| if v.is_nan() { 0.0 } else { v });
        // The difference is signed: a diverging map, white at zero.
        let mut pictures: Vec<DrawnPicture> = [
            (reference, self.colormap),
            (values, self.colormap),
            (&difference, Colormap::Diverging),
        ]
        .into_iter()
        .map(|(table, colormap)| drawn_picture(table, self.head, colormap, self.reduce))
        .collect();
        if let Some(comparison) = &self.outside {
            pictures.push(outside_picture(comparison, reference, values, self.head));
        }
        Ok(pictures.into_iter().map(SentPicture::of).collect())
    }
}

/// A 2-D slice of `table` (head `head` of a 3-D one; a 1-D one as a single row), every k-th
/// row and column beyond [`MAX_SHOWN`] reduced (mean, min or max), colour-mapped.
pub(super) fn drawn_picture(
    table: &ArrayD<f64>,
    head: usize,
    colormap: Colormap,
    reduce: Reduce,
) -> DrawnPicture {
    let (values, row_range, col_range) = drawn_slice(table, head, MAX_SHOWN, reduce);
    let data = HeatmapData {
        values,
        rows: row_range,
        cols: col_range,
    };
    let (image, range) = crate::widgets::heatmap::colour_image(&data, colormap, None);
    (data, image, range, colormap)
}

/// Cells a side of the map of elements outside the tolerance: as fine as the other pictures
/// (a block lights when any of its elements is outside); the view marks each lit block with at
/// least a few pixels, so that one bad element shows unzoomed and is exactly its cell zoomed in.
const OUTSIDE_SHOWN: usize = super::MAX_SHOWN;

/// The map of the elements outside `comparison`'s tolerance: 1 where any element of a block
/// is, 0 elsewhere.
pub(super) fn outside_picture(
    comparison: &Comparison,
    reference: &ArrayD<f64>,
    loaded: &ArrayD<f64>,
    head: usize,
) -> DrawnPicture {
    let mut mask = reference.clone();
    mask.zip_mut_with(loaded, |r, &l| {
        *r = if comparison.is_outside(*r, l) {
            1.0
        } else {
            0.0
        };
    });
    let (values, row_range, col_range) = drawn_slice(&mask, head, OUTSIDE_SHOWN, Reduce::Max);
    let data = HeatmapData {
        values,
        rows: row_range,
        cols: col_range,
    };
    let colormap = Colormap::Magma;
    let (image, _) = crate::widgets::heatmap::colour_image(&data, colormap, Some((0.0, 1.0)));
    (data, image, (0.0, 1.0), colormap)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One element outside among 512 x 128: the map lights that element's own cell and no
    /// other (a block of a dozen rows once lit for it, even zoomed in).
    #[test]
    fn the_outside_map_lights_one_bad_element_alone() {
        let reference =
            ndarray::Array2::from_shape_fn((512, 128), |(r, c)| ((r * 3 + c) as f64 * 0.01).sin())
                .into_dyn();
        let mut loaded = reference.clone();
        loaded[[300, 64]] += 1.0;
        let comparison = crate::check::compare(&reference, &loaded, Tolerance::default());
        let (data, _, _, _) = outside_picture(&comparison, &reference, &loaded, 0);
        let lit: Vec<(usize, usize)> = data
            .values
            .indexed_iter()
            .filter(|(_, v)| **v > 0.5)
            .map(|((r, c), _)| (data.rows.at(r), data.cols.at(c)))
            .collect();
        assert_eq!(lit, vec![(300, 64)]);
        assert_eq!((data.rows.step, data.cols.step), (1, 1));
    }

    /// The sinusoidal table of 64 positions and 16 dimensions, one element moved.
    fn sinusoidal_with_one_wrong() -> Arc<ArrayD<f64>> {
        let mut table = ndarray::Array2::from_shape_fn((64, 16), |(p, c)| {
            let angle = p as f64 / 10_000f64.powf((c / 2 * 2) as f64 / 16.0);
            if c % 2 == 0 { angle.sin() } else { angle.cos() }
        });
        table[[40, 3]] += 0.5;
        Arc::new(table.into_dyn())
    }

    /// What a Web Worker gives for each of the Check view's jobs is what the job gives here:
    /// identifying, comparing (a mismatch, so that every part of the outcome is there), a
    /// comparison whose words are wrong, reading a file from disk and from handed-over bytes,
    /// and the four pictures.
    #[test]
    fn the_check_views_jobs_give_the_same_through_parcels() {
        use crate::jobs::remote::same_through_parcels;
        let values = sinusoidal_with_one_wrong();
        for words in [
            None,
            Some(vec![
                "sinusoidal".to_owned(),
                "--seq".to_owned(),
                "64".to_owned(),
                "--dim".to_owned(),
                "16".to_owned(),
            ]),
            Some(vec![
                "sinusoidal".to_owned(),
                "--dim".to_owned(),
                "7".to_owned(),
            ]),
        ] {
            same_through_parcels(|| CheckJob {
                name: "table.npy".to_owned(),
                words: words.clone(),
                values: values.clone(),
                stored: Some(crate::import::StoredFloat::F32),
                explicit: None,
            })
            .expect("the same outcome");
        }
        let folder = std::env::temp_dir().join(format!("poslab-load-job-{}", std::process::id()));
        std::fs::create_dir_all(&folder).expect("a temporary folder");
        let path = folder.join("table.npy");
        ndarray_npy::write_npy(&path, &values.mapv(|v| v as f32)).expect("written");
        same_through_parcels(|| LoadJob {
            path: path.clone(),
            tensor: None,
            handed_over: None,
        })
        .expect("the same file read from disk");
        let bytes: Arc<[u8]> = std::fs::read(&path).expect("read back").into();
        let cancel = crate::jobs::Cancel::default();
        let progress = crate::jobs::remote::Progress::new(&cancel, &|_| {}, &|_| {});
        let dropped = crate::jobs::remote::RemoteJob::run(
            LoadJob {
                path: "dropped.npy".into(),
                tensor: None,
                handed_over: Some(bytes.clone()),
            },
            &progress,
        )
        .expect("run")
        .expect("the handed-over file is read");
        assert_eq!(dropped.values.shape(), &[64, 16]);
        same_through_parcels(|| LoadJob {
            path: "dropped.npy".into(),
            tensor: None,
            handed_over: Some(bytes.clone()),
        })
        .expect("the same file read from its bytes");
        let _ = std::fs::remove_dir_all(&folder);
        let reference = Arc::new(values.mapv(|v| v.round()));
        let comparison = crate::check::compare(&reference, &values, Tolerance::default());
        same_through_parcels(|| PicturesJob {
            values: values.clone(),
            reference: reference.clone(),
            head: 0,
            colormap: Colormap::Viridis,
            reduce: Reduce::Mean,
            outside: Some(comparison.clone()),
        })
        .expect("the same pictures");
    }
}
