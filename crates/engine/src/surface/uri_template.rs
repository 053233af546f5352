//! URI templates (RFC 6570, levels 1 to 3: the operators `+ # . / ; ? &`; a `:n` prefix is
//! honoured on expansion, an explode `*` read as a plain variable): expanding one with values,
//! and its inverse, matching a URI against one to get the values back. rmcp has neither.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Map, Value};

/// What is kept as it is in a simple expansion: the unreserved characters.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// What `+` and `#` keep too: the reserved characters (and `%`, so triplets pass through).
const RESERVED: &AsciiSet = &UNRESERVED
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'#')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b'%');

/// The most variables a matched template may have (each one costs a backtracking level).
const MAX_MATCH_VARIABLES: usize = 16;
/// The longest URI matched against a template: a longer one matches none (a front client sends
/// the URI, so matching must stay cheap whatever it sends).
const MAX_MATCH_URI_BYTES: usize = 8 * 1024;
/// The work one match may do, in characters scanned over all its tries: backtracking over where
/// each value ends is polynomial in the URI's length, so a hostile URI stops here, unmatched.
const MATCH_BUDGET: usize = 200_000;

#[derive(Debug, PartialEq)]
enum Part<'a> {
    Literal(&'a str),
    Expression(Op, Vec<Var<'a>>),
}

#[derive(Debug, PartialEq)]
struct Var<'a> {
    name: &'a str,
    prefix: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    fn of(c: char) -> Option<Op> {
        Some(match c {
            '+' => Op::Reserved,
            '#' => Op::Fragment,
            '.' => Op::Label,
            '/' => Op::Path,
            ';' => Op::PathParam,
            '?' => Op::Query,
            '&' => Op::QueryCont,
            _ => return None,
        })
    }

    fn first(self) -> &'static str {
        match self {
            Op::Simple | Op::Reserved => "",
            Op::Fragment => "#",
            Op::Label => ".",
            Op::Path => "/",
            Op::PathParam => ";",
            Op::Query => "?",
            Op::QueryCont => "&",
        }
    }

    fn sep(self) -> &'static str {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => ",",
            Op::Label => ".",
            Op::Path => "/",
            Op::PathParam => ";",
            Op::Query | Op::QueryCont => "&",
        }
    }

    fn named(self) -> bool {
        matches!(self, Op::PathParam | Op::Query | Op::QueryCont)
    }

    fn reserved(self) -> bool {
        matches!(self, Op::Reserved | Op::Fragment)
    }

    /// Whether a matched value of this operator may hold `c`.
    fn admits(self, c: char) -> bool {
        match self {
            Op::Reserved | Op::Fragment => true,
            Op::Simple => !matches!(c, '/' | '?' | '#' | ','),
            Op::Label => !matches!(c, '/' | '?' | '#' | '.'),
            Op::Path => !matches!(c, '/' | '?' | '#'),
            Op::PathParam | Op::Query | Op::QueryCont => !matches!(c, '/' | '?' | '#' | '&' | ';'),
        }
    }
}

/// A template's parts; an unclosed `{` is literal text.
fn parse(template: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(len) = rest[open..].find('}') else {
            break;
        };
        if open > 0 {
            parts.push(Part::Literal(&rest[..open]));
        }
        let body = &rest[open + 1..open + len];
        let (op, list) = match body.chars().next().and_then(Op::of) {
            Some(op) => (op, &body[1..]),
            None => (Op::Simple, body),
        };
        let vars = list
            .split(',')
            .filter(|v| !v.is_empty())
            .map(|spec| {
                let spec = spec.trim_end_matches('*');
                match spec.split_once(':') {
                    Some((name, n)) => Var {
                        name,
                        prefix: n.parse().ok(),
                    },
                    None => Var {
                        name: spec,
                        prefix: None,
                    },
                }
            })
            .collect();
        parts.push(Part::Expression(op, vars));
        rest = &rest[open + len + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    parts
}

#[cfg(test)]
/// The variable names of a template, in order, each once.
pub(crate) fn variables(template: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for part in parse(template) {
        if let Part::Expression(_, vars) = part {
            for var in vars {
                if !names.iter().any(|n| n == var.name) {
                    names.push(var.name.to_string());
                }
            }
        }
    }
    names
}

/// A value as text: strings as they are, numbers and booleans written, a list as its items
/// (joined with commas); null, objects, empty lists and missing values are undefined.
fn text_of(value: Option<&Value>) -> Option<Vec<String>> {
    match value? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Number(n) => Some(vec![n.to_string()]),
        Value::Bool(b) => Some(vec![b.to_string()]),
        Value::Array(items) => {
            let items: Vec<String> = items
                .iter()
                .filter_map(|v| match v {
                    Value::Array(_) => None,
                    v => text_of(Some(v)).map(|mut t| t.remove(0)),
                })
                .collect();
            (!items.is_empty()).then_some(items)
        }
        _ => None,
    }
}

