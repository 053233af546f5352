//! Tool search: ranks the tools of a catalog against a request in words, with no model and no
//! network. BM25F over the words of a tool's name, title, parameters and description, with light
//! stemming and a built-in synonym table on the query side.
//!
//! Built once per catalog (`Index::new`, linear in the catalog's text); a query touches only the
//! postings of its own words and their synonyms, so a 10 000-tool catalog answers in microseconds.

mod query;
mod synonyms;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_recall;
#[cfg(test)]
mod tests_speed;
mod text;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;
/// The weight of a query word that names a server ("on GitHub"): how users say where to look.
const SERVER_MENTION_WEIGHT: f64 = 2.0;

/// The fields of a tool, and how much a word in each counts.
#[derive(Clone, Copy)]
enum Field {
    Name,
    Title,
    ParamName,
    Description,
    ParamDescription,
    Server,
}

impl Field {
    const ALL: [Field; 6] = [
        Field::Name,
        Field::Title,
        Field::ParamName,
        Field::Description,
        Field::ParamDescription,
        Field::Server,
    ];

    fn weight(self) -> f64 {
        match self {
            Field::Name => 2.5,
            Field::Title => 2.0,
            Field::ParamName => 0.8,
            Field::Description => 1.0,
            Field::ParamDescription => 0.4,
            Field::Server => 2.0,
        }
    }
}

/// One tool as the index sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Doc {
    pub(crate) name: String,
    pub(crate) server: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    /// (parameter name, parameter description) of the top-level properties of inputSchema
    pub(crate) params: Vec<(String, Option<String>)>,
}

impl Doc {
    /// The tool of a `tools/list` entry, known to the caller as `name` on `server`. The title is
    /// the entry's `title`, else `annotations.title`.
    pub fn from_listing(name: &str, server: Option<&str>, listing: &Value) -> Doc {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let title = text(listing.get("title"))
            .or_else(|| text(listing.get("annotations").and_then(|a| a.get("title"))));
        let params = listing
            .get("inputSchema")
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(k, p)| (k.clone(), text(p.get("description"))))
                    .collect()
            })
            .unwrap_or_default();
        Doc {
            name: name.to_string(),
            server: server.map(str::to_string),
            title,
            description: text(listing.get("description")),
            params,
        }
    }

    /// The text of `field` (parameters joined by spaces).
    fn field_text(&self, field: Field) -> String {
        match field {
            Field::Name => self.name.clone(),
            Field::Title => self.title.clone().unwrap_or_default(),
            Field::ParamName => join(self.params.iter().map(|(n, _)| n.as_str())),
            Field::Description => self.description.clone().unwrap_or_default(),
            Field::ParamDescription => join(self.params.iter().filter_map(|(_, d)| d.as_deref())),
            Field::Server => self.server.clone().unwrap_or_default(),
        }
    }
}

/// The tokens of a field: those of each run, and the whole of a run that splits.
fn doc_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in text::runs(text) {
        let parts = text::tokens(run);
        out.extend(text::compound(run, &parts));
        out.extend(parts);
    }
    out
}

fn join<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    parts.collect::<Vec<_>>().join(" ")
}

/// One match: the position of the tool in the docs given to [`Index::new`], and its score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub index: usize,
    pub score: f64,
}

/// An inverted index over a catalog of tools.
pub struct Index {
    names: Vec<String>,
    /// The server of each doc, as a position in `servers`.
    doc_server: Vec<Option<u32>>,
    servers: Vec<String>,
    /// The tokens of the servers' names.
    server_tokens: HashSet<String>,
    vocab: HashMap<String, u32>,
    idf: Vec<f64>,
    /// Per token: (doc, saturated field-weighted term frequency), docs in increasing order.
    postings: Vec<Vec<(u32, f32)>>,
}

