//! Chunk request workloads of the hierarchical content store paper (its Table 3).
//!
//! A catalogue of `contents` contents of `chunks_per_content` chunks each (the paper: streams of
//! 160 s at 8 chunks/s = 1280 chunks of 8 KB). Chunk (c, k) is named `/hcs/content/<c>/seg=<k>`.
//! - **Seq**: contents one after another in a random order, each read from its first chunk to
//!   its last (the best case for batch prefetch).
//! - **Unif**: chunks drawn uniformly from the whole catalogue (the worst case).
//! - **Real**: streams start as a Poisson process of rate λ; each picks its content from a Zipf(α)
//!   popularity and requests its chunks in order at the streaming rate; requests of concurrent
//!   streams are merged by time.
//!
//! The paper warms the L1 with 10·|L1| requests and then measures |C| more; [`ChunkWorkload`]
//! generates `warmup + measured` requests and the experiment splits them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use nexthop_wire::{Component, Data, Emit, Name};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Which request process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Sequential reads of whole contents.
    Seq,
    /// Uniformly random chunks.
    Unif,
    /// Poisson stream arrivals, Zipf popularity, streaming rate.
    Real,
}

impl Pattern {
    /// `seq`, `unif`, `real`.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Seq => "seq",
            Pattern::Unif => "unif",
            Pattern::Real => "real",
        }
    }
}

/// One request: chunk `chunk` of content `content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkRequest {
    /// Content number.
    pub content: u32,
    /// Chunk (segment) number.
    pub chunk: u32,
}

/// A workload: catalogue, pattern and the Real workload's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkWorkload {
    /// Request process.
    pub pattern: Pattern,
    /// Contents in the catalogue.
    pub contents: u32,
    /// Chunks per content.
    pub chunks_per_content: u32,
    /// Zipf skew α of content popularity (Real).
    pub alpha: f64,
    /// Stream arrivals per second (Real; the paper: 1).
    pub arrival_rate: f64,
    /// Chunks per second per stream (Real; the paper: 8).
    pub stream_rate: f64,
    /// Random seed.
    pub seed: u64,
}

impl ChunkWorkload {
    /// The paper's parameters (streams of 1280 chunks, α = 1, λ = 1/s, 8 chunks/s) over
    /// `contents` contents.
    pub fn paper(pattern: Pattern, contents: u32, seed: u64) -> Self {
        ChunkWorkload { pattern, contents, chunks_per_content: 1280, alpha: 1.0, arrival_rate: 1.0, stream_rate: 8.0, seed }
    }

    /// Chunks in the catalogue.
    pub fn catalogue(&self) -> u64 {
        u64::from(self.contents) * u64::from(self.chunks_per_content)
    }

    /// Zipf(α) popularity of each content (sums to 1).
    pub fn popularity(&self) -> Vec<f64> {
        let w: Vec<f64> = (1..=self.contents).map(|k| f64::from(k).powf(-self.alpha)).collect();
        let total: f64 = w.iter().sum();
        w.into_iter().map(|x| x / total).collect()
    }

    /// Rate at which streams of each content start (λ · popularity).
    pub fn content_rates(&self) -> Vec<f64> {
        self.popularity().into_iter().map(|p| p * self.arrival_rate).collect()
    }

