//! `poslab._poslab`: the Python package's native half. It holds no logic of its own: each
//! function turns Python values into the keywords and arrays of a `poslab::cli::keywords` call
//! and the result back into Python values. The Python half (`poslab/__init__.py`) gives them
//! their classes and documentation.
//!
//! Every call computes on a thread of its own with the GIL released, while the caller's thread
//! waits for it and for Ctrl+C: `KeyboardInterrupt` returns within a tenth of a second (a
//! table's work stops at its next block; a check's or an identification's is let finish
//! unheard). A panic in the library becomes a `RuntimeError`, never a crash.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use numpy::{IntoPyArray, PyReadonlyArrayDyn};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use poslab::check::identify::Identification;
use poslab::cli::check::{CheckReport, Handed};
use poslab::cli::keywords::{self, TableValues, Value};
use poslab::cli::permuted as permuted_check;
use poslab::cli::rotation as rotation_check;
use poslab::import::StoredFloat;
use poslab::table_args::CliError;

/// A library error as Python's: bad input (the command line's exit 2) is a `ValueError` with
/// the command line's message, anything else a `RuntimeError`.
fn to_python(error: CliError) -> PyErr {
    if error.exit_code == 2 {
        PyValueError::new_err(error.message)
    } else {
        PyRuntimeError::new_err(error.message)
    }
}

/// Runs `work` on a thread of its own with the GIL released, waiting for it and for Ctrl+C.
/// `cancel` is set when the caller is interrupted, for work that looks at it.
fn run<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce(&AtomicBool) -> Result<T, CliError> + Send + 'static,
) -> PyResult<T> {
    let cancel = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = std::sync::mpsc::channel();
    let flag = Arc::clone(&cancel);
    std::thread::Builder::new()
        .name("poslab".to_owned())
        .spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&flag)));
            // The caller may have gone (interrupted): then nobody hears this.
            let _ = sender.send(outcome);
        })
        .map_err(|e| PyRuntimeError::new_err(format!("could not start the work: {e}")))?;
    let mut receiver = receiver;
    loop {
        // The receiver goes with the wait and comes back: detached code shares nothing.
        let (back, received) = py.detach(move || {
            let received = receiver.recv_timeout(Duration::from_millis(100));
            (receiver, received)
        });
        receiver = back;
        match received {
            Ok(Ok(result)) => return result.map_err(to_python),
            Ok(Err(panic)) => {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "no message".to_owned());
                return Err(PyRuntimeError::new_err(format!(
                    "poslab failed inside (a bug: please report it): {why}"
                )));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    cancel.store(true, Ordering::Relaxed);
                    return Err(interrupt);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err("poslab's work stopped unheard"));
            }
        }
    }
}

/// One keyword's value: a bool, an int, a float, a str, or a list or tuple of them.
fn value(key: &str, object: &Bound<'_, PyAny>) -> PyResult<Value> {
    // bool first: Python's bools are ints too.
    if let Ok(b) = object.cast::<pyo3::types::PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = object.extract::<i64>() {
        return Ok(Value::Int(i));
    }
    if object.cast::<pyo3::types::PyInt>().is_ok() {
        return Err(PyValueError::new_err(format!(
            "{key}={object} is not allowed: the number is too large"
        )));
    }
    if let Ok(f) = object.extract::<f64>() {
        return Ok(Value::Float(f));
    }
    if let Ok(s) = object.extract::<String>() {
        return Ok(Value::Text(s));
    }
    if let Ok(list) = object.cast::<PyList>() {
        return list
            .iter()
            .map(|item| value(key, &item))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::List);
    }
    if let Ok(tuple) = object.cast::<pyo3::types::PyTuple>() {
        return tuple
            .iter()
            .map(|item| value(key, &item))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::List);
    }
    Err(PyValueError::new_err(format!(
        "{key}= takes a bool, a number, a str or a list of them, not {}",
        object.get_type().name()?
    )))
}

/// The keyword arguments as the library's keywords, in the order given.
fn keywords_of(options: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, Value)>> {
    let Some(options) = options else {
        return Ok(Vec::new());
    };
    options
        .iter()
        .map(|(key, object)| {
            let key: String = key.extract()?;
            let value = value(&key, &object)?;
            Ok((key, value))
        })
        .collect()
}

