//! Linking: resolving a file's imports to files and its references, by name, to
//! definitions (see `KnowledgeGraph::from_files` for the rules), and re-linking
//! what an update can change.

use std::collections::BTreeSet;

use foldhash::{HashMap, HashSet};

use petgraph::stable_graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Direction;

use super::extract::{Origin, Receiver, RefKind};
use super::model::{Edge, EdgeKind, NodeKind};
use super::modules::{self, Match};
use super::store::{FileEntry, KnowledgeGraph};

/// What a reference of each kind can point at.
pub(super) fn targets(kind: RefKind, node: NodeKind) -> bool {
    match kind {
        RefKind::Call => matches!(node, NodeKind::Function | NodeKind::Class),
        RefKind::Inherit | RefKind::Type => node == NodeKind::Class,
        RefKind::Use => node == NodeKind::Variable,
        RefKind::Item => matches!(
            node,
            NodeKind::Function | NodeKind::Class | NodeKind::Variable
        ),
    }
}

/// A Go test file (`x_test.go`): part of its package's test build only.
pub(super) fn go_test_file(path: &str) -> bool {
    path.ends_with("_test.go")
}

/// The most definitions one reference is linked to (see `KnowledgeGraph::from_files`).
pub const MAX_CANDIDATES: usize = 5;

/// The file nodes each import of a file resolves to, and the file's scope.
pub(super) type Resolution = (Vec<Vec<NodeIndex>>, Vec<NodeIndex>);

/// How the edges of a file are re-linked.
pub(super) enum Relink<'a> {
    /// Imports and every reference.
    All,
    /// The references to these names.
    Names(&'a HashSet<String>),
}

impl KnowledgeGraph {
    /// Re-resolves, in the files other than `path` (and those already re-linked), the
    /// references to `names`: each file only for the names it refers to.
    pub(super) fn relink_others(
        &mut self,
        path: &str,
        names: &HashSet<String>,
        done: &BTreeSet<NodeIndex>,
    ) {
        let own = self.files.get(path).map(|e| e.node);
        let skip = |f: &NodeIndex| Some(*f) == own || done.contains(f);
        for (file, names) in self.referring(names, skip) {
            self.relink(file, Relink::Names(&names));
        }
    }

    /// The files referring to some of `names` (but not those `skip` says), each with
    /// the names it refers to.
    pub(super) fn referring(
        &self,
        names: &HashSet<String>,
        skip: impl Fn(&NodeIndex) -> bool,
    ) -> Vec<(NodeIndex, HashSet<String>)> {
        let mut subsets: HashMap<NodeIndex, HashSet<String>> = HashMap::default();
        for name in names {
            for file in self
                .wanted
                .get(name)
                .into_iter()
                .flatten()
                .filter(|f| !skip(f))
            {
                subsets.entry(*file).or_default().insert(name.clone());
            }
        }
        let mut out: Vec<_> = subsets.into_iter().collect();
        out.sort_by_key(|(file, _)| *file);
        out
    }

    /// The indexes of a file's references, all or those to `names`.
    pub(super) fn selected(entry: &FileEntry, how: &Relink<'_>) -> Vec<u32> {
        match how {
            Relink::All => (0..entry.symbols.references.len() as u32).collect(),
            Relink::Names(names) => {
                let references = &entry.symbols.references;
                let mut out = Vec::new();
                for name in names.iter() {
                    let lo = references.partition_point(|r| r.name < *name);
                    let hi = lo + references[lo..].partition_point(|r| r.name == *name);
                    out.extend(lo as u32..hi as u32);
                }
                out
            }
        }
    }

    pub(super) fn source(entry: &FileEntry, origin: Origin) -> NodeIndex {
        match origin {
            Origin::File => entry.node,
            Origin::Definition(d) => entry.defs[d as usize],
            Origin::Import(i) => entry.imports[i as usize],
        }
    }