    /// `n` requests.
    pub fn requests(&self, n: usize) -> Vec<ChunkRequest> {
        let mut rng = SmallRng::seed_from_u64(self.seed);
        let mut out = Vec::with_capacity(n);
        match self.pattern {
            Pattern::Unif => {
                for _ in 0..n {
                    out.push(ChunkRequest { content: rng.gen_range(0..self.contents), chunk: rng.gen_range(0..self.chunks_per_content) });
                }
            }
            Pattern::Seq => {
                let mut order: Vec<u32> = (0..self.contents).collect();
                'outer: loop {
                    shuffle(&mut order, &mut rng);
                    for &content in &order {
                        for chunk in 0..self.chunks_per_content {
                            if out.len() == n {
                                break 'outer;
                            }
                            out.push(ChunkRequest { content, chunk });
                        }
                    }
                }
            }
            Pattern::Real => self.real(n, &mut rng, &mut out),
        }
        out
    }

    /// The Real process: a heap of active streams keyed by the time of their next request.
    fn real(&self, n: usize, rng: &mut SmallRng, out: &mut Vec<ChunkRequest>) {
        let cdf: Vec<f64> = self
            .popularity()
            .iter()
            .scan(0.0, |acc, p| {
                *acc += p;
                Some(*acc)
            })
            .collect();
        let pick = |u: f64| cdf.partition_point(|&c| c < u).min(cdf.len() - 1) as u32;
        let gap = 1.0 / self.stream_rate;
        // (time in ns, content, next chunk)
        let mut active: BinaryHeap<Reverse<(u64, u32, u32)>> = BinaryHeap::new();
        let mut next_arrival = 0.0f64;
        while out.len() < n {
            let next_stream = active.peek().map(|Reverse((t, _, _))| *t as f64 * 1e-9);
            if next_stream.is_none_or(|t| next_arrival <= t) {
                let content = pick(rng.gen::<f64>());
                active.push(Reverse(((next_arrival * 1e9) as u64, content, 0)));
                next_arrival += -(1.0 - rng.gen::<f64>()).ln() / self.arrival_rate;
                continue;
            }
            let Some(Reverse((t, content, chunk))) = active.pop() else { break };
            out.push(ChunkRequest { content, chunk });
            if chunk + 1 < self.chunks_per_content {
                active.push(Reverse((t + (gap * 1e9) as u64, content, chunk + 1)));
            }
        }
    }
}

fn shuffle<T>(v: &mut [T], rng: &mut SmallRng) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.gen_range(0..=i));
    }
}

/// The name of chunk `chunk` of content `content`.
pub fn chunk_name(content: u32, chunk: u32) -> Name {
    Name::from_uri("/hcs/content").expect("valid").with_generic(content.to_string()).with(Component::segment(u64::from(chunk)))
}

/// The Data packet of a chunk: `payload` bytes derived from its number, DigestSha256-signed.
pub fn chunk_data(content: u32, chunk: u32, payload: usize) -> Vec<u8> {
    let fill = (content.wrapping_mul(31) ^ chunk) as u8;
    let mut d = Data::new(chunk_name(content, chunk), vec![fill; payload]);
    d.sign_digest_sha256();
    d.to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let w = ChunkWorkload { chunks_per_content: 20, ..ChunkWorkload::paper(Pattern::Seq, 5, 1) };
        let seq = w.requests(100);
        assert!(seq.chunks(20).all(|c| c.iter().enumerate().all(|(i, r)| r.chunk == i as u32 && r.content == c[0].content)));
        let unif = ChunkWorkload { pattern: Pattern::Unif, ..w.clone() }.requests(1000);
        assert!(unif.iter().all(|r| r.content < 5 && r.chunk < 20));
        let real = ChunkWorkload { pattern: Pattern::Real, contents: 100, ..w.clone() }.requests(20_000);
        assert_eq!(real.len(), 20_000);
        // Popular content 0 is requested far more than content 99.
        let count = |c| real.iter().filter(|r| r.content == c && r.chunk == 0).count();
        assert!(count(0) > 5 * count(99).max(1), "{} vs {}", count(0), count(99));
        // Each stream's chunks come in order: chunk k of a content never precedes chunk 0 of it.
        assert_eq!(real[0].chunk, 0);
        assert!((w.popularity().iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn chunks_are_data() {
        let wire = chunk_data(3, 7, 100);
        let d = nexthop_wire::DataView::decode(&wire).unwrap();
        assert_eq!(d.name().to_string(), "/hcs/content/3/seg=7");
        assert_eq!(d.content().unwrap().len(), 100);
    }
}
