//! `nexthop gen tag`: the `tagnet` experiment's descriptor FIBs and packet descriptors as files.

use nexthop_lab::workload::tags::{self, FibOf, Written, TREES};
use nexthop_lookup::tag::PortSet;

use super::{write_files, Output};

/// Arguments of `nexthop gen tag`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    out: Output,
    /// Which FIB: zipf (1–4 tags of Zipf(1) popularity), apps (an application tag and 1–3 Zipf
    /// tags) or ccn (real URL names, component i becoming the tag i:component).
    #[arg(long, default_value = "zipf", value_parser = ["zipf", "apps", "ccn"])]
    fib: String,
    /// Descriptors in the FIB.
    #[arg(long, default_value_t = 100_000)]
    descriptors: usize,
    /// Packet descriptors.
    #[arg(long, default_value_t = 10_000)]
    packets: usize,
    /// Zipf tags added to each packet's FIB descriptor: 0 to this many (zipf and apps).
    #[arg(long, default_value_t = 2)]
    extra_tags: usize,
}

/// `ports` as `tree:interface` words (port id i is on tree i mod [`TREES`]).
fn ports_text(ports: &PortSet) -> String {
    let trees = usize::from(TREES);
    ports.iter().map(|p| format!("{}:{}", usize::from(p) % trees, usize::from(p) / trees)).collect::<Vec<_>>().join(" ")
}

pub(super) fn run(args: &Args) -> anyhow::Result<()> {
    let (n, seed) = (args.descriptors, args.out.seed);
    anyhow::ensure!(n > 0, "--descriptors must be at least 1");
    let (fib, packets): (FibOf<Written>, Vec<Written>) = match args.fib.as_str() {
        "ccn" => tags::ccn_fib_written(n, args.packets, seed)?,
        kind => {
            let fib = if kind == "apps" { tags::apps_fib_written(n, seed) } else { tags::zipf_fib_written(n, seed) };
            let packets = tags::queries_written(&fib, args.packets, args.extra_tags, seed ^ 0x51);
            (fib, packets)
        }
    };
    let header = format!(
        "nexthop gen tag --fib {} --descriptors {n} --packets {} --extra-tags {} --seed {seed}",
        args.fib, args.packets, args.extra_tags
    );
    write_files(
        &args.out,
        "tag",
        &header,
        |line| fib.iter().try_for_each(|(w, ports)| line(&format!("{} -> {}", w.text, ports_text(ports)))),
        |line| packets.iter().try_for_each(|w| line(&w.text)),
    )
}
