//! Starting a stdio server's session: the handshake over its pipes, or a discover probe that
//! spawns it again for the handshake when the first process is in no state to start over.

use std::time::Duration;

use rmcp::model::ProtocolVersion;

use super::{Connection, Endpoint, Pipes, internal};
use crate::connect::client::ClientSide;
use crate::connect::error::{self, ConnectError};
use crate::connect::lifecycle::{self, Carrier, Lifecycle, Probe, Service};
use crate::connect::stdio;

impl Connection {
    /// stdio under `protocol: "auto"` probes with `server/discover`; a server that closes on the
    /// probe (or ignores it) is spawned again for the handshake, since its first process is gone
    /// or in no state to start over.
    pub(super) async fn start_stdio(
        &mut self,
        handler: &ClientSide,
        pipes: Pipes,
        timeout: Duration,
    ) -> Result<Service, ConnectError> {
        let (lifecycle, pipes) = match Lifecycle::choose(self.protocol, Carrier::Stdio) {
            Lifecycle::Auto => {
                let bound = lifecycle::probe_bound(timeout);
                let transport = self.framed(pipes)?;
                let fast = stdio::Fast::of(&transport);
                match lifecycle::probe(handler, transport, bound, true).await {
                    Probe::Connected(service) => {
                        self.keep_fast(&service, fast);
                        return Ok(service);
                    }
                    Probe::Failed(e) => {
                        let cause = lifecycle::describe(&e, &Lifecycle::Auto);
                        return Err(self.violation_or(error::request("", cause)));
                    }
                    Probe::TryHandshake => (
                        Lifecycle::Handshake(ProtocolVersion::LATEST_WITH_INITIALIZE),
                        self.respawn().await?,
                    ),
                }
            }
            other => (other, pipes),
        };
        let transport = self.framed(pipes)?;
        let fast = stdio::Fast::of(&transport);
        match lifecycle::start(handler, transport, &lifecycle).await {
            Ok(service) => {
                self.keep_fast(&service, fast);
                Ok(service)
            }
            Err(e) => {
                let cause = lifecycle::describe(&e, &lifecycle);
                Err(self.violation_or(error::request("", cause)))
            }
        }
    }

    /// Calls take the direct path in the handshake era. In 2026-07-28, rmcp adds its per-request
    /// `_meta` and answers input-required rounds, so its own path stays.
    fn keep_fast(&mut self, service: &Service, fast: stdio::Fast) {
        if service
            .peer_info()
            .is_some_and(|info| info.protocol_version.has_initialize())
        {
            self.fast = Some(fast);
        }
    }

    /// The child's pipes as a transport that fails at once on a broken stdio framing.
    fn framed(
        &self,
        (stdout, stdin): Pipes,
    ) -> Result<stdio::LineTransport<tokio::process::ChildStdout>, ConnectError> {
        let process = self
            .process
            .as_ref()
            .ok_or_else(|| internal("not started"))?;
        Ok(process.transport(stdout, stdin))
    }

    /// The broken framing when the child broke it, else `error`.
    pub(super) fn violation_or(&self, error: ConnectError) -> ConnectError {
        match self.process.as_ref().and_then(|p| p.violation()) {
            Some(violation) => violation,
            None => error,
        }
    }

    /// Ends the stdio child (its whole group) and starts the same command again.
    async fn respawn(&mut self) -> Result<Pipes, ConnectError> {
        if let Some(process) = self.process.take() {
            process.shutdown(false).await;
        }
        let Endpoint::Stdio { launch, .. } = &self.endpoint else {
            return Err(internal("not a stdio server"));
        };
        let (process, stdout, stdin) =
            stdio::spawn(&launch.command, &launch.environment, launch.cwd.as_deref())?;
        self.process = Some(process);
        Ok((stdout, stdin))
    }
}