/// The URI a template gives with these values.
pub fn expand(template: &str, vars: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(template.len());
    for part in parse(template) {
        match part {
            Part::Literal(text) => out.push_str(text),
            Part::Expression(op, list) => {
                let set = if op.reserved() { RESERVED } else { UNRESERVED };
                let mut first = true;
                for var in list {
                    let Some(mut items) = text_of(vars.get(var.name)) else {
                        continue;
                    };
                    if let (Some(n), [value]) = (var.prefix, items.as_mut_slice())
                        && let Some((at, _)) = value.char_indices().nth(n)
                    {
                        value.truncate(at);
                    }
                    out.push_str(if first { op.first() } else { op.sep() });
                    first = false;
                    if op.named() {
                        out.push_str(var.name);
                        if items == [""] && op == Op::PathParam {
                            continue;
                        }
                        out.push('=');
                    }
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.extend(utf8_percent_encode(item, set));
                    }
                }
            }
        }
    }
    out
}

/// The values a URI gives a template, when the template makes that URI; `None` when it cannot.
/// Simple, label and path variables do not cross `/`; `+` and `#` variables may.
pub(crate) fn matches(template: &str, uri: &str) -> Option<Map<String, Value>> {
    let parts = parse(template);
    let count: usize = parts
        .iter()
        .map(|p| match p {
            Part::Expression(_, vars) => vars.len(),
            Part::Literal(_) => 0,
        })
        .sum();
    if count > MAX_MATCH_VARIABLES || uri.len() > MAX_MATCH_URI_BYTES {
        return None;
    }
    let mut found = Map::new();
    let mut left = MATCH_BUDGET;
    walk(&parts, uri, &mut found, &mut left).then_some(found)
}

fn decoded(text: &str) -> Value {
    Value::String(percent_decode_str(text).decode_utf8_lossy().into_owned())
}

/// Matches `parts` against all of `rest`, backtracking over where each value ends.
fn walk(parts: &[Part<'_>], rest: &str, found: &mut Map<String, Value>, left: &mut usize) -> bool {
    if !spend(left, 1) {
        return false;
    }
    let Some((part, more)) = parts.split_first() else {
        return rest.is_empty();
    };
    match part {
        Part::Literal(text) => rest
            .strip_prefix(text)
            .is_some_and(|rest| walk(more, rest, found, left)),
        Part::Expression(op, vars) if op.named() => named(*op, vars, more, rest, found, left),
        Part::Expression(op, vars) => {
            if let Some(after) = rest.strip_prefix(op.first())
                && values(*op, vars, more, after, found, left)
            {
                return true;
            }
            // Every variable undefined: the expression gave nothing (not even its prefix).
            !op.first().is_empty() && walk(more, rest, found, left)
        }
    }
}

/// Each of `vars` in turn (separated by the operator's separator), then the parts after.
fn values(
    op: Op,
    vars: &[Var<'_>],
    more: &[Part<'_>],
    rest: &str,
    found: &mut Map<String, Value>,
    left: &mut usize,
) -> bool {
    let Some((var, others)) = vars.split_first() else {
        return walk(more, rest, found, left);
    };
    let longest = rest
        .char_indices()
        .find(|&(_, c)| !op.admits(c))
        .map_or(rest.len(), |(at, _)| at);
    if !spend(left, longest + 1) {
        return false;
    }
    // Longest first: the boundaries of the admissible run, from its end down to nothing.
    let mut ends: Vec<usize> = rest[..longest].char_indices().map(|(at, _)| at).collect();
    ends.push(longest);
    ends.dedup();
    ends.reverse();
    for end in ends {
        let tail = &rest[end..];
        let tail = if others.is_empty() {
            Some(tail)
        } else {
            tail.strip_prefix(op.sep())
        };
        let Some(tail) = tail else { continue };
        found.insert(var.name.to_string(), decoded(&rest[..end]));
        if values(op, others, more, tail, found, left) {
            return true;
        }
        found.remove(var.name);
    }
    false
}

/// A named expression (`; ? &`): `name=value` pairs in any order, each variable at most once,
/// any of them absent.
fn named(
    op: Op,
    vars: &[Var<'_>],
    more: &[Part<'_>],
    rest: &str,
    found: &mut Map<String, Value>,
    left: &mut usize,
) -> bool {
    if let Some(body) = rest.strip_prefix(op.first()) {
        if !spend(left, body.len() + 1) {
            return false;
        }
        let end = body
            .char_indices()
            .find(|&(_, c)| matches!(c, '/' | '?' | '#') || (op != Op::PathParam && c == ';'))
            .map_or(body.len(), |(at, _)| at);
        let (pairs, tail) = body.split_at(end);
        let mut got = Vec::new();
        let all_known = pairs.split(op.sep()).all(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let known = vars.iter().any(|v| v.name == name) && !got.contains(&name);
            got.push(name);
            if known {
                found.insert(name.to_string(), decoded(value));
            }
            known
        });
        if all_known && walk(more, tail, found, left) {
            return true;
        }
        for name in got {
            found.remove(name);
        }
    }
    walk(more, rest, found, left)
}

/// Takes `cost` from what a match may still do; false once it has run out.
fn spend(left: &mut usize, cost: usize) -> bool {
    match left.checked_sub(cost) {
        Some(rest) => {
            *left = rest;
            true
        }
        None => {
            *left = 0;
            false
        }
    }
}
