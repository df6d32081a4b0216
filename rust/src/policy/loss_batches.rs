//! The round clock of the batched full-information engines (the private
//! experts learners and the lazy learner on the ball): the checks a round's
//! loss vector passes before it is recorded, the counts of rounds and of
//! clipped vectors, where the current batch ends, and the checks of a
//! restored clock. Also the [0, 1] bounds policy of the experts' losses and
//! the `Learner` plumbing these engines share.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::env::{DecisionSet, Feedback};
use crate::error::{check_finite, check_positive, Error, Result};
use crate::noise::{NoiseSpec, SecureKind};

/// Rounds recorded, the last round of the current batch and the clipped count.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct BatchClock {
    /// Rounds recorded.
    t: u64,
    /// Last round (1-based) of the current batch.
    batch_end: u64,
    /// Recorded loss vectors the bounds policy clipped.
    clipped: u64,
}

impl BatchClock {
    /// A clock at round 0 whose first batch ends at round `first_batch`.
    pub(crate) fn new(first_batch: u64) -> Self {
        BatchClock { t: 0, batch_end: first_batch, clipped: 0 }
    }

    pub(crate) fn t(&self) -> u64 {
        self.t
    }

    pub(crate) fn clipped(&self) -> u64 {
        self.clipped
    }

    /// Rounds left in the current batch.
    pub(crate) fn batch_remaining(&self) -> u64 {
        self.batch_end - self.t
    }

    /// Refuses a loss vector that is not of `n` finite entries, or a round
    /// past `horizon`.
    pub(crate) fn admit(&self, losses: &[f64], n: usize, horizon: u64) -> Result<()> {
        if losses.len() != n {
            return Err(Error::invalid("losses", format!("expected {n} entries, got {}", losses.len())));
        }
        if self.t >= horizon {
            return Err(Error::State(format!("the horizon of {horizon} rounds is used up")));
        }
        check_finite("losses", losses)
    }

    /// Counts a recorded round (`clipped`: the bounds policy changed it);
    /// true when the round closes the current batch.
    pub(crate) fn tick(&mut self, clipped: bool) -> bool {
        self.clipped += u64::from(clipped);
        self.t += 1;
        self.t == self.batch_end
    }

    /// Opens the next batch, of `len` rounds cut at `horizon`.
    pub(crate) fn open_batch(&mut self, len: u64, horizon: u64) {
        self.batch_end = self.t.saturating_add(len).min(horizon);
    }

    /// Whether a restored clock is one a run of `horizon` rounds can reach.
    pub(crate) fn consistent(&self, horizon: u64) -> bool {
        self.t <= horizon
            && self.clipped <= self.t
            && self.batch_end <= horizon
            && (self.t < self.batch_end || self.t == horizon)
    }
}

/// Refuses sizes no batched engine runs with: `n` (the argument `n_name`)
/// and `horizon` below 1, a batch length (the argument `batch_name`)
/// outside [1, horizon].
pub(crate) fn check_sizes(
    n_name: &'static str,
    n: usize,
    horizon: u64,
    batch_name: &'static str,
    batch: u64,
) -> Result<()> {
    if n < 1 {
        return Err(Error::invalid(n_name, "must be >= 1"));
    }
    if horizon < 1 {
        return Err(Error::invalid("horizon", "must be >= 1"));
    }
    if batch < 1 || batch > horizon {
        return Err(Error::invalid(batch_name, format!("must lie in [1, horizon = {horizon}], got {batch}")));
    }
    Ok(())
}

/// Refuses a lazy engine's learning rate `eta` unless finite and > 0, and
/// its switching floor `gamma` outside [0, 1).
pub(crate) fn check_lazy_rates(eta: f64, gamma: f64) -> Result<()> {
    check_positive("eta", eta)?;
    if !(0.0..1.0).contains(&gamma) {
        return Err(Error::invalid("gamma", format!("must lie in [0, 1), got {gamma}")));
    }
    Ok(())
}

