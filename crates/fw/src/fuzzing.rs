//! Properties the parsers of outside input keep for any input, shared by the cargo-fuzz targets
//! in `fuzz/` and the stable no-panic test in `tests/no_panic.rs`: NFD's ControlParameters and
//! ControlResponse (from any local app or, with `localhop_security`, the next hop), the INFO
//! format of `nfd.conf` and the validator's rules, `nfd.conf` itself, and the TOML configuration.
//!
//! Each `check_*` parses arbitrary bytes; on success it writes the value back and asserts that
//! it parses to the same. A panic here is a bug in the crate.

use std::path::Path;

use crate::conf::config::Config;
use crate::conf::info::{info_text, parse_info, without_lines};
use crate::conf::nfd_conf::from_nfd_conf;
use crate::mgmt::params::{ControlParameters, ControlResponse};

/// Checks the ControlParameters and ControlResponse decoders on `bytes`; whether either accepted.
pub fn check_control_parameters(bytes: &[u8]) -> bool {
    let params = ControlParameters::decode(bytes).ok().inspect(|p| {
        assert_eq!(ControlParameters::decode(&p.encode()).as_ref(), Ok(p), "ControlParameters written back decode the same");
    });
    let response = ControlResponse::decode(bytes).ok().inspect(|r| {
        assert_eq!(ControlResponse::decode(&r.encode()).as_ref(), Ok(r), "a ControlResponse written back decodes the same");
    });
    params.is_some() || response.is_some()
}

/// Checks the INFO parser, and `nfd.conf`'s translation, on `bytes` read as text (invalid UTF-8
/// replaced); whether the INFO text parsed.
pub fn check_info(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let Ok(nodes) = parse_info(&text) else { return false };
    let again = parse_info(&info_text(&nodes)).expect("INFO text written back parses");
    assert_eq!(without_lines(&again), without_lines(&nodes), "INFO written back reads the same: {text:?}");
    if let Ok((config, _warnings)) = from_nfd_conf(&text) {
        check_printed(&config);
    }
    true
}

/// Checks the TOML configuration's parser on `bytes` read as text; whether it parsed.
pub fn check_config(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let Ok(config) = Config::parse(&text, Path::new("fuzz.toml")) else { return false };
    check_printed(&config);
    true
}

/// A configuration printed as TOML reads back the same.
fn check_printed(config: &Config) {
    let printed = config.to_toml();
    let again = Config::parse(&printed, Path::new("printed.toml")).expect("a printed configuration parses");
    assert_eq!(&again, config, "{printed}");
}
