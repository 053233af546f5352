//! Which tools, prompts and resources a caller may see: scope → globs of names.

use super::principal::Principal;

/// What a policy is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Tool,
    Prompt,
    /// Matched against the resource's URI (a template's `uriTemplate` text).
    Resource,
}

/// Per kind, `None` lets every caller see everything; else a list of (scope, globs): a caller
/// sees a name when one of its scopes (or the scope key `*`, any authenticated caller) has a glob
/// that matches it. Globs: `*` any run of characters, `?` exactly one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessPolicy {
    tools: Option<Vec<(String, Vec<String>)>>,
    prompts: Option<Vec<(String, Vec<String>)>>,
    resources: Option<Vec<(String, Vec<String>)>>,
}

impl AccessPolicy {
    pub fn new(
        tools: Option<Vec<(String, Vec<String>)>>,
        prompts: Option<Vec<(String, Vec<String>)>>,
        resources: Option<Vec<(String, Vec<String>)>>,
    ) -> Self {
        Self {
            tools,
            prompts,
            resources,
        }
    }

    fn rules(&self, kind: Kind) -> Option<&[(String, Vec<String>)]> {
        match kind {
            Kind::Tool => self.tools.as_deref(),
            Kind::Prompt => self.prompts.as_deref(),
            Kind::Resource => self.resources.as_deref(),
        }
    }

    /// True when no policy is set for `kind`: every caller sees every item of that kind.
    pub(crate) fn is_open(&self, kind: Kind) -> bool {
        self.rules(kind).is_none()
    }

    /// Whether `principal` may see and use the item `name` of `kind`. Without a principal (serving
    /// without auth) only an open kind allows anything.
    pub(crate) fn allows(&self, kind: Kind, principal: Option<&Principal>, name: &str) -> bool {
        let Some(rules) = self.rules(kind) else {
            return true;
        };
        let Some(principal) = principal else {
            return false;
        };
        rules.iter().any(|(scope, globs)| {
            (scope == "*" || principal.scopes.iter().any(|s| s == scope))
                && globs.iter().any(|glob| glob_matches(glob, name))
        })
    }

    /// Every scope the policy names (not `*`), in order, once each.
    pub(crate) fn scopes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for kind in [Kind::Tool, Kind::Prompt, Kind::Resource] {
            for (scope, _) in self.rules(kind).unwrap_or_default() {
                if scope != "*" && !out.contains(scope) {
                    out.push(scope.clone());
                }
            }
        }
        out
    }
}

/// `*` matches any run of characters (none included), `?` exactly one; everything else itself.
/// Linear backtracking over the last `*` (no exponential blow-up on many stars).
pub(crate) fn glob_matches(glob: &str, name: &str) -> bool {
    let pattern: Vec<char> = glob.chars().collect();
    let text: Vec<char> = name.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}