    /// Removes the edges a file's references (all, or those to `names`) and, for
    /// `All`, its imports made, then links them again.
    pub(super) fn relink(&mut self, file: NodeIndex, how: Relink<'_>) {
        let path = self.graph[file].path.clone();
        let Some(entry) = self.files.get(&path) else {
            return;
        };
        let doomed: Vec<EdgeIndex> = match how {
            Relink::All => entry
                .nodes()
                .flat_map(|n| self.graph.edges_directed(n, Direction::Outgoing))
                .filter(|e| e.weight().kind != EdgeKind::Contains)
                .map(|e| e.id())
                .collect(),
            Relink::Names(_) => {
                let mut selected = Self::selected(entry, &how);
                selected.sort_unstable();
                let mut sources: Vec<NodeIndex> = selected
                    .iter()
                    .map(|&r| Self::source(entry, entry.symbols.references[r as usize].origin))
                    .collect();
                sources.sort_unstable();
                sources.dedup();
                sources
                    .into_iter()
                    .flat_map(|n| self.graph.edges_directed(n, Direction::Outgoing))
                    .filter(|e| {
                        !matches!(e.weight().kind, EdgeKind::Contains | EdgeKind::Imports)
                            && selected.binary_search(&e.weight().reference).is_ok()
                    })
                    .map(|e| e.id())
                    .collect()
            }
        };
        for edge in doomed {
            self.graph.remove_edge(edge);
        }
        self.link(&path, &how);
    }

    /// The files a module lookup resolves to; several matches in the importer's own
    /// folder win over matches elsewhere.
    pub(super) fn resolve(
        &self,
        importer: NodeIndex,
        keys: &[String],
        how: Match,
    ) -> Vec<NodeIndex> {
        let mut found: Vec<NodeIndex> = Vec::new();
        for key in keys {
            let Some(files) = self.modules.get(key) else {
                continue;
            };
            // A Go package's `_test.go` files are never imported.
            found.extend(
                files
                    .iter()
                    .filter(|&&f| f != importer && !go_test_file(&self.graph[f].path)),
            );
            if how == Match::First && !found.is_empty() {
                break;
            }
        }
        found.sort();
        found.dedup();
        let folder = |f: NodeIndex| {
            let path = &self.graph[f].path;
            path.rsplit_once('/').map_or("", |(d, _)| d)
        };
        let here = folder(importer);
        if found.len() > 1 && found.iter().any(|&f| folder(f) == here) {
            found.retain(|&f| folder(f) == here);
        }
        found
    }

    /// The file nodes each of a file's imports resolves to, and its scope: those and
    /// its package, sorted.
    pub(super) fn resolution(&self, entry: &FileEntry) -> Resolution {
        let language = entry.symbols.language;
        let path = &self.graph[entry.node].path;
        let resolved: Vec<Vec<NodeIndex>> = entry
            .import_keys
            .iter()
            .map(|(keys, how)| self.resolve(entry.node, keys, *how))
            .collect();
        let mut scope: Vec<NodeIndex> = resolved.iter().flatten().copied().collect();
        if let Some(files) = modules::package(language, path).and_then(|p| self.modules.get(&p)) {
            // A Go test file sees its whole package; the package's other files do not
            // see its test files (they belong to the test build only).
            let test = go_test_file(path);
            scope.extend(
                files
                    .iter()
                    .filter(|&&f| f != entry.node && (test || !go_test_file(&self.graph[f].path))),
            );
        }
        scope.sort();
        scope.dedup();
        (resolved, scope)
    }

