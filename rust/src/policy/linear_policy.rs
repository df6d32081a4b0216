//! A read-only LinUCB policy built from released values only: the
//! (V, u~) a LinUCB-type engine's next selection reads (its released,
//! regularised and possibly noisy Gram matrix and vector; for the
//! non-private engine, V^{-1} and theta) and the confidence width beta of
//! that round (Shariff & Sheffet 2018, Alg. 1, Eq. (1)). Serving it is
//! post-processing of releases: no privacy cost, and no statistic that
//! was not released.
//!
//! Its scores are computed by the kernels of the engine it came from, from
//! the same inputs, so on the same decision set it selects the row the
//! engine would have selected at that round, bit for bit. The exception is
//! an engine that has released nothing yet (the epoch statistics before
//! their first epoch ends, the reweighted engines before their first
//! release): its policy is the prior, whose scores tie up to the rounding
//! of ||x||; the policy plays their first maximum, the engine a row
//! uniformly at random ([`super::PreReleaseChoice`]; a policy holds no
//! generator).

use serde::{Deserialize, Serialize};

use super::first_argmax;
use super::linucb::ReleasedEstimates;
use crate::env::DecisionRows;
use crate::error::{Error, Result};

/// What a policy scores with.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub enum PolicyForm {
    /// A released (V, u~) (row-major d x d, and d); factored on load.
    Released { v: Vec<f64>, u: Vec<f64> },
    /// The exact V^{-1} (row-major) and theta = V^{-1} u of the non-private engine.
    Inverse { inverse: Vec<f64>, theta: Vec<f64> },
}

/// UCB_t(x) = <theta~_t, x> + beta_t ||x||_{V_t^{-1}} from frozen released
/// values.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinearPolicy {
    d: usize,
    beta: f64,
    form: PolicyForm,
    #[serde(skip)]
    est: Option<ReleasedEstimates>,
}

impl LinearPolicy {
    /// A policy from `form` and `beta`; V of a `Released` form must be
    /// positive definite (the engines hand over the pair that factored).
    pub fn new(d: usize, beta: f64, form: PolicyForm) -> Result<Self> {
        let (a, b) = match &form {
            PolicyForm::Released { v, u } => (v.len(), u.len()),
            PolicyForm::Inverse { inverse, theta } => (inverse.len(), theta.len()),
        };
        if d == 0 || a != d * d || b != d {
            return Err(Error::Decode(format!("a linear policy of dimension {d} needs {} and {d} entries", d * d)));
        }
        if !beta.is_finite() {
            return Err(Error::Decode("a linear policy needs a finite beta".into()));
        }
        let mut policy = LinearPolicy { d, beta, form, est: None };
        policy.prepare()?;
        Ok(policy)
    }

    fn prepare(&mut self) -> Result<()> {
        if self.est.is_some() {
            return Ok(());
        }
        let d = self.d;
        let mut est = ReleasedEstimates::new(d);
        if let PolicyForm::Released { v, u } = &self.form {
            est.v.copy_from_slice(v);
            est.u.copy_from_slice(u);
            if !est.factor_release_only(d) {
                return Err(Error::Decode("the policy's released V is not positive definite".into()));
            }
        } else if let PolicyForm::Inverse { theta, .. } = &self.form {
            est.set_theta_direct(theta);
        }
        self.est = Some(est);
        Ok(())
    }

    pub fn d(&self) -> usize {
        self.d
    }

    pub fn beta(&self) -> f64 {
        self.beta
    }

    pub fn form(&self) -> &PolicyForm {
        &self.form
    }

    /// theta~ = V^{-1} u~.
    pub fn theta(&mut self) -> Result<Vec<f64>> {
        self.prepare()?;
        Ok(self.est.as_ref().expect("prepared").theta().to_vec())
    }

    /// The UCB of every row of `set`.
    pub fn scores(&mut self, set: DecisionRows<'_>) -> Result<&[f64]> {
        super::check_decision_set(set, self.d)?;
        self.prepare()?;
        let est = self.est.as_mut().expect("prepared");
        Ok(match &self.form {
            PolicyForm::Released { .. } => est.score(set, self.beta, None),
            PolicyForm::Inverse { inverse, .. } => est.score(set, self.beta, Some(inverse)),
        })
    }

    /// The row of `set` with the largest UCB (the first of ties); a set
    /// with a NaN or infinite entry is refused.
    pub fn select(&mut self, set: DecisionRows<'_>) -> Result<usize> {
        let scores = self.scores(set)?;
        let best = first_argmax(scores);
        if !scores.iter().all(|s| s.is_finite()) && !crate::error::all_finite(set.features) {
            return Err(Error::invalid("decision_set", "contains NaN or infinite entries"));
        }
        Ok(best)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let p: LinearPolicy = crate::state::decode(bytes)?;
        LinearPolicy::new(p.d, p.beta, p.form)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_refuses_a_singular_gram_and_wrong_sizes() {
        let bad = PolicyForm::Released { v: vec![0.0; 4], u: vec![0.0; 2] };
        assert!(LinearPolicy::new(2, 1.0, bad).is_err());
        let short = PolicyForm::Released { v: vec![1.0; 3], u: vec![0.0; 2] };
        assert!(LinearPolicy::new(2, 1.0, short).is_err());
    }

    #[test]
    fn scores_are_the_definition_and_bytes_round_trip() {
        let v = vec![2.0, 0.5, 0.5, 1.0];
        let u = vec![1.0, -1.0];
        let mut p = LinearPolicy::new(2, 0.7, PolicyForm::Released { v: v.clone(), u: u.clone() }).unwrap();
        // V^{-1} = [[1, -0.5], [-0.5, 2]] / 1.75.
        let inv = [1.0 / 1.75, -0.5 / 1.75, -0.5 / 1.75, 2.0 / 1.75];
        let theta = [inv[0] * u[0] + inv[1] * u[1], inv[2] * u[0] + inv[3] * u[1]];
        let x = [0.3, -0.8, 1.0, 0.0];
        let scores = p.scores(DecisionRows { k: 2, d: 2, features: &x }).unwrap().to_vec();
        for (i, s) in scores.iter().enumerate() {
            let r = &x[2 * i..2 * i + 2];
            let quad = r[0] * (inv[0] * r[0] + inv[1] * r[1]) + r[1] * (inv[2] * r[0] + inv[3] * r[1]);
            let want = theta[0] * r[0] + theta[1] * r[1] + 0.7 * quad.sqrt();
            assert!((s - want).abs() < 1e-12 * want.abs().max(1.0), "{s} vs {want}");
        }
        let mut q = LinearPolicy::from_bytes(&p.to_bytes()).unwrap();
        let again = q.scores(DecisionRows { k: 2, d: 2, features: &x }).unwrap().to_vec();
        assert_eq!(
            scores.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
            again.iter().map(|s| s.to_bits()).collect::<Vec<_>>()
        );
    }
}
