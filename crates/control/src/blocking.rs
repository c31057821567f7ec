//! A switch's control channel from synchronous code (tests, experiments, tools): the gRPC
//! client on a runtime of its own, each call waited for.

use tonic::Status;

use crate::address::ControlAddress;
use crate::controller::session::client;
use crate::pb;
use crate::pb::switch_client::SwitchClient;

/// A synchronous client of one switch.
#[derive(Debug)]
pub struct BlockingSwitch {
    runtime: tokio::runtime::Runtime,
    client: SwitchClient<tonic::transport::Channel>,
}

impl BlockingSwitch {
    /// A client of the switch at `address` (it connects on the first call).
    ///
    /// # Errors
    /// The runtime could not start.
    pub fn new(address: &ControlAddress) -> std::io::Result<BlockingSwitch> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let client = runtime.block_on(async { client(address.channel()) });
        Ok(BlockingSwitch { runtime, client })
    }

    /// `GetInfo`.
    ///
    /// # Errors
    /// The call's status.
    pub fn info(&mut self) -> Result<pb::SwitchInfo, Status> {
        Ok(self.runtime.block_on(self.client.get_info(pb::GetInfoRequest {}))?.into_inner())
    }

    /// `ReadCounters`.
    ///
    /// # Errors
    /// The call's status.
    pub fn counters(&mut self) -> Result<pb::Counters, Status> {
        Ok(self.runtime.block_on(self.client.read_counters(pb::ReadCountersRequest {}))?.into_inner())
    }

    /// `PushDelta`.
    ///
    /// # Errors
    /// The call's status.
    pub fn push(&mut self, delta: pb::push_delta_request::Delta) -> Result<pb::PushDeltaResponse, Status> {
        Ok(self.runtime.block_on(self.client.push_delta(pb::PushDeltaRequest { delta: Some(delta) }))?.into_inner())
    }

    /// `WriteEntries`.
    ///
    /// # Errors
    /// The call's status.
    pub fn write(&mut self, entries: Vec<pb::Entry>) -> Result<pb::WriteEntriesResponse, Status> {
        Ok(self.runtime.block_on(self.client.write_entries(pb::WriteEntriesRequest { entries }))?.into_inner())
    }
}

impl pb::Counters {
    /// Frames dropped for `reason` (0 when the switch has no such counter).
    pub fn dropped(&self, reason: &str) -> u64 {
        self.drops.iter().find(|d| d.reason == reason).map_or(0, |d| d.frames)
    }
}
