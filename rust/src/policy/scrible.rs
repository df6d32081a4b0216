//! Private SCRiBLe over the Euclidean ball (Agarwal & Singh 2017, Alg. 4
//! with A = SCRiBLe of Abernethy, Hazan & Rakhlin 2012; Thm 4.5).
//!
//! Barrier R(x) = -log(1 - ||x||^2) (self-concordance nu = 1). With
//! s = 1 - ||x||^2 its Hessian is 2 I / s + 4 x x^T / s^2: eigenvalue
//! 2 (1 + ||x||^2) / s^2 along x and 2 / s on x's orthogonal complement.
//! Round t: pick an eigenvector e_i (i uniform) and a sign e = +-1, play
//! y_t = x_t + e lambda_i^{-1/2} e_i (a point of the Dikin ellipsoid, inside
//! the ball), observe the scalar loss <l_t, y_t>, forward
//! <l_t, y_t> + <Z_t, y_t> with Z_t ~ Lap^N(lambda) (Alg. 4 line 5), and
//! estimate l~_t = N (forwarded) e lambda_i^{1/2} e_i. The iterate is
//! x_{t+1} = argmin eta <sum_s l~_s, x> + R(x), in closed form
//! x = -r L / ||L|| with r = a / (1 + sqrt(1 + a^2)), a = eta ||L||: always
//! strictly inside the ball.
//!
//! The observed loss is <l_t, y_t> with ||l_t||_2 <= 1, so |loss| <= ||y_t||_2;
//! that is what the privacy proof bounds (Lemma 4.2), and it is enforced
//! (clip or error) before the noise is added.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{Geometry, Learner};
use crate::env::{DecisionSet, Feedback};
use crate::error::{check_finite, check_positive, try_filled, Error, Result};
use crate::noise::NoiseSpec;
use crate::rng::{SeedSequence, StreamRng};

/// Plain-number configuration of [`Scrible`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScribleConfig {
    /// Dimension N.
    pub n: usize,
    pub horizon: u64,
    /// Step size eta (Thm 4.5).
    pub eta: f64,
    /// Per-coordinate law of Z_t (Laplace(lambda), or zero: non-private).
    pub noise: NoiseSpec,
    /// Out-of-range losses are clipped (true) or refused.
    pub clip: bool,
}

/// The play of the current round, pending its loss.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Pending {
    /// Unit eigenvector e_i of the Hessian at x_t.
    direction: Vec<f64>,
    sign: f64,
    /// lambda_i, the eigenvalue of e_i.
    eigenvalue: f64,
}

/// SCRiBLe over the unit ball inside the private reduction.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scrible {
    config: ScribleConfig,
    /// Sum of the estimated (noisy) losses l~_s.
    cumulative: Vec<f64>,
    x: Vec<f64>,
    y: Vec<f64>,
    pending: Option<Pending>,
    t: u64,
    /// Recorded losses the bounds policy clipped into [-||y||, ||y||].
    clipped: u64,
    sampling: StreamRng,
    noise: StreamRng,
    z: Vec<f64>,
}

const STATE_VERSION: u8 = 1;

impl Scrible {
    /// A fresh engine at x_1 = argmin R = 0: exploration from `seeds`'
    /// `"sampling"` stream, reduction noise from `"reduction_noise"`.
    pub fn new(config: ScribleConfig, seeds: &SeedSequence) -> Result<Self> {
        if config.n < 1 {
            return Err(Error::invalid("n", "must be >= 1"));
        }
        if config.horizon < 1 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        check_positive("eta", config.eta)?;
        if !matches!(config.noise, NoiseSpec::Zero | NoiseSpec::Laplace { .. }) {
            return Err(Error::invalid("noise", "must be zero or Laplace (Alg. 4 with Lap^N(lambda))"));
        }
        config.noise.validate(&[config.n])?;
        let n = config.n;
        Ok(Scrible {
            config,
            cumulative: try_filled("n", n, 0.0)?,
            x: try_filled("n", n, 0.0)?,
            y: try_filled("n", n, 0.0)?,
            pending: None,
            t: 0,
            clipped: 0,
            sampling: seeds.stream("sampling"),
            noise: seeds.stream("reduction_noise"),
            z: try_filled("n", n, 0.0)?,
        })
    }

    pub fn config(&self) -> &ScribleConfig {
        &self.config
    }

