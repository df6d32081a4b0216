//! The stochastic linear bandit of Hanna, Girgis, Fragouli & Diggavi,
//! Sec. VI: a fixed set of K actions in R^d (given, or drawn uniformly on
//! the unit sphere), theta* uniform on the unit sphere, and bounded rewards
//! y in {-1, +1} with mean <a, theta*> (|y| <= 1 and the noise is
//! 1-subgaussian, Assumption 1). The decision set is the same K x d matrix
//! every round.

use rand::Rng;
use rand_distr::StandardNormal;

use super::{DecisionSet, Environment, Feedback};
use crate::error::{check_finite, try_with_capacity, Error, Result};
use crate::rng::{SeedSequence, SimulationRng};

/// What a simulation needs to build one instance per replicate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinearBanditConfig {
    pub k: usize,
    pub d: usize,
    /// The K x d actions (row-major), or `None` to draw K uniform unit
    /// actions per instance.
    pub actions: Option<Vec<f64>>,
}

impl super::EnvironmentFactory for LinearBanditConfig {
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Environment>> {
        Ok(Box::new(LinearBanditEnv::new(self.clone(), seeds)?))
    }
}

/// Sec. VI's linear bandit.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LinearBanditEnv {
    config: LinearBanditConfig,
    actions: Vec<f64>,
    theta: Vec<f64>,
    means: Vec<f64>,
    best: f64,
    current: Option<usize>,
    rewards: SimulationRng,
    /// Address of the buffer last written by `next_round` (0: none).
    #[serde(skip)]
    written_to: usize,
}

impl LinearBanditEnv {
    /// A new instance: actions (when not given) from `seeds`'
    /// `"environment/actions"` stream, theta* from `"environment/theta"`,
    /// reward noise from `"environment/rewards"`.
    pub fn new(config: LinearBanditConfig, seeds: &SeedSequence) -> Result<Self> {
        let (k, d) = (config.k, config.d);
        if k == 0 || d == 0 {
            return Err(Error::invalid("k", format!("need K >= 1 and d >= 1, got K = {k}, d = {d}")));
        }
        // The K x d actions and the d-vectors are allocated fallibly below:
        // impossible sizes are errors naming the argument, never an abort.
        let entries = k.checked_mul(d).ok_or_else(|| Error::Allocation {
            name: "actions",
            what: format!("K d = {k} x {d} action entries (overflow)"),
        })?;
        drop(try_with_capacity::<f64>("d", d)?);
        let actions = if let Some(a) = &config.actions {
            if a.len() != entries {
                return Err(Error::invalid("actions", format!("length {} is not K d = {}", a.len(), entries)));
            }
            check_finite("actions", a)?;
            for (i, row) in a.chunks_exact(d).enumerate() {
                let n2: f64 = row.iter().map(|v| v * v).sum();
                if n2 > 1.0 + 1e-9 {
                    return Err(Error::invalid(
                        "actions",
                        format!("row {i} has norm {} > 1 (Assumption 1: ||a|| <= 1)", n2.sqrt()),
                    ));
                }
            }
            a.clone()
        } else {
            let mut rng = seeds.simulation_stream("environment/actions");
            let mut out = try_with_capacity("actions", entries)?;
            for _ in 0..k {
                out.extend(unit_vector(&mut rng, d));
            }
            out
        };
        let theta = unit_vector(&mut seeds.simulation_stream("environment/theta"), d);
        let means: Vec<f64> = actions
            .chunks_exact(d)
            .map(|a| a.iter().zip(&theta).map(|(x, t)| x * t).sum::<f64>().clamp(-1.0, 1.0))
            .collect();
        let best = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Ok(LinearBanditEnv {
            config,
            actions,
            theta,
            means,
            best,
            current: None,
            rewards: seeds.simulation_stream("environment/rewards"),
            written_to: 0,
        })
    }

    pub fn config(&self) -> &LinearBanditConfig {
        &self.config
    }

    pub fn actions(&self) -> &[f64] {
        &self.actions
    }

    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// <a, theta*> for every action.
    pub fn means(&self) -> &[f64] {
        &self.means
    }

