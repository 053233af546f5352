//! The road a connection's requests take to its server, chosen in one place ([`Road::of`]).
//! Listings ([`super::listing`]) and tool calls ([`super::session::LiveServer::call`]) take it;
//! everything else (the handshake, the server's own requests, notifications) goes through
//! rmcp's service either way.

use rmcp::service::{Peer, RoleClient};

use super::stdio::direct::Direct;

/// Where a connection's listings and calls go.
#[derive(Clone, Copy)]
pub(crate) enum Road<'a> {
    /// A stdio server in the handshake era: its transport's direct requests (the transport owns
    /// the pipe, its pending table and writer; rmcp's service never reaches into them), each
    /// answer read once, from its text.
    Direct(&'a Direct),
    /// rmcp's typed requests (HTTP, and the 2026-07-28 era).
    Rmcp(&'a Peer<RoleClient>),
}

impl<'a> Road<'a> {
    /// The one place the road is chosen: the stdio transport's direct requests when the
    /// connection has them, else rmcp's typed requests.
    pub(crate) fn of(peer: &'a Peer<RoleClient>, direct: Option<&'a Direct>) -> Self {
        match direct {
            Some(direct) => Road::Direct(direct),
            None => Road::Rmcp(peer),
        }
    }
}
