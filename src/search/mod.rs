//! STUB (replaced by h5/E): the API of /tmp/search-design.md.
#![allow(dead_code)]
pub struct Doc {
    pub name: String,
    pub server: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub params: Vec<(String, Option<String>)>,
}
impl Doc {
    pub fn from_listing(name: &str, server: Option<&str>, listing: &serde_json::Value) -> Doc {
        Doc {
            name: name.to_string(),
            server: server.map(str::to_string),
            title: None,
            description: listing
                .get("description")
                .and_then(|d| d.as_str())
                .map(str::to_string),
            params: vec![],
        }
    }
}
pub struct Index {
    docs: Vec<Doc>,
}
pub struct Hit {
    pub index: usize,
    pub score: f64,
}
impl Index {
    pub fn new(docs: Vec<Doc>) -> Index {
        Index { docs }
    }
    pub fn len(&self) -> usize {
        self.docs.len()
    }
    pub fn search(&self, query: &str, limit: usize, servers: Option<&[String]>) -> Vec<Hit> {
        let q = query.to_lowercase();
        self.docs
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                servers.is_none_or(|s| d.server.as_ref().is_some_and(|x| s.contains(x)))
            })
            .filter(|(_, d)| {
                q.split_whitespace()
                    .any(|w| d.name.to_lowercase().contains(w))
            })
            .take(limit)
            .map(|(index, _)| Hit { index, score: 1.0 })
            .collect()
    }
}