/// A table handed over: its values as f64, and the float type they were held in.
fn handed(
    values: Option<PyReadonlyArrayDyn<'_, f64>>,
    stored: Option<&str>,
) -> PyResult<Option<Handed>> {
    let Some(values) = values else {
        return Ok(None);
    };
    let stored = match stored {
        None => None,
        Some("float64") => Some(StoredFloat::F64),
        Some("float32") => Some(StoredFloat::F32),
        Some("float16") => Some(StoredFloat::F16),
        Some("bfloat16") => Some(StoredFloat::Bf16),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "stored={other:?} is not a float type poslab reads (float64, float32, float16, bfloat16)"
            )));
        }
    };
    Ok(Some(Handed {
        values: values.as_array().to_owned(),
        stored,
    }))
}

/// `poslab table KIND`: the table as a NumPy array (its memory handed over, not copied), the
/// notes the command line would print, and the seconds the library call took (for the
/// benchmark of what the binding adds).
#[pyfunction]
#[pyo3(signature = (kind, options=None))]
fn table<'py>(
    py: Python<'py>,
    kind: String,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Bound<'py, PyAny>, Vec<String>, f64)> {
    let keywords = keywords_of(options)?;
    let (computed, seconds) = run(py, move |cancel| {
        let started = std::time::Instant::now();
        let computed = keywords::table(&kind, &keywords, cancel)?;
        Ok((computed, started.elapsed().as_secs_f64()))
    })?;
    let array = match computed.values {
        TableValues::F32(values) => values.into_pyarray(py).into_any(),
        TableValues::F64(values) => values.into_pyarray(py).into_any(),
        TableValues::Index(values) => values.into_pyarray(py).into_any(),
    };
    Ok((array, computed.notes, seconds))
}

/// `poslab check`: the verdict's fields as a dict.
#[pyfunction]
#[pyo3(signature = (name, values, stored, kind, options=None))]
fn check<'py>(
    py: Python<'py>,
    name: String,
    values: Option<PyReadonlyArrayDyn<'py, f64>>,
    stored: Option<&str>,
    kind: String,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let keywords = keywords_of(options)?;
    let handed = handed(values, stored)?;
    let report = run(py, move |_| {
        keywords::check(&name, handed, &kind, &keywords)
    })?;
    verdict_dict(py, &report)
}

fn verdict_dict<'py>(py: Python<'py>, report: &CheckReport) -> PyResult<Bound<'py, PyDict>> {
    let verdict = &report.verdict;
    let comparison = &verdict.comparison;
    let dict = PyDict::new(py);
    dict.set_item("kind", report.kind)?;
    dict.set_item("matches", verdict.matches)?;
    dict.set_item("equivalent", verdict.matches && !comparison.matches())?;
    dict.set_item("rule", comparison.rule_text())?;
    dict.set_item("max_abs_error", comparison.max_abs_error())?;
    dict.set_item(
        "max_abs_index",
        comparison.max_abs.as_ref().map(|worst| worst.index.clone()),
    )?;
    dict.set_item("max_rel_error", comparison.max_rel_error())?;
    dict.set_item("bad_count", comparison.outside)?;
    let bad = PyList::empty(py);
    let mut diagnosis = None;
    if let Some(located) = &verdict.located {
        for cell in &located.worst {
            let item = PyDict::new(py);
            item.set_item("index", cell.index.clone())?;
            item.set_item("expected", cell.reference)?;
            item.set_item("got", cell.loaded)?;
            item.set_item("error", cell.error)?;
            item.set_item("ulp", cell.ulps)?;
            bad.append(item)?;
        }
        diagnosis = located.diagnosis_text();
    }
    dict.set_item("bad", bad)?;
    dict.set_item("diagnosis", diagnosis)?;
    dict.set_item("notes", verdict.notes.clone())?;
    dict.set_item("text", report.text.clone())?;
    Ok(dict)
}

/// `poslab identify`: the identification's fields as a dict.
#[pyfunction]
#[pyo3(signature = (name, values, stored, options=None))]
fn identify<'py>(
    py: Python<'py>,
    name: String,
    values: Option<PyReadonlyArrayDyn<'py, f64>>,
    stored: Option<&str>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let keywords = keywords_of(options)?;
    let handed = handed(values, stored)?;
    let identified = run(py, move |_| keywords::identify(&name, handed, &keywords))?;
    let dict = identification_dict(py, &identified.identification)?;
    match identified.table {
        Some((kind, options)) => {
            let keywords = PyDict::new(py);
            for (key, value) in &options {
                keywords.set_item(key, python_value(py, value)?)?;
            }
            dict.set_item("kind", kind)?;
            dict.set_item("options", keywords)?;
        }
        None => {
            dict.set_item("kind", py.None())?;
            dict.set_item("options", py.None())?;
        }
    }
    Ok(dict)
}