    pub fn t(&self) -> u64 {
        self.t
    }

    /// The iterate x_t (strictly inside the ball).
    pub fn iterate(&self) -> &[f64] {
        &self.x
    }

    /// Chooses the round's point y_t (calling it again before `observe`
    /// returns the same point).
    pub fn select(&mut self) -> &[f64] {
        if self.pending.is_none() {
            let n = self.config.n;
            let i = self.sampling.random_range(0..n);
            let sign = if self.sampling.random::<bool>() { 1.0 } else { -1.0 };
            let r2: f64 = self.x.iter().map(|v| v * v).sum();
            let r = r2.sqrt();
            let s = 1.0 - r2;
            let mut direction = vec![0.0; n];
            let eigenvalue;
            if r == 0.0 {
                direction[i] = 1.0;
                eigenvalue = 2.0;
            } else {
                // Householder reflection H = I - 2 v v^T / (v^T v), v = e_0 - u,
                // maps e_0 to u = x / ||x||; its columns are an orthonormal
                // eigenbasis: column 0 radial, the others tangent.
                let u: Vec<f64> = self.x.iter().map(|v| v / r).collect();
                let mut v: Vec<f64> = u.iter().map(|ui| -ui).collect();
                v[0] += 1.0;
                let vv: f64 = v.iter().map(|a| a * a).sum();
                for (k, d) in direction.iter_mut().enumerate() {
                    let e = if k == i { 1.0 } else { 0.0 };
                    *d = if vv > 1e-24 { e - 2.0 * v[k] * v[i] / vv } else { e };
                }
                eigenvalue = if i == 0 { 2.0 * (1.0 + r2) / (s * s) } else { 2.0 / s };
            }
            let step = sign / eigenvalue.sqrt();
            for ((yk, xk), dk) in self.y.iter_mut().zip(&self.x).zip(&direction) {
                *yk = xk + step * dk;
            }
            self.pending = Some(Pending { direction, sign, eigenvalue });
        }
        &self.y
    }

    /// Records the loss <l, y> of a point y drawn around an earlier
    /// iterate `iterate` (a decision of a served policy: y = x + s
    /// lambda_i^{-1/2} e_i, a point of the Dikin ellipsoid at x). The
    /// estimate N <l, y>~ s lambda_i^{1/2} e_i equals N <l, y>~ w / ||w||^2
    /// with w = y - x (lambda_i = 1 / ||w||^2), so it needs only y and x.
    /// The learner's own outstanding selection, if any, is kept.
    pub fn observe_served(&mut self, y: &[f64], iterate: &[f64], loss: f64) -> Result<()> {
        let n = self.config.n;
        if y.len() != n || iterate.len() != n {
            return Err(Error::invalid("y", format!("needs {n} coordinates")));
        }
        check_finite("y", y)?;
        check_finite("iterate", iterate)?;
        let w: Vec<f64> = y.iter().zip(iterate).map(|(a, b)| a - b).collect();
        let ww: f64 = w.iter().map(|v| v * v).sum();
        if ww <= 0.0 || y.iter().map(|v| v * v).sum::<f64>() > 1.0 + 1e-9 {
            return Err(Error::invalid("y", "must be a point of the Dikin ellipsoid at the served iterate"));
        }
        let ev = 1.0 / ww;
        let direction: Vec<f64> = w.iter().map(|v| v * ev.sqrt()).collect();
        let own = (self.pending.take(), self.y.clone());
        self.y.copy_from_slice(y);
        self.pending = Some(Pending { direction, sign: 1.0, eigenvalue: ev });
        let out = self.observe(loss);
        if out.is_err() {
            self.pending = None;
        }
        self.pending = own.0;
        self.y = own.1;
        out
    }

