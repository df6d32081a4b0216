//! Arms added and retired during a run ([`PhasedMab::add_arm`],
//! [`PhasedMab::retire_arm`]).
//!
//! A new arm starts as every arm of a fresh engine does: no pulls, no
//! release, the first phase of its own schedule (its own geometric or
//! adaptive grid), the last tie rank; its phases' noise is drawn, like
//! every phase's, when each of its phases ends. Under DP-SE's epochs it
//! joins the running epoch (its epoch mean is over the epoch's phase
//! length, like every active arm's). A retired arm is never chosen again;
//! its running (or, uncommitted, open) phase is closed at once: the
//! rewards it holds are released as a shorter phase with the phase noise,
//! so every reward still enters exactly one released phase sum.
//!
//! Privacy: each reward enters exactly one phase sum, with the phase noise
//! the guarantee is calibrated for, whatever the number of arms (parallel
//! composition): the guarantee covers every arm, added ones included; the
//! horizon bounds the rewards fed over all arms.

use super::{Current, PhaseSchedule, PhasedMab, MAX_ARMS};
use crate::error::{Error, Result};

impl PhasedMab {
    /// Whether each arm is retired.
    pub fn retired(&self) -> &[bool] {
        &self.retired
    }

    /// Adds an arm with fresh statistics; returns its index (the old k).
    pub fn add_arm(&mut self) -> Result<usize> {
        let a = self.config.k;
        if a + 1 > MAX_ARMS {
            return Err(Error::invalid("k", format!("at most {MAX_ARMS} arms")));
        }
        if let PhaseSchedule::Epochs { .. } = self.config.schedule {
            if self.active.iter().filter(|&&x| x).count() == 1 {
                return Err(Error::State(
                    "DP-SE has eliminated every arm but one, which plays to the horizon: no arm can join".into(),
                ));
            }
        }
        self.pulls.push(0);
        self.phases.push(0);
        self.grid_x.push(1.0);
        self.released_sum.push(0.0);
        self.last_value.push(0.0);
        self.last_len.push(0);
        self.tie_rank.push(a as u32);
        self.active.push(true);
        self.epoch_means.push(0.0);
        self.open.push(Current { arm: 0, start: 0, len: 0, done: 0, steps: 0, sum: 0.0 });
        self.post_mean.push(0.0);
        self.post_sd.push(0.0);
        self.retired.push(false);
        self.config.k = a + 1;
        self.bounds = super::IndexBounds::default();
        Ok(a)
    }

    /// Retires `arm`: never chosen again; its running or open phase is
    /// closed and released at once (see the module docs). The last arm not
    /// retired (under DP-SE: the last active arm) cannot be retired.
    pub fn retire_arm(&mut self, arm: usize) -> Result<()> {
        let k = self.config.k;
        if arm >= k {
            return Err(Error::invalid("arm", format!("must be < {k}, got {arm}")));
        }
        if self.retired[arm] {
            return Ok(());
        }
        let left = (0..k).filter(|&b| !self.retired[b] && self.active[b]).count();
        if left == 1 && self.active[arm] {
            return Err(Error::invalid("arm", format!("arm {arm} is the last arm not retired")));
        }
        let epochs = matches!(self.config.schedule, PhaseSchedule::Epochs { .. });
        self.retired[arm] = true;
        if epochs {
            self.active[arm] = false;
        }
        let running = self.current.filter(|c| c.arm == arm);
        if running.is_some() {
            self.current = None;
        }
        let open = self.open[arm];
        if open.len != 0 {
            self.open[arm] = Current { arm: 0, start: 0, len: 0, done: 0, steps: 0, sum: 0.0 };
        }
        if self.pending == Some(arm) {
            self.pending = None;
        }
        self.bounds = super::IndexBounds::default();
        // The rewards of the closed phase are released (a DP-SE epoch may end there).
        for cur in [running, Some(open).filter(|c| c.len != 0)].into_iter().flatten() {
            if cur.done > 0 {
                self.finish_phase(Current { len: cur.done, ..cur })?;
            }
        }
        if epochs && !(self.epoch_next..k).any(|b| self.active[b]) {
            self.end_epoch();
        }
        Ok(())
    }

    /// DP-SE: the end of an epoch whose last arm to play was retired:
    /// elimination on the released epoch means, as at a phase's end.
    fn end_epoch(&mut self) {
        if let PhaseSchedule::Epochs { gaps, .. } = &self.config.schedule {
            let k = self.config.k;
            let gap = gaps[self.epoch.min(gaps.len() - 1)];
            let best =
                (0..k).filter(|&b| self.active[b]).map(|b| self.epoch_means[b]).fold(f64::NEG_INFINITY, f64::max);
            for b in 0..k {
                if self.active[b] && self.epoch_means[b] < best - gap {
                    self.active[b] = false;
                }
            }
            self.epoch += 1;
            self.epoch_next = 0;
        }
    }
}