fn identification_dict<'py>(
    py: Python<'py>,
    identification: &Identification,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let text = identification.report();
    dict.set_item("matches", identification.found())?;
    dict.set_item(
        "description",
        identification.best().map(|best| best.description.clone()),
    )?;
    dict.set_item(
        "max_abs_error",
        identification
            .best()
            .map_or(f64::INFINITY, |best| best.comparison.max_abs_error()),
    )?;
    dict.set_item("line", identification.reading_line())?;
    dict.set_item("notes", identification.preface())?;
    dict.set_item(
        "runner_up",
        identification.candidates.get(1).map(|second| {
            (
                second.description.clone(),
                second.comparison.matches(),
                second.comparison.max_abs_error(),
            )
        }),
    )?;
    dict.set_item("text", text)?;
    Ok(dict)
}

/// A Python value of a keyword's value.
fn python_value<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Text(t) => t.into_pyobject(py)?.into_any(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(python_value(py, item)?)?;
            }
            list.into_any()
        }
    })
}

/// One RoPE of a config as a dict of fields.
fn rope_config_dict<'py>(
    py: Python<'py>,
    config: keywords::RopeConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let options = PyDict::new(py);
    for (key, value) in &config.options {
        options.set_item(key, python_value(py, value)?)?;
    }
    let sources = PyDict::new(py);
    for (key, source) in &config.sources {
        sources.set_item(key, source)?;
    }
    dict.set_item("model", config.model)?;
    dict.set_item("options", options)?;
    dict.set_item("attention_factor", config.attention_factor)?;
    dict.set_item("sources", sources)?;
    dict.set_item("warnings", config.warnings)?;
    dict.set_item("layer_type", config.layer_type)?;
    dict.set_item("layer_types", config.layer_types)?;
    dict.set_item("text", config.text)?;
    Ok(dict)
}

/// `poslab config FILE` of a RoPE model (the layer type named, or its one RoPE): its fields
/// as a dict.
#[pyfunction]
#[pyo3(signature = (path, layer_type=None))]
fn rope_config<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    layer_type: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let config = run(py, move |_| {
        keywords::rope_config(&path, layer_type.as_deref())
    })?;
    rope_config_dict(py, config)
}

/// Every RoPE of a config, one dict per layer type.
#[pyfunction]
fn rope_configs<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let configs = run(py, move |_| keywords::rope_configs(&path))?;
    configs
        .into_iter()
        .map(|config| rope_config_dict(py, config))
        .collect()
}

/// The head width and default positions of `assert_rope`.
#[pyfunction]
#[pyo3(signature = (dim, options=None))]
fn rotation_setup(
    py: Python<'_>,
    dim: Option<usize>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<(usize, Vec<i64>)> {
    let keywords = keywords_of(options)?;
    run(py, move |_| rotation_check::rotation_setup(dim, &keywords))
}

/// `assert_rope`'s check of what the user's function returned: the report's fields as a dict.
#[pyfunction]
#[pyo3(signature = (x, y, positions, dtype, atol=None, options=None))]
#[allow(clippy::too_many_arguments)]
fn rotation<'py>(
    py: Python<'py>,
    x: PyReadonlyArrayDyn<'py, f64>,
    y: PyReadonlyArrayDyn<'py, f64>,
    positions: Vec<i64>,
    dtype: &str,
    atol: Option<f64>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let keywords = keywords_of(options)?;
    let three = |a: PyReadonlyArrayDyn<'py, f64>, what: &str| {
        a.as_array()
            .to_owned()
            .into_dimensionality::<ndarray::Ix3>()
            .map_err(|_| PyValueError::new_err(format!("{what} must be [heads, positions, dim]")))
    };
    let dtype = match dtype {
        "float64" => StoredFloat::F64,
        "float32" => StoredFloat::F32,
        "float16" => StoredFloat::F16,
        "bfloat16" => StoredFloat::Bf16,
        other => {
            return Err(PyValueError::new_err(format!(
                "dtype={other:?} is not allowed: use float32, bfloat16, float16 or float64"
            )));
        }
    };
    let case = rotation_check::RotationCase {
        x: three(x, "x")?,
        y: three(y, "the output")?,
        positions,
        dtype,
        atol,
    };
    let report = run(py, move |_| {
        rotation_check::check_rotation(&keywords, &case)
    })?;
    let dict = PyDict::new(py);
    dict.set_item("passes", report.passes)?;
    dict.set_item("max_abs_error", report.max_abs_error)?;
    dict.set_item("rule", &report.rule)?;
    let worst = match &report.worst {
        Some(w) => {
            let item = PyDict::new(py);
            item.set_item("position", w.position)?;
            item.set_item("head", w.head)?;
            item.set_item("dim", w.dim)?;
            item.set_item("pair", report.pair_of(w.dim))?;
            item.set_item("expected", w.expected)?;
            item.set_item("got", w.got)?;
            Some(item)
        }
        None => None,
    };
    dict.set_item("worst", worst)?;
    let applied = PyDict::new(py);
    applied.set_item(
        "layout",
        report.applied.layout.map(|l| l.rope_name().to_owned()),
    )?;
    applied.set_item("gain", report.applied.gain)?;
    applied.set_item("expected_gain", report.applied.expected_gain)?;
    applied.set_item("changed_dims", report.applied.changed)?;
    applied.set_item("angles", report.applied.reading)?;
    dict.set_item("applied", applied)?;
    dict.set_item("causes", report.causes)?;
    dict.set_item("text", report.text)?;
    Ok(dict)
}