    /// Records the loss <l_t, y_t> of the point returned by `select`.
    pub fn observe(&mut self, loss: f64) -> Result<()> {
        check_finite("loss", &[loss])?;
        if self.t >= self.config.horizon {
            return Err(Error::State(format!(
                "the horizon of {} rounds is used up; the noise was calibrated for it",
                self.config.horizon
            )));
        }
        let Some(p) = self.pending.take() else {
            return Err(Error::State("observe() needs a preceding select()".into()));
        };
        let bound = self.y.iter().map(|v| v * v).sum::<f64>().sqrt();
        let inside = loss.abs() <= bound * (1.0 + 1e-12);
        let loss = if inside {
            loss
        } else if self.config.clip {
            loss.clamp(-bound, bound)
        } else {
            self.pending = Some(p);
            return Err(Error::invalid(
                "loss",
                format!("must be <l, y> with ||l||_2 <= 1, so |loss| <= ||y||_2 = {bound}; got {loss}"),
            ));
        };
        self.config.noise.sample_into(&mut self.noise, 0, &mut self.z);
        let forwarded = loss + self.z.iter().zip(&self.y).map(|(a, b)| a * b).sum::<f64>();
        let n = self.config.n as f64;
        let coef = n * forwarded * p.sign * p.eigenvalue.sqrt();
        for (c, d) in self.cumulative.iter_mut().zip(&p.direction) {
            *c += coef * d;
        }
        let norm = self.cumulative.iter().map(|v| v * v).sum::<f64>().sqrt();
        let a = self.config.eta * norm;
        let radius = a / (1.0 + (1.0 + a * a).sqrt());
        for (xk, c) in self.x.iter_mut().zip(&self.cumulative) {
            *xk = if norm > 0.0 { -radius * c / norm } else { 0.0 };
        }
        self.clipped += u64::from(!inside);
        self.t += 1;
        Ok(())
    }

    /// Recorded losses the bounds policy clipped into [-||y||, ||y||].
    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    /// Draws future noise and exploration from a new root (`fork`).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.sampling = seeds.stream("sampling");
        self.noise = seeds.stream("reduction_noise");
    }

    /// Whether x_t is the iterate [`Scrible::observe`] computes from the
    /// estimated losses' sum (bit for bit; 0 before the first round), with
    /// that sum far from overflow (its squared norm at most 1e200: one more
    /// round cannot make the next iterate NaN).
    #[allow(clippy::float_cmp)] // the same computation on the same values
    fn iterate_follows_losses(&self) -> bool {
        let norm_sq = self.cumulative.iter().map(|v| v * v).sum::<f64>();
        if norm_sq.is_nan() || norm_sq > 1e200 {
            return false;
        }
        let norm = norm_sq.sqrt();
        let a = self.config.eta * norm;
        let radius = a / (1.0 + (1.0 + a * a).sqrt());
        self.x.iter().zip(&self.cumulative).all(|(xk, c)| {
            let expected = if self.t == 0 || norm == 0.0 { 0.0 } else { -radius * c / norm };
            xk.to_bits() == expected.to_bits() || (*xk == 0.0 && expected == 0.0)
        })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    #[allow(clippy::float_cmp)] // the sign is exactly +1 or -1
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        match bytes.split_first() {
            Some((&STATE_VERSION, body)) => {
                let e: Scrible = crate::state::decode(body)?;
                // The constructor's checks of the configuration; buffers of the
                // right length and finite; a pending play of the dimension.
                Scrible::new(e.config, &SeedSequence::from_seed(0))
                    .map_err(|err| Error::Decode(format!("SCRiBLe state with an invalid configuration: {err}")))?;
                let n = e.config.n;
                let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
                // The iterate lies strictly inside the unit ball (the barrier's
                // domain), and a pending play is a signed unit step along an
                // eigenvector with a positive eigenvalue, inside the ball.
                let inside = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>() < 1.0;
                let pending_ok = e.pending.as_ref().is_none_or(|p| {
                    p.direction.len() == n
                        && finite(&p.direction)
                        && (p.sign == 1.0 || p.sign == -1.0)
                        && p.eigenvalue.is_finite()
                        && p.eigenvalue > 0.0
                        && e.y.iter().map(|a| a * a).sum::<f64>() <= 1.0 + 1e-9
                });
                if e.cumulative.len() != n
                    || e.x.len() != n
                    || e.y.len() != n
                    || e.z.len() != n
                    || !(finite(&e.cumulative) && finite(&e.x) && finite(&e.y) && finite(&e.z))
                    || !pending_ok
                    || !inside(&e.x)
                    || !e.iterate_follows_losses()
                    || e.t > e.config.horizon
                    || e.clipped > e.t
                {
                    return Err(Error::Decode("inconsistent SCRiBLe state".into()));
                }
                Ok(e)
            }
            _ => Err(Error::Decode("unknown SCRiBLe state version".into())),
        }
    }
}

