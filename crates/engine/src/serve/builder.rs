//! How a [`ToolServer`] is made: its identity and tools, and what a serving may set once,
//! before the server is shared (its call hook, bounds, search mode, skills).

use std::sync::Arc;

use super::tool::{OnCall, ServedTool};
use super::toolset::ToolSet;
use super::{Inner, ServerIdentity, SessionLogLevel, ToolServer, next_session};
use super::{rounds, search, tasks};

/// A [`ToolServer`] being set up ([`ToolServer::builder`]).
pub struct Builder {
    identity: ServerIdentity,
    tools: Vec<ServedTool>,
    on_call: Option<OnCall>,
    call_hooks: Option<Arc<dyn super::hooks::CallHooks>>,
    result_limits: Option<super::cut::ResultLimits>,
    input_limits: Option<rounds::Limits>,
    task_limits: Option<tasks::Limits>,
    search: Option<search::SearchMode>,
    skills: Option<Arc<crate::skills::ServedSkills>>,
}

impl ToolServer {
    /// A server of `tools`, with the default bounds.
    pub fn new(identity: ServerIdentity, tools: Vec<ServedTool>, on_call: Option<OnCall>) -> Self {
        Self::builder(identity, tools).on_call(on_call).build()
    }

    /// A server of `tools` to set up before it is built.
    pub fn builder(identity: ServerIdentity, tools: Vec<ServedTool>) -> Builder {
        Builder {
            identity,
            tools,
            on_call: None,
            call_hooks: None,
            result_limits: None,
            input_limits: None,
            task_limits: None,
            search: None,
            skills: None,
        }
    }
}

impl Builder {
    /// Hears each finished `tools/call`.
    pub fn on_call(mut self, on_call: Option<OnCall>) -> Self {
        self.on_call = on_call;
        self
    }

    /// Asks these hooks before and after each tool call, resource read and prompt get.
    pub fn hooks(mut self, hooks: Option<Arc<dyn super::hooks::CallHooks>>) -> Self {
        self.call_hooks = hooks;
        self
    }

    /// Cuts the tools' results to these sizes.
    pub fn result_limits(mut self, limits: Option<super::cut::ResultLimits>) -> Self {
        self.result_limits = limits;
        self
    }

    /// Other bounds on runs waiting for their input (tests use small ones).
    #[cfg(test)]
    pub(crate) fn input_limits(mut self, limits: rounds::Limits) -> Self {
        self.input_limits = Some(limits);
        self
    }

    /// Other bounds on tasks (tests use small ones).
    #[cfg(test)]
    pub(crate) fn task_limits(mut self, limits: tasks::Limits) -> Self {
        self.task_limits = Some(limits);
        self
    }

    /// Serves the tools searched instead of listed (see [`search`]).
    pub fn search(mut self, mode: Option<search::SearchMode>) -> Self {
        self.search = mode;
        self
    }

    /// Serves these skills too (the skills extension, SEP-2640).
    pub fn skills(mut self, skills: Option<Arc<crate::skills::ServedSkills>>) -> Self {
        self.skills = skills;
        self
    }

    pub fn build(self) -> ToolServer {
        ToolServer {
            shared: Arc::new(Inner {
                identity: self.identity,
                tools: std::sync::RwLock::new(Arc::new(ToolSet::new(self.tools))),
                surface: Default::default(),
                composing: Default::default(),
                subs: Default::default(),
                changes: Default::default(),
                on_call: self.on_call,
                call_hooks: self.call_hooks,
                result_limits: self.result_limits,
                parking: Arc::new(
                    self.input_limits
                        .map_or_else(rounds::Parking::default, rounds::Parking::new),
                ),
                search: self.search,
                tasks: Arc::new(
                    self.task_limits
                        .map_or_else(tasks::Tasks::default, tasks::Tasks::new),
                ),
                skills: self.skills,
            }),
            log_level: SessionLogLevel::default(),
            hooks: None,
            session: next_session(),
        }
    }
}