/// `assert_permutation`'s arguments checked before any weight is made.
#[pyfunction]
fn permutation_setup(
    heads: i64,
    kv_heads: Option<i64>,
    head_dim: i64,
    direction: &str,
) -> PyResult<()> {
    permuted_check::question_of(heads, kv_heads, head_dim, direction)
        .map(|_| ())
        .map_err(to_python)
}

/// `assert_permutation`'s check of what the user's permute function returned.
#[pyfunction]
#[pyo3(signature = (query, key, permuted_query, permuted_key, heads, kv_heads, head_dim, direction, seed))]
#[allow(clippy::too_many_arguments)]
fn permutation<'py>(
    py: Python<'py>,
    query: PyReadonlyArrayDyn<'py, f64>,
    key: PyReadonlyArrayDyn<'py, f64>,
    permuted_query: PyReadonlyArrayDyn<'py, f64>,
    permuted_key: PyReadonlyArrayDyn<'py, f64>,
    heads: i64,
    kv_heads: Option<i64>,
    head_dim: i64,
    direction: String,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let two = |a: PyReadonlyArrayDyn<'py, f64>, what: &str| {
        a.as_array()
            .to_owned()
            .into_dimensionality::<ndarray::Ix2>()
            .map_err(|_| {
                PyValueError::new_err(format!(
                    "{what} must be [rows, columns]: the function returns the weight it was given, its rows reordered"
                ))
            })
    };
    let case = permuted_check::PermuteCase {
        query: two(query, "W_q")?,
        key: two(key, "W_k")?,
        permuted_query: two(permuted_query, "what the function returned for W_q")?,
        permuted_key: two(permuted_key, "what the function returned for W_k")?,
        heads,
        kv_heads,
        head_dim,
        direction,
        seed,
    };
    let report = run(py, move |_| permuted_check::check_permute_function(&case))?;
    let dict = PyDict::new(py);
    dict.set_item("passes", report.passes)?;
    dict.set_item("wrong_heads", report.wrong_heads)?;
    dict.set_item("largest_change", report.largest_change)?;
    dict.set_item("positions", report.positions)?;
    dict.set_item("causes", report.causes)?;
    dict.set_item("text", report.text)?;
    Ok(dict)
}

/// The command line's words for `options` of `subcommand`, to show the command a call is.
#[pyfunction]
#[pyo3(signature = (subcommand, options=None))]
fn words(subcommand: &str, options: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<String>> {
    Ok(keywords::words(subcommand, &keywords_of(options)?))
}

/// A panic inside the library, for the test that it arrives as a `RuntimeError`.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    run(py, |_| -> Result<(), CliError> {
        panic!("a panic for the test")
    })
}

/// A call that waits until interrupted, for the test of Ctrl+C.
#[pyfunction]
fn _wait_for_test(py: Python<'_>, seconds: f64) -> PyResult<()> {
    run(py, move |cancel| {
        let until = std::time::Instant::now() + Duration::from_secs_f64(seconds.clamp(0.0, 60.0));
        while std::time::Instant::now() < until && !cancel.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    })
}

#[pymodule]
fn _poslab(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(table, module)?)?;
    module.add_function(wrap_pyfunction!(check, module)?)?;
    module.add_function(wrap_pyfunction!(identify, module)?)?;
    module.add_function(wrap_pyfunction!(words, module)?)?;
    module.add_function(wrap_pyfunction!(rotation_setup, module)?)?;
    module.add_function(wrap_pyfunction!(rotation, module)?)?;
    module.add_function(wrap_pyfunction!(permutation, module)?)?;
    module.add_function(wrap_pyfunction!(permutation_setup, module)?)?;
    module.add_function(wrap_pyfunction!(rope_config, module)?)?;
    module.add_function(wrap_pyfunction!(rope_configs, module)?)?;
    module.add_function(wrap_pyfunction!(_panic_for_test, module)?)?;
    module.add_function(wrap_pyfunction!(_wait_for_test, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