    /// The run of `candidates` (sorted by owner) defined in `file`.
    pub(super) fn defined_in<'c>(
        &self,
        candidates: &'c [NodeIndex],
        file: NodeIndex,
    ) -> &'c [NodeIndex] {
        let lo = candidates.partition_point(|c| self.owner[c.index()] < file);
        let hi = lo + candidates[lo..].partition_point(|c| self.owner[c.index()] <= file);
        &candidates[lo..hi]
    }

    /// Adds a file's import edges (for `All`, after resolving its imports again) and
    /// the edges of its references (all, or those named in `Names`).
    pub(super) fn link(&mut self, path: &str, how: &Relink<'_>) {
        let Some(entry) = self.files.get(path) else {
            return;
        };
        if matches!(how, Relink::All) {
            let (resolved, scope) = self.resolution(entry);
            let entry = self.files.get_mut(path).expect("looked up above");
            (entry.resolved, entry.scope) = (resolved, scope);
        }
        let Some(entry) = self.files.get(path) else {
            return;
        };
        for (a, b, e) in self.edges_of(entry, how) {
            self.graph.add_edge(a, b, e);
        }
    }

    /// The edges a file's imports (for `All`) and references (all, or those named in
    /// `Names`) make, its imports being resolved already.
    pub(super) fn edges_of(
        &self,
        entry: &FileEntry,
        how: &Relink<'_>,
    ) -> Vec<(NodeIndex, NodeIndex, Edge)> {
        let family = modules::family(entry.symbols.language);
        let mut edges: Vec<(NodeIndex, NodeIndex, Edge)> = Vec::new();
        if matches!(how, Relink::All) {
            for ((files, import), &node) in entry
                .resolved
                .iter()
                .zip(&entry.symbols.imports)
                .zip(&entry.imports)
            {
                let confidence = 1.0 / files.len().max(1) as f32;
                for &f in files {
                    edges.push((
                        node,
                        f,
                        Edge {
                            kind: EdgeKind::Imports,
                            confidence,
                            line: import.line,
                            reference: u32::MAX,
                        },
                    ));
                }
            }
        }
        // Only a Go test file may refer to what `_test.go` files define.
        let from_test = go_test_file(&self.graph[entry.node].path);
        // Reused for every reference: candidates here, in scope, anywhere.
        let (mut here, mut near, mut anywhere) = (Vec::new(), Vec::new(), Vec::new());
        for index in Self::selected(entry, how) {
            let r = &entry.symbols.references[index as usize];
            let Some(candidates) = self.names.get(&r.name) else {
                continue;
            };
            let source = Self::source(entry, r.origin);
            let accept = |c: NodeIndex| {
                let node = &self.graph[c];
                targets(r.kind, node.kind)
                    && (c != source || r.kind == RefKind::Call)
                    && modules::family(node.language) == family
                    && (from_test || !go_test_file(&node.path))
            };
            // The acceptable candidates defined in any of `files`.
            let defined_in = |files: &[NodeIndex], out: &mut Vec<NodeIndex>| {
                for &f in files {
                    out.extend(
                        self.defined_in(candidates, f)
                            .iter()
                            .copied()
                            .filter(|&c| accept(c)),
                    );
                }
            };
            here.clear();
            near.clear();
            anywhere.clear();
            // A receiver that names the class or an imported module decides first.
            match r.receiver {
                Receiver::This => {
                    let class = std::iter::successors(self.parent(source), |&p| self.parent(p))
                        .find(|&p| self.graph[p].kind == NodeKind::Class);
                    if let Some(class) = class {
                        defined_in(&[entry.node], &mut here);
                        here.retain(|c| self.parents[c.index()] == class);
                    }
                }
                Receiver::Import(i) => defined_in(&entry.resolved[i as usize], &mut near),
                Receiver::Named(_) | Receiver::Unknown => {}
            }
            let pinned = !here.is_empty() || !near.is_empty();
            if !pinned && r.kind != RefKind::Item {
                defined_in(&[entry.node], &mut here);
            }
            if !pinned && here.is_empty() {
                // A name an import brings in is looked up there before the rest in scope.
                if let Receiver::Named(i) = r.receiver {
                    defined_in(&entry.resolved[i as usize], &mut near);
                }
                if near.is_empty() {
                    let files: &[NodeIndex] = match r.origin {
                        Origin::Import(i) => &entry.resolved[i as usize],
                        _ => &entry.scope,
                    };
                    defined_in(files, &mut near);
                }
            }
            let repo_wide = matches!(r.kind, RefKind::Call | RefKind::Inherit | RefKind::Type);
            let chosen = if !here.is_empty() {
                &here
            } else if !near.is_empty() {
                &near
            } else if repo_wide {
                // Past MAX_CANDIDATES nothing is linked: stop counting there.
                anywhere.extend(
                    candidates
                        .iter()
                        .copied()
                        .filter(|&c| accept(c))
                        .take(MAX_CANDIDATES + 1),
                );
                &anywhere
            } else {
                continue;
            };
            if chosen.is_empty() || chosen.len() > MAX_CANDIDATES {
                continue;
            }
            let confidence = 1.0 / chosen.len() as f32;
            for &target in chosen.iter() {
                edges.push((
                    source,
                    target,
                    Edge {
                        kind: EdgeKind::of(r.kind),
                        confidence,
                        line: r.line,
                        reference: index,
                    },
                ));
            }
        }
        edges
    }
}