    /// A +-1 reward with mean <a_index, theta*>.
    pub fn draw(&mut self, index: usize) -> Result<f64> {
        let mean = *self
            .means
            .get(index)
            .ok_or_else(|| Error::invalid("index", format!("must be < {}, got {index}", self.config.k)))?;
        Ok(if self.rewards.random::<f64>() < 0.5 * (1.0 + mean) { 1.0 } else { -1.0 })
    }

    /// Serialized state (generator included).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// Restores an environment written by [`LinearBanditEnv::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let env: LinearBanditEnv = crate::state::decode(bytes)?;
        let (k, d) = (env.config.k, env.config.d);
        if k.checked_mul(d) != Some(env.actions.len()) || env.theta.len() != d || env.means.len() != k {
            return Err(Error::Decode("inconsistent environment state".into()));
        }
        Ok(env)
    }
}

/// A uniform unit vector in R^d.
fn unit_vector(rng: &mut SimulationRng, d: usize) -> Vec<f64> {
    loop {
        let v: Vec<f64> = (0..d).map(|_| rng.sample::<f64, _>(StandardNormal)).collect();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > 1e-12 {
            return v.into_iter().map(|x| x / n).collect();
        }
    }
}

impl Environment for LinearBanditEnv {
    fn dim(&self) -> usize {
        self.config.d
    }

    fn num_actions(&self) -> usize {
        self.config.k
    }

    fn next_round(&mut self, _t: u64, set: &mut DecisionSet) -> Result<()> {
        // The set is fixed: written once into the loop's buffer (the loop
        // lends it to learners immutably). Comparing K d entries every round
        // would cost more than the learner, so the buffer is recognised by
        // its address; any other buffer is (re)written.
        let address = set.features.as_ptr() as usize;
        if set.k != self.config.k || set.d != self.config.d || address != self.written_to {
            set.k = self.config.k;
            set.d = self.config.d;
            set.features.clone_from(&self.actions);
            self.written_to = set.features.as_ptr() as usize;
        }
        self.current = None;
        Ok(())
    }

    fn feedback(&mut self, index: usize) -> Result<Feedback<'_>> {
        self.current = Some(index);
        Ok(Feedback::Reward(self.draw(index)?))
    }

    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        // One uniform per round, shared (common random numbers): each
        // learner's reward is what it would get alone on the same seed.
        let u: f64 = self.rewards.random();
        for (&i, y) in indices.iter().zip(out.iter_mut()) {
            let mean = *self
                .means
                .get(i)
                .ok_or_else(|| Error::invalid("index", format!("must be < {}, got {i}", self.config.k)))?;
            *y = if u < 0.5 * (1.0 + mean) { 1.0 } else { -1.0 };
        }
        Ok(())
    }

    fn regret(&self, index: usize) -> Option<f64> {
        self.means.get(index).map(|m| self.best - m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewards_have_the_linear_mean() {
        let cfg = LinearBanditConfig { k: 5, d: 3, actions: None };
        let mut env = LinearBanditEnv::new(cfg, &SeedSequence::from_seed(7)).unwrap();
        let n = 40_000;
        let mut sum = 0.0;
        for _ in 0..n {
            sum += env.draw(2).unwrap();
        }
        // Var(y) <= 1: 5 standard errors.
        assert!((sum / f64::from(n) - env.means()[2]).abs() < 5.0 / f64::from(n).sqrt());
        let norm: f64 = env.theta().iter().map(|t| t * t).sum();
        assert!((norm - 1.0).abs() < 1e-12);
    }

    #[test]
    fn set_is_written_once_and_stays_fixed() {
        let cfg = LinearBanditConfig { k: 4, d: 2, actions: None };
        let mut env = LinearBanditEnv::new(cfg, &SeedSequence::from_seed(1)).unwrap();
        let mut set = DecisionSet::default();
        env.next_round(1, &mut set).unwrap();
        let first = set.clone();
        env.next_round(2, &mut set).unwrap();
        assert_eq!(first, set);
        assert_eq!(set.features, env.actions());
    }

    #[test]
    fn long_actions_are_refused() {
        let cfg = LinearBanditConfig { k: 1, d: 2, actions: Some(vec![1.0, 1.0]) };
        assert!(LinearBanditEnv::new(cfg, &SeedSequence::from_seed(1)).is_err());
    }
}
