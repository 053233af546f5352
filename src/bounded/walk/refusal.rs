//! How a walk refuses: the refusal at the current path, a limit's refusal naming the
//! container, napi failures and JavaScript throws turned into words.

use std::ptr;

use napi::sys;

use super::{Read, Walk};
use crate::bounded::limits::{Refusal, describe_path};
use engine::config::quote::{QUOTE_CHARS, shorten};

impl Walk<'_> {
    pub(super) fn refuse(&self, problem: impl Into<String>) -> Refusal {
        Refusal {
            path: describe_path(self.root, &self.steps),
            problem: problem.into(),
        }
    }

    /// A limit was reached while reading `current` (the container being read, or the value
    /// about to be): when the path runs through the same object twice the value is circular,
    /// which says more than the limit it ran into.
    pub(super) fn over_limit(&self, current: sys::napi_value, problem: String) -> Refusal {
        let mut chain = self.containers.clone();
        if chain.last() != Some(&current) {
            chain.push(current);
        }
        let at = |n: usize| describe_path(self.root, self.steps.get(..n).unwrap_or(&self.steps));
        for later in 1..chain.len() {
            for earlier in 0..later {
                let mut same = false;
                // SAFETY: a napi call of the walk, sound as `Walk` says.
                let status = unsafe {
                    sys::napi_strict_equals(self.env, chain[earlier], chain[later], &mut same)
                };
                if status == sys::Status::napi_ok && same {
                    let to = Some(at(earlier)).filter(|p| !p.is_empty());
                    let to = to.unwrap_or_else(|| "the top level".to_string());
                    return Refusal {
                        path: at(later),
                        problem: format!("circular reference (back to {to})"),
                    };
                }
            }
        }
        self.refuse(problem)
    }

    /// Checks that `n` members of `container` fit in what is left of the value budget.
    pub(super) fn claim(
        &self,
        container: sys::napi_value,
        n: usize,
        too_long: &str,
        unit: &str,
    ) -> Read<()> {
        if n <= self.values_left {
            return Ok(());
        }
        let limit = self.limits.values;
        let problem = if n > limit {
            let count = if unit.is_empty() {
                n.to_string()
            } else {
                format!("{n} {unit}")
            };
            format!("{too_long} ({count}; at most {limit} values in all)")
        } else {
            format!("too many values (at most {limit} in all)")
        };
        Err(self.over_limit(container, problem))
    }

    /// A napi status as a refusal; a JavaScript throw is caught here and its message quoted.
    pub(super) fn check(&self, status: sys::napi_status) -> Read<()> {
        if status == sys::Status::napi_ok {
            return Ok(());
        }
        let mut pending = false;
        // SAFETY: a napi call of the walk, sound as `Walk` says.
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if !pending {
            return Err(self.refuse("cannot be read"));
        }
        let mut thrown = ptr::null_mut();
        // SAFETY: a napi call of the walk, sound as `Walk` says.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut thrown) };
        let message = self.thrown_message(thrown);
        Err(self.refuse(format!("threw when read: {message}")))
    }

    /// The message of a thrown value, running no more of its code than a `message` getter.
    pub(super) fn thrown_message(&self, thrown: sys::napi_value) -> String {
        let text = match self.type_of(thrown) {
            sys::ValueType::napi_string => self.short_string(thrown),
            sys::ValueType::napi_object => {
                let mut message = ptr::null_mut();
                // SAFETY: a napi call of the walk, sound as `Walk` says.
                let status = unsafe {
                    sys::napi_get_named_property(
                        self.env,
                        thrown,
                        c"message".as_ptr(),
                        &mut message,
                    )
                };
                if status == sys::Status::napi_ok {
                    self.short_string(message)
                } else {
                    let mut ignored = ptr::null_mut();
                    // SAFETY: a napi call of the walk, sound as `Walk` says.
                    unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut ignored) };
                    None
                }
            }
            _ => None,
        };
        text.map_or_else(
            || "it threw something without a readable message".to_string(),
            |t| shorten(&t, QUOTE_CHARS),
        )
    }

    /// A string's text, when it is one and of a size worth showing.
    pub(super) fn short_string(&self, value: sys::napi_value) -> Option<String> {
        if self.type_of(value) != sys::ValueType::napi_string {
            return None;
        }
        let mut len = 0;
        // SAFETY: a napi call of the walk, sound as `Walk` says.
        let status = unsafe {
            sys::napi_get_value_string_utf8(self.env, value, ptr::null_mut(), 0, &mut len)
        };
        (status == sys::Status::napi_ok && len <= 4 * QUOTE_CHARS)
            .then(|| self.copy_string(value, len).ok())
            .flatten()
    }
}