/// The switching coin of the lazy engines at a batch's end: true (keep the
/// play) with probability (1 - gamma) exp(-eta loss), `loss` the play's
/// loss over the batch (shifted to be >= 0), and always once `switches`
/// reached `max_switches` (then no coin is drawn).
pub(crate) fn lazy_keeps(
    rng: &mut impl Rng,
    eta: f64,
    gamma: f64,
    loss: f64,
    switches: u64,
    max_switches: u64,
) -> bool {
    if switches >= max_switches {
        return true;
    }
    let keep = (1.0 - gamma) * (-eta * loss).exp();
    rng.random::<f64>() < keep
}

/// Whether `noise` is zero, Laplace or lattice Laplace: the noise of the
/// engines' noisy batch statistics.
pub(crate) fn is_laplace_family(noise: &NoiseSpec) -> bool {
    noise.lattice().is_some_and(|s| matches!(s.kind(), SecureKind::Laplace { .. }))
        || matches!(noise, NoiseSpec::Zero | NoiseSpec::Laplace { .. })
}

/// Clips (or, with `clip` false, refuses) losses outside [0, 1]; true when
/// it clipped.
pub(crate) fn clip_unit(values: &mut [f64], clip: bool) -> Result<bool> {
    if let Some(v) = values.iter().find(|v| !(0.0..=1.0).contains(*v)) {
        if !clip {
            return Err(Error::invalid("losses", format!("must lie in [0, 1], got {v}")));
        }
        for v in values.iter_mut() {
            *v = v.clamp(0.0, 1.0);
        }
        return Ok(true);
    }
    Ok(false)
}

/// `Learner::select` of an experts engine with `n` experts playing `current`.
pub(crate) fn expert_in(set: &DecisionSet, n: usize, current: usize) -> Result<usize> {
    if set.k != n {
        return Err(Error::invalid("env", format!("the learner has {n} experts, the environment {}", set.k)));
    }
    Ok(current)
}

/// The loss vector of a full-information round.
pub(crate) fn loss_vector(feedback: Feedback<'_>) -> Result<&[f64]> {
    match feedback {
        Feedback::Losses(l) => Ok(l),
        Feedback::Reward(_) => Err(Error::State("a full-information learner needs the loss vector".into())),
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // clamping to 0 and 1 is exact: equality is the test
mod tests {
    use super::*;

    #[test]
    fn batches_close_at_their_last_round_and_stop_at_the_horizon() {
        let mut c = BatchClock::new(2);
        assert!(!c.tick(false));
        assert!(c.tick(true));
        c.open_batch(5, 4);
        assert_eq!((c.t(), c.clipped(), c.batch_remaining()), (2, 1, 2));
        assert!(!c.tick(false) && c.tick(false));
        assert!(c.consistent(4));
        assert!(c.admit(&[0.0, 1.0], 2, 4).is_err(), "the horizon is used up");
        assert!(BatchClock::new(2).admit(&[0.0], 2, 4).is_err());
        assert!(BatchClock::new(2).admit(&[f64::NAN, 0.0], 2, 4).is_err());
        assert!(!BatchClock { t: 3, batch_end: 3, clipped: 0 }.consistent(4));
        assert!(!BatchClock { t: 1, batch_end: 2, clipped: 2 }.consistent(4));
        assert!(check_sizes("n", 2, 4, "batch", 4).is_ok());
        assert!(check_sizes("n", 0, 4, "batch", 1).is_err());
        assert!(check_sizes("n", 2, 0, "batch", 1).is_err());
        assert!(check_sizes("n", 2, 4, "batch", 5).is_err());
        assert!(check_sizes("n", 2, 4, "batch", 0).is_err());
    }

    #[test]
    fn the_unit_interval_policy_clips_or_refuses() {
        let mut v = [-0.5, 0.5, 2.0];
        assert!(clip_unit(&mut v, true).unwrap());
        assert_eq!(v, [0.0, 0.5, 1.0]);
        assert!(!clip_unit(&mut v, false).unwrap());
        assert!(clip_unit(&mut [1.5], false).is_err());
    }
}
