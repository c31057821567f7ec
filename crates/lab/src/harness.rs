//! The measuring harness: contenders run interleaved on the same input, at least five
//! repetitions each, median reported, every answer checked against the reference.
//!
//! Interleaving (A B C, A B C, …) spreads slow drift of a shared machine over all contenders
//! alike, so the ratio between them is what a result means. The answer check is outside the timed
//! section but on every repetition, so a contender that is fast because it is wrong shows up as
//! `mismatches > 0` in the row instead of as a win.

use std::hint::black_box;
use std::time::Instant;

/// Minimum repetitions per contender.
pub const MIN_REPS: usize = 5;

/// The closure a contender runs: fill the vector with one answer per input.
type RunFn<'a, A> = Box<dyn FnMut(&mut Vec<A>) + 'a>;

/// One contender: a system name and a closure that fills `out` with one answer per input.
pub struct Contender<'a, A> {
    /// The system's name in result rows.
    pub system: String,
    run: RunFn<'a, A>,
}

impl<A> core::fmt::Debug for Contender<'_, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Contender").field("system", &self.system).finish_non_exhaustive()
    }
}

impl<'a, A> Contender<'a, A> {
    /// A contender named `system` whose `run` writes its answers into the vector it is given
    /// (cleared before each repetition).
    pub fn new(system: impl Into<String>, run: impl FnMut(&mut Vec<A>) + 'a) -> Self {
        Contender { system: system.into(), run: Box::new(run) }
    }
}

/// What one contender measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The system's name.
    pub system: String,
    /// Median seconds per repetition.
    pub median_s: f64,
    /// Every repetition's seconds, in run order.
    pub samples_s: Vec<f64>,
    /// Answers that differed from the reference (plus missing or extra answers), worst repetition.
    pub mismatches: u64,
}

impl Outcome {
    /// Operations per second at the median, for `ops` operations per repetition.
    pub fn per_second(&self, ops: usize) -> f64 {
        if self.median_s > 0.0 {
            ops as f64 / self.median_s
        } else {
            0.0
        }
    }

    /// Nanoseconds per operation at the median.
    pub fn ns_per_op(&self, ops: usize) -> f64 {
        if ops == 0 {
            0.0
        } else {
            self.median_s * 1e9 / ops as f64
        }
    }
}

/// Runs each contender `reps` times (at least [`MIN_REPS`]), round-robin, and compares its
/// answers with `reference` after every repetition.
pub fn compare<A: PartialEq>(reps: usize, reference: &[A], contenders: &mut [Contender<'_, A>]) -> Vec<Outcome> {
    let reps = reps.max(MIN_REPS);
    let mut outcomes: Vec<Outcome> = contenders
        .iter()
        .map(|c| Outcome { system: c.system.clone(), median_s: 0.0, samples_s: Vec::with_capacity(reps), mismatches: 0 })
        .collect();
    let mut out = Vec::with_capacity(reference.len());
    for _ in 0..reps {
        for (c, o) in contenders.iter_mut().zip(outcomes.iter_mut()) {
            out.clear();
            let start = Instant::now();
            (c.run)(&mut out);
            black_box(&out);
            o.samples_s.push(start.elapsed().as_secs_f64());
            o.mismatches = o.mismatches.max(count_mismatches(&out, reference));
        }
    }
    for o in &mut outcomes {
        o.median_s = median(&o.samples_s);
    }
    outcomes
}

/// Runs `f` once and returns its value with the seconds it took (build times and the like).
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed().as_secs_f64())
}

/// Positions where `answers` and `reference` differ, counting a length difference as mismatches.
pub fn count_mismatches<A: PartialEq>(answers: &[A], reference: &[A]) -> u64 {
    let differing = answers.iter().zip(reference).filter(|(a, r)| a != r).count();
    (differing + answers.len().abs_diff(reference.len())) as u64
}

/// Median of `samples` (mean of the middle two for an even count; 0 for none).
pub fn median(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn wrong_answers_are_counted() {
        let reference = vec![1u32, 2, 3, 4];
        let mut calls = 0;
        let mut contenders = vec![
            Contender::new("right", |out: &mut Vec<u32>| out.extend([1, 2, 3, 4])),
            Contender::new("wrong", |out: &mut Vec<u32>| out.extend([1, 0, 3])),
            Contender::new("counting", |out: &mut Vec<u32>| {
                calls += 1;
                out.extend([1, 2, 3, 4]);
            }),
        ];
        let outcomes = compare(3, &reference, &mut contenders);
        drop(contenders);
        assert_eq!(calls, MIN_REPS);
        assert_eq!(outcomes[0].mismatches, 0);
        assert_eq!(outcomes[1].mismatches, 2);
        assert_eq!(outcomes[0].samples_s.len(), MIN_REPS);
        assert!(outcomes[0].per_second(4) > 0.0);
    }
}
