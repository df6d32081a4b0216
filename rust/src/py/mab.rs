//! Bindings for the K-armed engines, the K-armed environments and the
//! Mishra–Thakurta contextual engine.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;

use super::errors::{unknown, IntoPy};
use super::karmed::{karmed_engine, ArmedCell};
use super::mechanisms::seeds;
use super::noise::Noise;
use super::sim::PyEnvironmentFactory;
use crate::counter::FactorSpec;
use crate::env::{ArmReward, Environment, Feedback, KArmedBandit, KArmedConfig};
use crate::noise::NoiseSpec;
use crate::policy::delayed::{simulate_delayed, Delayed};
use crate::policy::mab::Phase;
use crate::policy::{
    BoundsPolicy, ContextualRule, InputBounds, Mab, MabConfig, MabIndex, MabStatistics, MtContextual,
    MtContextualConfig, Phases, RewardPolicy, RewardRange,
};

/// (gaps, batch sizes, batch noise scales, random pulls) of the phases.
type PhaseLists = (Vec<f64>, Vec<u64>, Vec<Noise>, Vec<u64>);

/// A released (A~, b~) pair as arrays.
type Released<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<f64>>);

/// The reward-bounds policy from its Python name.
pub fn reward_policy(name: &str) -> PyResult<RewardPolicy> {
    match name {
        "clip" => Ok(RewardPolicy::Clip),
        "error" => Ok(RewardPolicy::Error),
        "unchecked" => Ok(RewardPolicy::Unchecked),
        _ => unknown("bounds", r#""clip", "error" or "unchecked""#, name),
    }
}

/// K-armed engine (UCB1, private UCB, Thompson sampling) under the
/// delayed-feedback reduction (`policy::delayed`), with its lock; built by
/// `dpbandits.learners.mab`.
#[pyclass(frozen, module = "dpbandits._core", name = "MabEngine")]
pub struct PyMab {
    cell: ArmedCell<Mab>,
}

karmed_engine! {
    PyMab, Mab, _restore_mab;

    #[new]
    #[pyo3(signature = (k, horizon, *, index="ucb", noise_bound=0.0, noise=None,
                        lo=0.0, hi=1.0, bounds="clip", phases=None, seed=None,
                        counter=None, theta=Vec::new(), omega=Vec::new()))]
    fn new(
        py: Python<'_>,
        k: usize,
        horizon: u64,
        index: &str,
        noise_bound: f64,
        noise: Option<Noise>,
        lo: f64,
        hi: f64,
        bounds: &str,
        phases: Option<PhaseLists>,
        seed: Option<u64>,
        counter: Option<&str>,
        theta: Vec<f64>,
        omega: Vec<f64>,
    ) -> PyResult<Self> {
        let index = match index {
            "ucb" => MabIndex::Ucb { noise_bound },
            "empirical" => MabIndex::Empirical,
            "thompson_beta" => MabIndex::ThompsonBeta,
            "thompson_gaussian" => MabIndex::ThompsonGaussian,
            _ => return unknown("index", "ucb, empirical, thompson_beta or thompson_gaussian", index),
        };
        let statistics = match noise {
            None => MabStatistics::Exact,
            Some(Noise(noise)) => match counter {
                None | Some("binary") => MabStatistics::Tree { noise },
                // Another counter per arm (see `dpbandits.privacy.factorization`).
                Some(c) => MabStatistics::Factorized {
                    noise,
                    factor: FactorSpec::new(&super::mechanisms::factorization(c, theta, omega)?).py_err()?,
                },
            },
        };
        let phases = phases.map(|(gaps, batch_sizes, batch_noise, random_pulls)| Phases {
            gaps,
            batch_sizes,
            random_pulls,
            batch_noise: batch_noise.into_iter().map(|n| n.0).collect(),
        });
        let config = MabConfig {
            k,
            horizon,
            statistics,
            index,
            rewards: RewardRange { lo, hi, policy: reward_policy(bounds)? },
            phases,
        };
        let engine = Mab::new(config, &seeds(seed)?).py_err()?;
        Ok(PyMab { cell: ArmedCell::new(py, Delayed::new(engine))? })
    }

    /// The per-arm reward sums the index reads (released ones when private).
    fn sums<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(self.cell.with(py, |d| d.sums())?.into_pyarray(py))
    }

    /// Released noisy batch means of the gap-estimation phase (batches x k).
    fn released_batch_means<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (rows, k) = self.cell.with(py, |d| (d.released_batch_means().to_vec(), d.config().k))?;
        let flat: Vec<f64> = rows.iter().flatten().copied().collect();
        flat.into_pyarray(py).reshape([rows.len(), k])
    }

    /// "gap", "random" or "index".
    #[getter]
    fn phase(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.cell.with(py, |d| match d.phase() {
            Phase::Gap { .. } => "gap",
            Phase::Random { .. } => "random",
            Phase::Index => "index",
        })
    }

    /// The configuration, for the simulation loop (one engine per replicate).
    fn _factory(&self, py: Python<'_>) -> PyResult<super::sim::PyLearnerFactory> {
        let (config, os) = self.cell.with(py, |d| (d.config().clone(), d.os_entropy()))?;
        Ok(super::sim::PyLearnerFactory::with_entropy(config, os))
    }

    /// Every privacy noise draw from the operating system from now on
    /// (secure mode; before the first round).
    fn use_os_entropy(&self, py: Python<'_>) -> PyResult<()> {
        self.cell.with(py, |d| d.engine_mut().use_os_entropy())?.py_err()
    }

    /// Whether privacy noise comes from the operating system.
    #[getter]
    fn os_entropy(&self, py: Python<'_>) -> PyResult<bool> {
        self.cell.with(py, |d| d.os_entropy())
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
        let run = |d: &mut Delayed<Mab>| simulate_delayed(d, &means, horizon, max_delay, env_seed);
        self.cell.detached(py, run)?.py_err()
    }
}

