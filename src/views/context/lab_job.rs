//! The context lab's charts as a job for a worker (see [`crate::jobs::remote`]): on the web a
//! Web Worker computes them, where the fit of a large rotary width takes seconds.

use super::{LabKey, LabResults, context};

/// The lab's charts for some settings.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct LabJob {
    pub(super) key: LabKey,
    /// The model's fitted score, when already known.
    pub(super) fit: Option<Result<context::FittedScore, String>>,
}

impl crate::jobs::remote::RemoteJob for LabJob {
    const NAME: &'static str = "context-lab";
    type Output = LabResults;

    fn run(
        self,
        _progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        Ok(LabResults::compute(&self.key, self.fit))
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::LabJob;

    /// The lab's charts (the score, with its fit made in the job and handed in, and the decay)
    /// give the same through a Web Worker's parcels as here.
    #[test]
    fn the_lab_job_gives_the_same_through_parcels() {
        let view = ContextView::default();
        let curves = view.curves_key();
        let fit = context::FittedScore::fit(&curves.model, FIT_SEED);
        for (chart, fit) in [
            (Some(ContextChart::Score), None),
            (Some(ContextChart::Score), Some(fit)),
            (Some(ContextChart::Decay), None),
            (None, None),
        ] {
            crate::jobs::remote::same_through_parcels(|| LabJob {
                key: (curves.clone(), chart),
                fit: fit.clone(),
            })
            .expect("the same charts");
        }
    }
}
