//! Bindings for the phased K-armed engine (DP-KLUCB, DP-IMED, AdaP, AdaC,
//! DP-SE, phased private Thompson sampling, KL-UCB); built by
//! `dpbandits.learners.phased_mab`.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;

use super::errors::{unknown, IntoPy};
use super::karmed::{karmed_engine, ArmedCell};
use super::mab::reward_policy;
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::noise::NoiseSpec;
use crate::policy::delayed::{simulate_delayed, Delayed};
use crate::policy::mab::RewardRange;
use crate::policy::phased_mab::{PhaseSchedule, PhasedIndex, PhasedMab, PhasedMabConfig};

/// Phased K-armed engine; built by `dpbandits.learners.phased_mab`.
#[pyclass(frozen, module = "dpbandits._core", name = "PhasedMabEngine")]
pub struct PyPhasedMab {
    cell: ArmedCell<PhasedMab>,
}

karmed_engine! {
    PyPhasedMab, PhasedMab, _restore_phased_mab;

    #[new]
    #[pyo3(signature = (k, horizon, *, index="optimistic_kl", divergence_epsilon=None, explore=1.0, linear=0.0,
                        root=0.0, reward_var=1.0, noise_var=0.0, alpha=2.0, forget=false, min_len=None, epochs=None,
                        noise=Noise(NoiseSpec::Zero), secure=false, commit=true, lo=0.0, hi=1.0,
                        bounds="clip", seed=None))]
    fn new(
        py: Python<'_>,
        k: usize,
        horizon: u64,
        index: &str,
        divergence_epsilon: Option<f64>,
        explore: f64,
        linear: f64,
        root: f64,
        reward_var: f64,
        noise_var: f64,
        alpha: f64,
        forget: bool,
        min_len: Option<u64>,
        epochs: Option<(Vec<u64>, Vec<f64>)>,
        noise: Noise,
        secure: bool,
        commit: bool,
        lo: f64,
        hi: f64,
        bounds: &str,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let index = match index {
            "optimistic_kl" | "optimistic" => {
                PhasedIndex::Optimistic { kl: index == "optimistic_kl", divergence_epsilon, explore, linear, root }
            }
            "imed" => PhasedIndex::Imed { divergence_epsilon },
            "thompson" => PhasedIndex::Thompson { reward_var, noise_var },
            "elimination" => PhasedIndex::Elimination,
            _ => return unknown("index", "optimistic_kl, optimistic, imed, thompson or elimination", index),
        };
        let schedule = match epochs {
            Some((pulls, gaps)) => PhaseSchedule::Epochs { pulls, gaps },
            None => match min_len {
                Some(min_len) => PhaseSchedule::Adaptive { alpha, min_len, forget },
                None => PhaseSchedule::Geometric { alpha, forget },
            },
        };
        let config = PhasedMabConfig {
            k,
            horizon,
            index,
            schedule,
            noise: noise.0,
            secure,
            commit,
            rewards: RewardRange { lo, hi, policy: reward_policy(bounds)? },
        };
        let engine = PhasedMab::new(config, &seeds(seed)?).py_err()?;
        Ok(PyPhasedMab { cell: ArmedCell::new(py, Delayed::new(engine))? })
    }

    /// Sum of each arm's released phase sums (rewards normalised to [0, 1]).
    fn sums<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(self.cell.with(py, |d| d.released_sums().to_vec())?.into_pyarray(py))
    }

    /// Every release: rows (arm, first round, last round, length, released value).
    fn releases<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let flat: Vec<f64> = self.cell.with(py, |d| {
            d.releases().iter().flat_map(|r| [r.arm as f64, r.start as f64, r.end as f64, r.len as f64, r.value]).collect()
        })?;
        let rows = flat.len() / 5;
        flat.into_pyarray(py).reshape([rows, 5])
    }

    /// Tie-break rank of each arm (lower wins a tie).
    fn tie_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        Ok(self.cell.with(py, |d| d.tie_ranks().to_vec())?.into_pyarray(py))
    }

    /// Arms still active (DP-SE).
    fn active<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<bool>>> {
        Ok(self.cell.with(py, |d| d.active().to_vec())?.into_pyarray(py))
    }

    /// The configuration, for the simulation loop (one engine per replicate).
    fn _factory(&self, py: Python<'_>) -> PyResult<super::sim::PyLearnerFactory> {
        let config = self.cell.with(py, |d| d.config().clone())?;
        Ok(super::sim::PyLearnerFactory::with_entropy(config, false))
    }

    /// Audit runs: `count` fresh engines fed `rewards` (round i gets
    /// `rewards[i]`); the released value of the phase containing `round`.
    fn _audit_runs<'py>(
        &self,
        py: Python<'py>,
        rewards: Vec<f64>,
        round: usize,
        count: usize,
        seed: u64,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let config = self.cell.with(py, |d| d.config().clone())?;
        let out = py.detach(|| PhasedMab::audit_runs(&config, &rewards, round, count, seed)).py_err()?;
        Ok(out.into_pyarray(py))
    }

    /// Delayed-feedback simulation (`policy::delayed::simulate_delayed`)
    /// of this engine on Bernoulli arms of `means`: `horizon` rounds, each
    /// reward delivered after a uniform 0..=`max_delay` rounds; the
    /// pseudo-regret. The engine is played (GIL released).
    fn _simulate_delayed(
        &self,
        py: Python<'_>,
        means: Vec<f64>,
        horizon: u64,
        max_delay: u64,
        env_seed: u64,
    ) -> PyResult<f64> {
        let run = |d: &mut Delayed<PhasedMab>| simulate_delayed(d, &means, horizon, max_delay, env_seed);
        self.cell.detached(py, run)?.py_err()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyPhasedMab::register(m)?;
    Ok(())
}
