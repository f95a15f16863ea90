//! vdbench's curve: at each point the uncontrolled maximum, then open-loop runs at fractions
//! of it, so IOPS against response time is drawn at loads the user chose.

use super::Point;
use super::doc::CurveResult;
use super::mode::{StudyMode, mistake};
use super::runner::{Runner, specs_of};
use crate::config::{ConfigError, Curve, Job, StudyConfig};
use crate::error::Result;

impl StudyMode for Curve {
    fn check(&self, _: &StudyConfig) -> std::result::Result<(), ConfigError> {
        if self.fractions.is_empty() || self.fractions.iter().any(|f| !(*f > 0.0 && *f <= 1000.0)) {
            return Err(mistake(
                "curve",
                Some("fractions"),
                "fractions: give % of the maximum above 0 (and at most 1000)",
            ));
        }
        Ok(())
    }

    /// Per point and specification, the maximum and each fraction.
    fn planned(&self, job: &Job, points: usize) -> Option<usize> {
        Some(points * specs_of(job).len() * (1 + self.fractions.len()))
    }

    /// At each point, for each access specification: the maximum, then each fraction of it.
    fn run(&self, r: &mut Runner, points: &[Point]) -> Result<()> {
        let specs = specs_of(&r.base);
        for point in points {
            for spec in &specs {
                let label = |p: &Point| format!("curve {} {}", spec.as_deref().unwrap_or(""), p.label());
                let max = r.measure(point, spec.as_deref(), &label(point))?;
                let max_iops = r.doc.points[max].summary[0].iops.median;
                let mut at = Vec::new();
                for &f in &self.fractions {
                    let p = Point { rate_pct: Some(f), rate_iops: Some(max_iops * f / 100.0), ..point.clone() };
                    at.push(r.measure(&p, spec.as_deref(), &label(&p))?);
                }
                let spec = r.doc.points[max].summary[0].spec.clone();
                r.doc.curves.push(CurveResult { params: point.clone(), spec, max, points: at });
            }
        }
        Ok(())
    }
}
