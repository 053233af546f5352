//! `serve_http` over real loopback sockets: rmcp clients of both eras (interop), and reqwest or a
//! raw TCP stream for the wire rules (paths, Host/Origin, sessions, stateless mode, limits).

mod common;
mod interop;
mod load;
mod wire;
