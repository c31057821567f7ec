//! Compiles the control channel's `.proto` with protox (a protobuf compiler in Rust: no
//! `protoc` to install) into tonic's client and server.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/nexthop/switch/v1/switch.proto";
    println!("cargo:rerun-if-changed={proto}");
    let files = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure().compile_fds(files)?;
    Ok(())
}
