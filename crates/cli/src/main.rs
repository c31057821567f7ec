//! `nexthop`: the command-line entry point. One file per subcommand under `cmd/`.

#![deny(unsafe_code)]
// The subcommands' doc comments are their `--help` text, written for a terminal: `[addr]` and
// `<prefix>` there are the usual argument notation, not links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use clap::{Parser, Subcommand};

mod cmd;

/// Counts live heap bytes so experiments can report what each structure allocates.
#[global_allocator]
static ALLOCATOR: nexthop_lab::alloc::Counting = nexthop_lab::alloc::Counting;

/// nexthop: a forwarding plane for information-centric and IP networks.
#[derive(Debug, Parser)]
#[command(name = "nexthop", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the NDN forwarder (the built-in configuration needs no file).
    Run(cmd::run::Args),
    /// Run the Concise switches' controller on a topology file.
    Controller(cmd::controller::Args),
    /// Operate a running forwarder: status, faces, routes, content store, strategies.
    Ctl(cmd::ctl::Args),
    /// Run an experiment (or all of them) and write JSON results and plots.
    Bench(cmd::bench::Args),
    /// Build a lookup table (IP routes, NDN names, flat names, TagNet descriptors or locators)
    /// from your file and look keys up in it.
    Fib(cmd::fib::Args),
    /// Write an experiment's workload as files: a table `nexthop fib` reads and keys to look up.
    Gen(cmd::gen::Args),
    /// Decode an NDN packet given in hex and print its fields.
    Packet(cmd::packet::Args),
    /// Traffic generator: a producer and a consumer through any running forwarder.
    Traffic(cmd::traffic::Args),
    /// A TagNet host: subscribe, publish, serve or get through a TagNet router.
    Tag(cmd::tag::Args),
}

fn main() -> anyhow::Result<()> {
    use tracing_subscriber::prelude::*;
    use tracing_subscriber::{fmt, reload, EnvFilter};
    let (filter, filter_handle) = reload::Layer::new(EnvFilter::from_default_env());
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::registry().with(filter).with(fmt::layer().with_writer(std::io::stderr).with_ansi(colour)).init();
    // `nexthop run` logs at its configuration's level (and its modules' own), unless RUST_LOG
    // says otherwise.
    let log_level = std::sync::Arc::new(move |level: &str| {
        if std::env::var_os(EnvFilter::DEFAULT_ENV).is_none() {
            let directives: Vec<&str> = level.split(',').map(str::trim).collect();
            let _ = filter_handle.reload(EnvFilter::new(directives.join(",")));
        }
    });
    match Cli::parse().command {
        Command::Run(args) => cmd::run::run(args, log_level),
        Command::Controller(args) => cmd::controller::run(args, log_level),
        Command::Ctl(args) => cmd::ctl::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Fib(args) => cmd::fib::run(args),
        Command::Gen(args) => cmd::gen::run(args),
        Command::Packet(args) => cmd::packet::run(args),
        Command::Traffic(args) => cmd::traffic::run(args),
        Command::Tag(args) => cmd::tag::run(args),
    }
}