#[cfg(test)]
mod tests {
    use super::super::store::tests::{callees, graph};
    use super::*;

    #[test]
    fn imports_decide_between_definitions_of_one_name() {
        // Two `load`s: the call goes to the one the file imports, with confidence 1.
        let g = graph(&[
            ("a/store.py", "def load():\n    pass\n"),
            ("b/store.py", "def load():\n    pass\n"),
            (
                "main.py",
                "from b.store import load\n\ndef main():\n    load()\n",
            ),
            ("other.py", "def run():\n    load()\n"),
        ]);
        assert_eq!(
            callees(&g, "main"),
            [("b/store.py:load".to_string(), 4, 1.0)]
        );
        assert_eq!(
            callees(&g, "run"),
            [
                ("a/store.py:load".to_string(), 2, 0.5),
                ("b/store.py:load".to_string(), 2, 0.5)
            ]
        );
    }

    #[test]
    fn receivers_pin_calls_down() {
        let g = graph(&[
            ("db.py", "def connect():\n    pass\n"),
            ("net.py", "def connect():\n    pass\n"),
            (
                "app.py",
                "import db\nimport net as n\n\ndef connect():\n    pass\n\nclass A:\n    def run(self):\n        db.connect()\n        n.connect()\n        self.stop()\n    def stop(self):\n        pass\n\nclass B:\n    def stop(self):\n        pass\n",
            ),
        ]);
        // Without receivers all three would resolve in app.py itself (same file first).
        assert_eq!(
            callees(&g, "run"),
            [
                ("app.py:stop".to_string(), 11, 1.0),
                ("db.py:connect".to_string(), 9, 1.0),
                ("net.py:connect".to_string(), 10, 1.0)
            ]
        );
        let stop = g.find_symbol("stop", false)[0];
        assert_eq!(
            g.node(g.parent(stop).unwrap()).name,
            "A",
            "self.stop() is A's, not B's"
        );
        assert_eq!(g.callers("stop").len(), 1);
    }

    #[test]
    fn imported_names_resolve_in_their_module_even_renamed() {
        let g = graph(&[
            ("a/store.py", "def load():\n    pass\n\ndef save():\n    pass\n"),
            ("b/store.py", "def load():\n    pass\n\ndef save():\n    pass\n"),
            ("main.py", "from a.store import load, save as keep\nfrom b import store\n\ndef main():\n    load()\n    keep()\n    store.save()\n"),
        ]);
        // b/store.py is in scope too; each name goes to the import that brings it in.
        assert_eq!(
            callees(&g, "main"),
            [
                ("a/store.py:load".to_string(), 5, 1.0),
                ("a/store.py:save".to_string(), 6, 1.0),
                ("b/store.py:save".to_string(), 7, 1.0)
            ]
        );
    }

    #[test]
    fn ambiguous_calls_link_every_candidate_with_lower_confidence() {
        let g = graph(&[
            ("a.py", "def run():\n    pass\n"),
            ("b.py", "def run():\n    pass\n"),
            ("c.py", "def main():\n    run()\n"),
        ]);
        assert_eq!(
            callees(&g, "main"),
            [
                ("a.py:run".to_string(), 2, 0.5),
                ("b.py:run".to_string(), 2, 0.5)
            ]
        );
    }

    #[test]
    fn names_with_too_many_definitions_are_not_linked() {
        let mut files: Vec<(String, String)> = (0..=MAX_CANDIDATES)
            .map(|i| (format!("m{i}.py"), "def get():\n    pass\n".to_string()))
            .collect();
        files.push(("main.py".into(), "def main():\n    get()\n".into()));
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let g = graph(&refs);
        assert!(g.callees("main").is_empty());
        assert_eq!(g.find_symbol("get", false).len(), MAX_CANDIDATES + 1);
    }
}