/// Mishra & Thakurta Alg. 3 / Alg. 4 engine; built by `dpbandits.learners.mishra_thakurta`.
#[pyclass(module = "dpbandits._core", name = "MtContextualEngine")]
pub struct PyMtContextual {
    inner: MtContextual,
}

engine_methods! {
    PyMtContextual { inner: MtContextual }, restore _restore_mt_contextual, shared [contextual, learner, secure, state],
    getters [fallbacks: u64, last_fallback: bool];

    #[new]
    #[pyo3(signature = (d, horizon, *, rule="ucb", alpha=1.0, noise_a=Noise(NoiseSpec::Zero), noise_b=Noise(NoiseSpec::Zero),
                        l=1.0, b_tilde=1.0, clip=true, seed=None, counter=None, theta=Vec::new(), omega=Vec::new()))]
    fn new(
        d: usize,
        horizon: u64,
        rule: &str,
        alpha: f64,
        noise_a: Noise,
        noise_b: Noise,
        l: f64,
        b_tilde: f64,
        clip: bool,
        seed: Option<u64>,
        counter: Option<&str>,
        theta: Vec<f64>,
        omega: Vec<f64>,
    ) -> PyResult<Self> {
        let counter = match counter {
            None | Some("binary") => None,
            Some(c) => Some(FactorSpec::new(&super::mechanisms::factorization(c, theta, omega)?).py_err()?),
        };
        let rule = match rule {
            "ucb" => ContextualRule::Ucb { alpha },
            "thompson" => ContextualRule::Thompson { alpha },
            _ => return unknown("rule", r#""ucb" or "thompson""#, rule),
        };
        let bounds = InputBounds { l, b_tilde, policy: if clip { BoundsPolicy::Clip } else { BoundsPolicy::Error } };
        let config = MtContextualConfig {
            d,
            horizon,
            rule,
            noise_a: noise_a.0,
            noise_b: noise_b.0,
            bounds,
            counter,
        };
        Ok(PyMtContextual { inner: MtContextual::new(config, &seeds(seed)?).py_err()? })
    }

    /// The released (A~, b~) the next selection reads.
    fn released<'py>(&self, py: Python<'py>) -> PyResult<Released<'py>> {
        let d = self.inner.config().d;
        let (a, b) = self.inner.released();
        Ok((a.into_pyarray(py).reshape([d, d])?, b.into_pyarray(py)))
    }
}

/// Bernoulli or Gaussian K-armed bandit, usable arm by arm from Python.
#[pyclass(module = "dpbandits._core", name = "KArmedBanditEngine")]
pub struct PyKArmedBandit {
    env: KArmedBandit,
}

engine_methods! {
    PyKArmedBandit { env: KArmedBandit }, restore _restore_k_armed_bandit, shared [state];

    #[new]
    #[pyo3(signature = (means, sigma=None, seed=None))]
    fn new(means: Vec<f64>, sigma: Option<f64>, seed: Option<u64>) -> PyResult<Self> {
        let reward = match sigma {
            None => ArmReward::Bernoulli,
            Some(sigma) => ArmReward::Gaussian { sigma },
        };
        let env = KArmedBandit::new(KArmedConfig { means, reward }, &seeds(seed)?).py_err()?;
        Ok(PyKArmedBandit { env })
    }

    /// Realized reward of pulling `arm` (one round).
    fn pull(&mut self, arm: usize) -> PyResult<f64> {
        match self.env.feedback(arm).py_err()? {
            Feedback::Reward(y) => Ok(y),
            Feedback::Losses(_) => unreachable!("bandit environment"),
        }
    }

    /// The arms' means.
    fn means<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.config().means.clone().into_pyarray(py)
    }

    /// The configuration, for the simulation loop.
    fn _factory(&self) -> PyEnvironmentFactory {
        PyEnvironmentFactory::new(self.env.config().clone())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyMab::register(m)?;
    PyMtContextual::register(m)?;
    PyKArmedBandit::register(m)?;
    Ok(())
}