impl Index {
    /// Builds the index: O(total tokens of the catalog).
    pub fn new(docs: Vec<Doc>) -> Index {
        let tokenised: Vec<Vec<Vec<String>>> = docs
            .iter()
            .map(|d| {
                Field::ALL
                    .iter()
                    .map(|&f| doc_tokens(&d.field_text(f)))
                    .collect()
            })
            .collect();
        let n = docs.len().max(1) as f64;
        let avg_len: Vec<f64> = (0..Field::ALL.len())
            .map(|f| {
                let total: usize = tokenised.iter().map(|d| d[f].len()).sum();
                (total as f64 / n).max(1.0)
            })
            .collect();

        let mut vocab: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Vec<(u32, f32)>> = Vec::new();
        for (doc, fields) in tokenised.iter().enumerate() {
            let mut weighted: BTreeMap<u32, f64> = BTreeMap::new();
            for (f, tokens) in fields.iter().enumerate() {
                let norm = 1.0 - B + B * tokens.len() as f64 / avg_len[f];
                let w = Field::ALL[f].weight() / norm;
                for t in tokens {
                    let next = vocab.len() as u32;
                    let id = *vocab.entry(t.clone()).or_insert(next);
                    *weighted.entry(id).or_default() += w;
                }
            }
            postings.resize_with(vocab.len(), Vec::new);
            for (id, tf) in weighted {
                let saturated = tf * (K1 + 1.0) / (tf + K1);
                postings[id as usize].push((doc as u32, saturated as f32));
            }
        }
        let idf = postings
            .iter()
            .map(|p| {
                let df = p.len() as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();

        let mut servers: Vec<String> = Vec::new();
        let doc_server = docs
            .iter()
            .map(|d| {
                let s = d.server.as_ref()?;
                let pos = servers.iter().position(|x| x == s).unwrap_or_else(|| {
                    servers.push(s.clone());
                    servers.len() - 1
                });
                Some(pos as u32)
            })
            .collect();
        let server_tokens = servers.iter().flat_map(|s| doc_tokens(s)).collect();
        Index {
            server_tokens,
            names: docs.into_iter().map(|d| d.name).collect(),
            doc_server,
            servers,
            vocab,
            idf,
            postings,
        }
    }

    /// The number of tools indexed.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The best `limit` matches (score > 0), best first; ties by name. `servers`: only these servers.
    pub fn search(&self, query: &str, limit: usize, servers: Option<&[String]>) -> Vec<Hit> {
        if limit == 0 || self.names.is_empty() {
            return Vec::new();
        }
        let allowed: Option<Vec<bool>> =
            servers.map(|wanted| self.servers.iter().map(|s| wanted.contains(s)).collect());
        let mut scores = vec![0.0f64; self.names.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (token, weight) in self.query_terms(query) {
            let Some(&id) = self.vocab.get(&token) else {
                continue;
            };
            let idf = self.idf[id as usize] * weight;
            for &(doc, tf) in &self.postings[id as usize] {
                let d = doc as usize;
                if scores[d] == 0.0 {
                    let server = self.doc_server[d];
                    let ok = match &allowed {
                        None => true,
                        Some(allowed) => server.is_some_and(|s| allowed[s as usize]),
                    };
                    if !ok {
                        continue;
                    }
                    touched.push(doc);
                }
                scores[d] += idf * tf as f64;
            }
        }
        let mut hits: Vec<Hit> = touched
            .into_iter()
            .map(|d| Hit {
                index: d as usize,
                score: scores[d as usize],
            })
            .filter(|h| h.score > 0.0)
            .collect();
        let order = |a: &Hit, b: &Hit| -> Ordering {
            b.score
                .total_cmp(&a.score)
                .then_with(|| self.names[a.index].cmp(&self.names[b.index]))
                .then_with(|| a.index.cmp(&b.index))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        hits
    }

    /// Each query term's part of the score of `doc` (for tuning).
    #[cfg(test)]
    fn explain(&self, query: &str, doc: usize) -> Vec<(String, f64)> {
        let mut parts = Vec::new();
        for (token, weight) in self.query_terms(query) {
            let Some(&id) = self.vocab.get(&token) else {
                continue;
            };
            let postings = &self.postings[id as usize];
            if let Some(&(_, tf)) = postings.iter().find(|p| p.0 as usize == doc) {
                parts.push((token, self.idf[id as usize] * weight * tf as f64));
            }
        }
        parts
    }

    /// The query's stems with their weights: 1 for its own words, less for their synonyms
    /// (see `synonyms`); in a fixed order, so that equal queries add up scores identically.
    fn query_terms(&self, query: &str) -> BTreeMap<String, f64> {
        let mut terms: BTreeMap<String, f64> = BTreeMap::new();
        let mut add = |token: String, weight: f64| {
            let w = terms.entry(token).or_default();
            *w = w.max(weight);
        };
        for (chunk, is_value) in query::chunks(query) {
            for run in text::runs(chunk) {
                let parts = text::tokens(run);
                // A compound the catalog knows whole ("GitHub") is looked for whole, else by parts.
                let tokens = match text::compound(run, &parts) {
                    Some(whole) if self.vocab.contains_key(&whole) => vec![whole],
                    _ => parts,
                };
                for token in tokens {
                    if is_value {
                        add(token, query::VALUE_WEIGHT);
                        continue;
                    }
                    // A server named by a common word ("fetch", "time") is not a brand: the
                    // word likely means what it says.
                    let related = synonyms::related(&token);
                    let server = self.server_tokens.contains(&token) && related.is_empty();
                    for (other, weight) in related {
                        add(other.clone(), *weight);
                    }
                    add(token, if server { SERVER_MENTION_WEIGHT } else { 1.0 });
                }
            }
        }
        if query::names_a_file(query) {
            add(text::stem("file"), synonyms::SYNONYM_WEIGHT);
        }
        terms
    }
}
