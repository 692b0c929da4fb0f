//! poslab: exact tables of transformer positional encodings.
//!
//! Data flows one way: parameters ([`encoding`]) → an engine ([`engine`]) → a table →
//! a file or a figure ([`export`]). The command line in [`cli`] drives that flow, reading a
//! table's name and options through [`table_args`] (as the app's Check view does); [`import`]
//! reads the arrays some tables take as input and tables computed elsewhere; [`check`]
//! compares such a table with poslab's, or identifies it; [`bench`] times the engines. The
//! desktop app lives in [`app`], its views in [`views`], its drawing pieces in [`widgets`] and
//! the geometry of its 3D views in [`scene`]. On wasm32 the same app runs as a web page
//! ([`web`], built by `web/build.sh`).

pub use eframe::egui;

pub mod app;
pub mod bench;
pub mod check;
pub mod cli;
pub mod colormap;
pub mod encoding;
pub mod engine;
pub mod export;
pub mod import;
pub mod jobs;
pub mod numbers;
pub mod options;
pub mod scene;
pub mod table_args;
pub mod ui;
pub mod views;
#[cfg(target_arch = "wasm32")]
pub mod web;
pub mod widgets;
