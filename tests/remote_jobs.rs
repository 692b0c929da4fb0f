//! The registry a Web Worker runs jobs from (`src/app/remote_jobs.rs`) lists every job written
//! as a `RemoteJob`, each under a name of its own: a job missing from it would fail only in a
//! browser, where the worker is told of a job it does not know. (Each job's own tests run it
//! through the parcels a worker gets and gives: `jobs::remote::same_through_parcels`.)

mod common;

use std::path::Path;

use poslab::app::remote_jobs::REGISTRY;
use poslab::jobs::remote::find;

#[test]
fn every_remote_job_is_registered_once_under_a_name_of_its_own() {
    let mut names: Vec<&str> = REGISTRY.iter().map(|entry| entry.name).collect();
    for name in &names {
        assert!(find(REGISTRY, name).is_some_and(|entry| entry.name == *name));
    }
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "a name given to two jobs: {names:?}");

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let registry = std::fs::read_to_string(root.join("src/app/remote_jobs.rs")).expect("read");
    let mut files = Vec::new();
    common::rust_files(&root.join("src"), &mut files);
    let mut jobs = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file");
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("impl ") else {
                continue;
            };
            let Some((trait_path, job)) = rest.split_once(" for ") else {
                continue;
            };
            if trait_path.ends_with("RemoteJob") && !trait_path.contains('<') {
                let job = job.trim_end_matches('{').trim().to_owned();
                assert!(
                    registry.contains(&format!("::{job}>()")),
                    "{job} ({}) is a RemoteJob missing from src/app/remote_jobs.rs",
                    file.display()
                );
                jobs.push(job);
            }
        }
    }
    assert_eq!(
        jobs.len(),
        REGISTRY.len(),
        "jobs {jobs:?}, registered {names:?}"
    );
}