impl super::LearnerFactory for ScribleConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(Scrible::new(*self, seeds)?))
    }
}

impl Learner for Scrible {
    /// Draws the round's point y_t ([`Learner::played_point`]); the index
    /// is unused (0). The loop then feeds back the reward -<l_t, y_t>.
    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        if set.k != self.config.n {
            return Err(Error::invalid(
                "env",
                format!("the learner has dimension {}, the environment {}", self.config.n, set.k),
            ));
        }
        Scrible::select(self);
        Ok(0)
    }

    fn point_geometry(&self) -> Option<Geometry> {
        Some(Geometry::Ball)
    }

    /// y_t, the point whose loss is the bandit feedback.
    fn played_point(&self) -> Option<&[f64]> {
        Some(&self.y)
    }

    fn update(&mut self, _set: &DecisionSet, _index: usize, feedback: Feedback<'_>) -> Result<()> {
        match feedback {
            Feedback::Reward(y) => self.observe(-y),
            Feedback::Losses(_) => Err(Error::State("SCRiBLe is a bandit learner".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterates_stay_strictly_inside_and_plays_inside_the_ball() {
        let config =
            ScribleConfig { n: 3, horizon: 5000, eta: 0.05, noise: NoiseSpec::Laplace { scale: 3.0 }, clip: true };
        let mut e = Scrible::new(config, &SeedSequence::from_seed(1)).unwrap();
        let theta = [0.6, -0.8, 0.0];
        for _ in 0..5000 {
            let y = e.select().to_vec();
            assert!(y.iter().map(|v| v * v).sum::<f64>() <= 1.0 + 1e-9);
            let loss: f64 = y.iter().zip(&theta).map(|(a, b)| a * b).sum();
            e.observe(loss).unwrap();
            assert!(e.iterate().iter().map(|v| v * v).sum::<f64>() < 1.0);
        }
    }

    #[test]
    fn without_noise_the_iterate_moves_to_the_minimizer() {
        let config = ScribleConfig { n: 3, horizon: 20_000, eta: 0.01, noise: NoiseSpec::Zero, clip: true };
        let mut e = Scrible::new(config, &SeedSequence::from_seed(1)).unwrap();
        let theta = [0.6, -0.8, 0.0];
        for _ in 0..20_000 {
            let loss: f64 = e.select().iter().zip(&theta).map(|(a, b)| a * b).sum();
            e.observe(loss).unwrap();
        }
        // The loss <theta, x> is minimized over the ball at -theta.
        let dot: f64 = e.iterate().iter().zip(&theta).map(|(a, b)| a * b).sum();
        assert!(dot < -0.5, "{dot}");
    }

    #[test]
    fn hessian_directions_are_orthonormal_eigenvectors() {
        let config = ScribleConfig { n: 4, horizon: 10, eta: 1.0, noise: NoiseSpec::Zero, clip: true };
        let mut e = Scrible::new(config, &SeedSequence::from_seed(2)).unwrap();
        e.x = vec![0.3, -0.2, 0.5, 0.1];
        let r2: f64 = e.x.iter().map(|v| v * v).sum();
        let s = 1.0 - r2;
        for _ in 0..40 {
            e.pending = None;
            e.select();
            let p = e.pending.clone().unwrap();
            assert!((p.direction.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12);
            // H d = lambda d with H = 2 I / s + 4 x x^T / s^2.
            let xd: f64 = e.x.iter().zip(&p.direction).map(|(a, b)| a * b).sum();
            for (k, dk) in p.direction.iter().enumerate() {
                let hd = 2.0 * dk / s + 4.0 * e.x[k] * xd / (s * s);
                assert!((hd - p.eigenvalue * dk).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn bad_inputs_are_refused() {
        let config = ScribleConfig { n: 2, horizon: 2, eta: 1.0, noise: NoiseSpec::Zero, clip: false };
        let mut e = Scrible::new(config, &SeedSequence::from_seed(0)).unwrap();
        assert!(e.observe(0.1).is_err());
        e.select();
        assert!(e.observe(5.0).is_err());
        assert!(e.observe(0.0).is_ok());
        assert!(Scrible::new(ScribleConfig { eta: -1.0, ..config }, &SeedSequence::from_seed(0)).is_err());
    }
}
