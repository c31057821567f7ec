# nexthop: the two commands a newcomer needs.
#   make run    the main job: the NDN forwarder (`nexthop run`, built-in configuration)
#   make test   everything CI checks
.PHONY: run test bench bench-quick fuzz setup loom

CARGO ?= cargo
FUZZ_EXECS ?= 10000000

setup:
	./scripts/setup.sh

run: setup
	$(CARGO) run --release -p nexthop -- run

# Every experiment, quick, with a summary table of key figures.
bench-quick: setup
	$(CARGO) run --release -p nexthop -- bench --all --quick

test: setup
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p nexthop-lookup --lib -- -D warnings  # without the experiments feature
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps
	$(CARGO) test --workspace
	NEXTHOP_FUZZ_EXECS=$(FUZZ_EXECS) $(CARGO) test --release -p nexthop-wire --test no_panic -p nexthop-lookup --test no_panic -p nexthop-fw --test no_panic
	$(MAKE) loom
	$(CARGO) build --release -p nexthop
	for e in $$(./target/release/nexthop bench --list | cut -d' ' -f1); do \
	  ./target/release/nexthop bench $$e --quick --out-dir target/ci-results || exit 1; \
	done

# Full-size experiments; results and plots land in results/.
bench: setup
	$(CARGO) run --release -p nexthop -- bench --all

# The Othello query structure's concurrency protocol under the loom model checker (every
# interleaving of a patching writer with single and batch readers; its own build directory).
loom:
	RUSTFLAGS="--cfg loom" $(CARGO) test --release --target-dir target/loom -p nexthop-lookup --lib flat::query::loom_model

# libFuzzer runs of the wire decoders (nightly toolchain, installs cargo-fuzz if missing).
fuzz:
	./fuzz/run.sh 1000000
