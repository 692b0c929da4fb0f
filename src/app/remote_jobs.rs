//! Every job a Web Worker can run (see [`crate::jobs::remote`]): the registry the worker finds
//! a job's name in. A view's job that is a [`crate::jobs::remote::RemoteJob`] is listed here.

use crate::jobs::remote::RemoteEntry;

pub const REGISTRY: &[RemoteEntry] = &[
    RemoteEntry::of::<crate::views::sinusoidal::ColumnJob>(),
    RemoteEntry::of::<crate::views::dot_decay::DecayJob>(),
    RemoteEntry::of::<crate::views::corkscrew::SceneKey>(),
    RemoteEntry::of::<crate::views::precision::PrecisionJob>(),
    RemoteEntry::of::<crate::views::axes::Key>(),
    RemoteEntry::of::<crate::views::tour::FrameJob>(),
    RemoteEntry::of::<crate::views::learned::AnalysisJob>(),
    RemoteEntry::of::<crate::views::context::LabJob>(),
    RemoteEntry::of::<crate::views::check::outcome::CheckJob>(),
    RemoteEntry::of::<crate::views::check::outcome::LoadJob>(),
    RemoteEntry::of::<crate::views::check::outcome::PicturesJob>(),
];
