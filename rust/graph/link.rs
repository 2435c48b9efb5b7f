//! Linking: resolving a file's imports to files and its references, by name, to
//! definitions (see `KnowledgeGraph::from_files` for the rules), and re-linking
//! what an update can change.

use std::collections::BTreeSet;

use foldhash::{HashMap, HashSet};

use super::adjacency::{Direction, EdgeId, NodeIndex};
use super::extract::{Language, Origin, Receiver, RefKind};
use super::model::{line32, Edge, EdgeKind, NodeKind};
use super::modules::{self, Match};
use super::store::{FileEntry, KnowledgeGraph};

/// The last part of a path or module key, up to its first dot (`a/b/C.java` and
/// `java:a/b/C` give `C`).
fn stem(text: &str) -> &str {
    let last = text.rsplit(['/', ':']).next().unwrap_or_default();
    last.split('.').next().unwrap_or_default()
}

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
    /// The calls on a receiver of a known class or `self` (whose targets depend on
    /// classes and bases anywhere): those to these names, or all.
    Typed(Option<&'a HashSet<String>>),
    /// The base classes of these names.
    Bases(&'a HashSet<String>),
}

/// Which references of a file `edges_of` links: base classes are linked first, as
/// method resolution walks their edges.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    Bases,
    Rest,
}

/// The confidence of a call on another object held by `self` (`self.x.f()`,
/// `Receiver::Member`) linked to the enclosing class's own method: only when no
/// other definition has the name, and below any link by name alone (those are at
/// least `1 / MAX_CANDIDATES`).
pub const MEMBER_OWN_CONFIDENCE: f32 = 0.1;

/// How many levels of bases method resolution climbs.
const MAX_BASE_LEVELS: usize = 16;

/// The receiver type of a Go method, from its signature (`T` in
/// `func (t *T[K]) M() {`); None for a plain function.
pub(super) fn go_receiver(signature: &str) -> Option<&str> {
    let rest = signature
        .strip_prefix("func")?
        .trim_start()
        .strip_prefix('(')?;
    let inside = &rest[..rest.find(')')?];
    // The type is the last word before any type arguments: `c Client[K, V]`.
    let inside = inside.split('[').next().unwrap_or(inside);
    let last = inside.split_whitespace().last()?;
    let name = last.trim_start_matches('*');
    (!name.is_empty()).then_some(name)
}

/// Whether a reference's target depends on classes and their bases.
pub(super) fn typed(receiver: Receiver) -> bool {
    matches!(receiver, Receiver::This | Receiver::Type(_))
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
            let wanted = self
                .interned
                .id(name)
                .and_then(|id| self.wanted.get(id as usize));
            for file in wanted.into_iter().flatten().filter(|f| !skip(f)) {
                subsets.entry(*file).or_default().insert(name.clone());
            }
        }
        let mut out: Vec<_> = subsets.into_iter().collect();
        out.sort_by_key(|(file, _)| *file);
        out
    }

    /// The indexes of a file's references, all or those `how` names.
    pub(super) fn selected(&self, entry: &FileEntry, how: &Relink<'_>) -> Vec<u32> {
        let references = &entry.symbols.references;
        let name_of = |r: &super::store::Ref| self.interned.get(r.name);
        let named = |names: &HashSet<String>| {
            let mut out = Vec::new();
            for name in names.iter() {
                let lo = references.partition_point(|r| name_of(r) < name.as_str());
                let hi = lo + references[lo..].partition_point(|r| name_of(r) == name.as_str());
                out.extend(lo as u32..hi as u32);
            }
            out
        };
        match how {
            Relink::All => (0..references.len() as u32).collect(),
            Relink::Names(names) => named(names),
            Relink::Typed(Some(names)) => {
                let mut out = named(names);
                out.retain(|&r| typed(references[r as usize].receiver));
                out
            }
            Relink::Bases(names) => {
                let mut out = named(names);
                out.retain(|&r| references[r as usize].kind == RefKind::Inherit);
                out
            }
            Relink::Typed(None) => (0..references.len() as u32)
                .filter(|&r| typed(references[r as usize].receiver))
                .collect(),
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
        let Some(entry) = self.files.get(&*path) else {
            return;
        };
        let doomed: Vec<EdgeId> = match how {
            Relink::All => entry
                .nodes()
                .flat_map(|n| self.graph.edges_directed(n, Direction::Outgoing))
                .filter(|e| e.weight().kind != EdgeKind::Contains)
                .map(|e| e.id())
                .collect(),
            Relink::Names(_) | Relink::Typed(_) | Relink::Bases(_) => {
                let mut selected = self.selected(entry, &how);
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
        let partial = !matches!(how, Relink::All);
        self.link(&path, &how);
        if partial {
            self.relink_package_imports(&path);
        }
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
        let declared = entry.symbols.package.as_deref();
        if let Some(files) =
            modules::package_of(language, path, declared).and_then(|p| self.modules.get(&p))
        {
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
        // Bases first: method resolution walks their edges.
        for pass in [Pass::Bases, Pass::Rest] {
            let Some(entry) = self.files.get(path) else {
                return;
            };
            for (a, b, e) in self.edges_of(entry, how, pass) {
                self.graph.add_edge(a, b, e);
            }
        }
    }

    /// The classes a type name in a file stands for, found as a type reference's
    /// would be: in the file, else in its scope, else anywhere (at most
    /// `MAX_CANDIDATES`).
    fn classes_named(
        &self,
        entry: &FileEntry,
        name: &str,
        accept: &dyn Fn(NodeIndex) -> bool,
    ) -> Vec<NodeIndex> {
        let candidates = self.named(name);
        if candidates.is_empty() {
            return vec![];
        }
        let class = |c: NodeIndex| self.graph[c].kind == NodeKind::Class && accept(c);
        let mut out: Vec<NodeIndex> = self
            .defined_in(candidates, entry.node)
            .iter()
            .copied()
            .filter(|&c| class(c))
            .collect();
        if out.is_empty() {
            for &f in &entry.scope {
                out.extend(
                    self.defined_in(candidates, f)
                        .iter()
                        .copied()
                        .filter(|&c| class(c)),
                );
            }
        }
        if out.is_empty() {
            out.extend(
                candidates
                    .iter()
                    .copied()
                    .filter(|&c| class(c))
                    .take(MAX_CANDIDATES + 1),
            );
        }
        if out.len() > MAX_CANDIDATES {
            out.clear();
        }
        out
    }

    /// The innermost class around a node (None: it is in no class).
    fn enclosing_class(&self, node: NodeIndex) -> Option<NodeIndex> {
        std::iter::successors(self.parent(node), |&p| self.parent(p))
            .find(|&p| self.graph[p].kind == NodeKind::Class)
    }

    /// The methods named `name` (an id in `interned`) of `classes` or, level by
    /// level, of their bases (the edges `Pass::Bases` made): those of the nearest
    /// level that has any. A Go type's methods are the functions of its folder
    /// whose receiver it is.
    fn methods_in_bases(
        &self,
        classes: &[NodeIndex],
        name: u32,
        accept: &dyn Fn(NodeIndex) -> bool,
    ) -> Vec<NodeIndex> {
        let candidates = self.named_id(name);
        if candidates.is_empty() {
            return vec![];
        }
        let mut level: Vec<NodeIndex> = classes.to_vec();
        let mut seen: Vec<NodeIndex> = classes.to_vec();
        let mut found: Vec<NodeIndex> = Vec::new();
        for _ in 0..MAX_BASE_LEVELS {
            for &class in &level {
                let node = &self.graph[class];
                if node.language == super::extract::Language::Go {
                    let folder = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
                    let here = folder(&node.path);
                    found.extend(candidates.iter().copied().filter(|&c| {
                        let m = &self.graph[c];
                        m.kind == NodeKind::Function
                            && m.language == node.language
                            && go_receiver(&m.signature) == Some(&*node.name)
                            && folder(&m.path) == here
                            && accept(c)
                    }));
                } else {
                    found.extend(
                        self.defined_in(candidates, self.owner[class.index()])
                            .iter()
                            .copied()
                            .filter(|&c| self.parents[c.index()] == class && accept(c)),
                    );
                }
            }
            if !found.is_empty() {
                found.sort();
                found.dedup();
                return found;
            }
            let mut next = Vec::new();
            for &class in &level {
                for e in self.graph.edges_directed(class, Direction::Outgoing) {
                    if e.weight().kind == EdgeKind::Inherits && !seen.contains(&e.target()) {
                        seen.push(e.target());
                        next.push(e.target());
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            level = next;
        }
        found
    }

    /// The edges a file's imports (for `All`) and references (all, or those named in
    /// `Names`) make, its imports being resolved already.
    pub(super) fn edges_of(
        &self,
        entry: &FileEntry,
        how: &Relink<'_>,
        pass: Pass,
    ) -> Vec<(NodeIndex, NodeIndex, Edge)> {
        let family = modules::family(entry.symbols.language);
        let mut edges: Vec<(NodeIndex, NodeIndex, Edge)> = Vec::new();
        let imports = matches!(how, Relink::All) && pass == Pass::Rest;
        let packages = if imports {
            self.package_imports(entry)
        } else {
            Vec::new()
        };
        if imports {
            for (i, ((files, import), &node)) in entry
                .resolved
                .iter()
                .zip(&entry.symbols.imports)
                .zip(&entry.imports)
                .enumerate()
            {
                if packages.contains(&i) {
                    continue;
                }
                let confidence = 1.0 / files.len().max(1) as f32;
                for &f in files {
                    edges.push((
                        node,
                        f,
                        Edge {
                            kind: EdgeKind::Imports,
                            confidence,
                            line: line32(import.line),
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
        for index in self.selected(entry, how) {
            let r = &entry.symbols.references[index as usize];
            if (r.kind == RefKind::Inherit) != (pass == Pass::Bases) {
                continue;
            }
            let candidates = self.named_id(r.name);
            if candidates.is_empty() {
                continue;
            }
            let source = Self::source(entry, r.origin);
            let admissible = |c: NodeIndex| {
                let node = &self.graph[c];
                targets(r.kind, node.kind)
                    && (c != source || r.kind == RefKind::Call)
                    && modules::family(node.language) == family
                    && (from_test || !go_test_file(&node.path))
            };
            // A call on another object held by `self` (`self.x.f()`): not the
            // caller, nor a method of the class around it.
            let own_class = match r.receiver {
                Receiver::Member => self.enclosing_class(source),
                _ => None,
            };
            let own = |c: NodeIndex| {
                r.receiver == Receiver::Member
                    && (c == source || (own_class.is_some() && self.parent(c) == own_class))
            };
            let accept = |c: NodeIndex| admissible(c) && !own(c);
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
                    if let Some(class) = self.enclosing_class(source) {
                        here = self.methods_in_bases(&[class], r.name, &accept);
                    }
                }
                Receiver::Type(t) => {
                    if let Some(name) = entry.symbols.types.get(t as usize) {
                        let classes = self.classes_named(entry, name, &|c| {
                            let node = &self.graph[c];
                            modules::family(node.language) == family
                                && (from_test || !go_test_file(&node.path))
                        });
                        here = self.methods_in_bases(&classes, r.name, &accept);
                    }
                }
                Receiver::Import(i) => defined_in(&entry.resolved[i as usize], &mut near),
                Receiver::Named(_) | Receiver::Unknown | Receiver::Member => {}
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
            let mut chosen = if !here.is_empty() {
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
            let mut confidence = 1.0;
            if chosen.is_empty() && r.receiver == Receiver::Member {
                // Nothing else has the name: the class's own method (the same
                // method on another instance, as in a tree), at low confidence.
                anywhere.clear();
                anywhere.extend(
                    candidates
                        .iter()
                        .copied()
                        .filter(|&c| admissible(c) && own(c)),
                );
                confidence = MEMBER_OWN_CONFIDENCE;
                chosen = &anywhere;
            }
            if chosen.is_empty() || chosen.len() > MAX_CANDIDATES {
                continue;
            }
            let confidence = confidence / chosen.len() as f32;
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
        if !packages.is_empty() {
            // The file's bases were linked in the pass before (in the graph now),
            // the rest just above.
            let linked = entry
                .nodes()
                .flat_map(|n| self.graph.edges_directed(n, Direction::Outgoing))
                .filter(|e| e.weight().kind == EdgeKind::Inherits)
                .map(|e| (e.target(), e.weight().confidence))
                .chain(
                    edges
                        .iter()
                        .filter(|(_, _, e)| e.kind != EdgeKind::Imports)
                        .map(|(_, b, e)| (*b, e.confidence)),
                );
            let used = self.used_files(linked);
            edges.extend(self.package_import_edges(entry, &packages, &used));
        }
        edges
    }

    /// The imports of `entry` (by index) that name a package of Java, Kotlin,
    /// Scala or C# (`import a.b.*`, `import a.b._`, `using A.B;`, or a class import
    /// that fell back to its package) rather than a class or file: the module key
    /// they matched names a folder, not one of the files it found (a file named as
    /// its folder, `b/b.java`, reads as a class). Such an import makes the
    /// package's types available; the file depends only on those it uses
    /// (`package_import_edges`). A Go import names a package too, but a Go package
    /// is one unit: its imports link every file of it, as before.
    pub(super) fn package_imports(&self, entry: &FileEntry) -> Vec<usize> {
        let language = entry.symbols.language;
        if !matches!(
            language,
            Language::Java | Language::Kotlin | Language::Scala | Language::CSharp
        ) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, ((keys, how), files)) in entry.import_keys.iter().zip(&entry.resolved).enumerate() {
            // A file removed since the import was resolved: the import is resolved
            // again after this (its importer is re-linked whole).
            if *how != Match::First
                || files.is_empty()
                || !files.iter().all(|&f| self.graph.contains_node(f))
            {
                continue;
            }
            // The first key that finds one of them: `resolve` stopped there (the
            // keys before found none it kept).
            let matched = keys.iter().find(|k| {
                self.modules
                    .get(*k)
                    .is_some_and(|found| found.contains(&files[0]))
            });
            // A key naming a class ends with its file's name (`a/b/C` for C.java);
            // one naming a package, with its folder's (`a/b`).
            let package = matched.is_some_and(|k| {
                let named = stem(k);
                files.iter().all(|&f| stem(&self.graph[f].path) != named)
            });
            if package {
                out.push(i);
            }
        }
        out
    }

    /// The files the targets of `linked` (target, confidence) belong to, each with
    /// the highest confidence of a link into it.
    fn used_files(
        &self,
        linked: impl Iterator<Item = (NodeIndex, f32)>,
    ) -> HashMap<NodeIndex, f32> {
        let mut used: HashMap<NodeIndex, f32> = HashMap::default();
        for (target, confidence) in linked {
            let file = self.owner[target.index()];
            let best = used.entry(file).or_insert(0.0);
            *best = best.max(confidence);
        }
        used
    }

    /// The `Imports` edges of `entry`'s package imports (`package_imports`): to
    /// the files of the package its references or bases are linked into (`used`),
    /// at the highest confidence of those links.
    fn package_import_edges(
        &self,
        entry: &FileEntry,
        packages: &[usize],
        used: &HashMap<NodeIndex, f32>,
    ) -> Vec<(NodeIndex, NodeIndex, Edge)> {
        let mut out = Vec::new();
        for &i in packages {
            let line = line32(entry.symbols.imports[i].line);
            for f in &entry.resolved[i] {
                if let Some(&confidence) = used.get(f) {
                    let edge = Edge {
                        kind: EdgeKind::Imports,
                        confidence,
                        line,
                        reference: u32::MAX,
                    };
                    out.push((entry.imports[i], *f, edge));
                }
            }
        }
        out
    }

    /// After a partial relink of the file `path` (its references to some names):
    /// its package imports' edges made again from the links it has now.
    pub(super) fn relink_package_imports(&mut self, path: &str) {
        let Some(entry) = self.files.get(path) else {
            return;
        };
        let packages = self.package_imports(entry);
        if packages.is_empty() {
            return;
        }
        let import_nodes: Vec<NodeIndex> = packages.iter().map(|&i| entry.imports[i]).collect();
        let doomed: Vec<EdgeId> = import_nodes
            .iter()
            .flat_map(|&n| self.graph.edges_directed(n, Direction::Outgoing))
            .filter(|e| e.weight().kind == EdgeKind::Imports)
            .map(|e| e.id())
            .collect();
        let linked = entry
            .nodes()
            .flat_map(|n| self.graph.edges_directed(n, Direction::Outgoing))
            .filter(|e| !matches!(e.weight().kind, EdgeKind::Contains | EdgeKind::Imports))
            .map(|e| (e.target(), e.weight().confidence));
        let used = self.used_files(linked);
        let edges = self.package_import_edges(entry, &packages, &used);
        for edge in doomed {
            self.graph.remove_edge(edge);
        }
        for (a, b, e) in edges {
            self.graph.add_edge(a, b, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::store::tests::{callees, graph};
    use super::*;
    use crate::graph::extract::{extract, Language};
    use crate::graph::Symbols;

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
            &*g.node(g.parent(stop).unwrap()).name,
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
    fn renamed_imports_name_bases_and_types() {
        let g = graph(&[
            ("a/models.py", "class Base:\n    pass\n"),
            ("b/models.py", "class Base:\n    pass\n"),
            ("main.py", "from a.models import Base as ModelBase\n\nclass User(ModelBase):\n    pass\n\ndef make(x: ModelBase):\n    pass\n"),
        ]);
        // Without the renaming, "ModelBase" names nothing; by "Base" alone both
        // classes would be candidates. The import decides: a's (the import
        // statement refers to it too).
        let edges: Vec<(String, EdgeKind, String)> = g
            .edge_list()
            .into_iter()
            .filter(|(_, kind, _, _, _)| matches!(kind, EdgeKind::Inherits | EdgeKind::References))
            .map(|(from, kind, to, _, confidence)| {
                assert_eq!(confidence, 1.0);
                (from, kind, to)
            })
            .collect();
        assert_eq!(
            edges,
            [
                (
                    "main.py:User".to_string(),
                    EdgeKind::Inherits,
                    "a/models.py:Base".to_string()
                ),
                (
                    "main.py:import a.models".to_string(),
                    EdgeKind::References,
                    "a/models.py:Base".to_string()
                ),
                (
                    "main.py:make".to_string(),
                    EdgeKind::References,
                    "a/models.py:Base".to_string()
                ),
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

    /// Every call edge as (caller, line, callee, confidence), a method named with
    /// its class (`path:Class.name`).
    /// The calls out of the definition `from` (named as `calls` names them).
    fn calls_from(g: &KnowledgeGraph, from: &str) -> Vec<(String, usize, String, f32)> {
        calls(g).into_iter().filter(|c| c.0 == from).collect()
    }

    fn calls(g: &KnowledgeGraph) -> Vec<(String, usize, String, f32)> {
        let name = |n: NodeIndex| {
            let node = g.node(n);
            match g.parent(n).map(|p| g.node(p)) {
                Some(p) if p.kind == NodeKind::Class => {
                    format!("{}:{}.{}", node.path, p.name, node.name)
                }
                _ => format!("{}:{}", node.path, node.name),
            }
        };
        let mut out: Vec<_> = g
            .graph
            .edge_references()
            .filter(|e| e.weight().kind == EdgeKind::Calls)
            .map(|e| {
                (
                    name(e.source()),
                    e.weight().line as usize,
                    name(e.target()),
                    e.weight().confidence,
                )
            })
            .collect();
        out.sort_by(|a, b| (&a.0, a.1, &a.2).cmp(&(&b.0, b.1, &b.2)));
        out
    }

    fn call(from: &str, line: usize, to: &str, confidence: f32) -> (String, usize, String, f32) {
        (from.to_string(), line, to.to_string(), confidence)
    }

    /// Python: `x = C()`, `x: C`, annotated parameters (plain and with a default),
    /// `self.x = C()` in `__init__`, a class-body field `x: C`, and `self` reaching
    /// inherited methods through bases in other files. Each pair of classes shares
    /// its method names, so by name every call would go to both at 0.5.
    #[test]
    fn python_calls_resolve_through_the_receivers_class_and_its_bases() {
        let g = graph(&[
            (
                "base.py",
                "class Base:\n    def save(self):\n        pass\n    def close(self):\n        pass\n\nclass Other:\n    def save(self):\n        pass\n    def close(self):\n        pass\n",
            ),
            (
                "repo.py",
                "from base import Base\n\nclass Repo(Base):\n    def load(self):\n        self.save()\n\nclass Cache:\n    def load(self):\n        pass\n",
            ),
            (
                "app.py",
                "from repo import Repo, Cache\nimport base\n\ndef direct():\n    r = Repo()\n    r.load()\n    r.close()\n\ndef annotated(c: Cache, d: base.Other = None):\n    c.load()\n    d.close()\n    x: Cache\n    x.load()\n\nclass Service:\n    store: Cache\n    def __init__(self):\n        self.repo = Repo()\n    def run(self):\n        self.repo.load()\n        self.store.load()\n\ndef unknown(y):\n    y.load()\n",
            ),
        ]);
        assert_eq!(
            calls(&g),
            [
                call("app.py:Service.__init__", 18, "repo.py:Repo", 1.0),
                call("app.py:Service.run", 20, "repo.py:Repo.load", 1.0),
                call("app.py:Service.run", 21, "repo.py:Cache.load", 1.0),
                call("app.py:annotated", 10, "repo.py:Cache.load", 1.0),
                call("app.py:annotated", 11, "base.py:Other.close", 1.0),
                call("app.py:annotated", 13, "repo.py:Cache.load", 1.0),
                call("app.py:direct", 5, "repo.py:Repo", 1.0),
                call("app.py:direct", 6, "repo.py:Repo.load", 1.0),
                call("app.py:direct", 7, "base.py:Base.close", 1.0),
                // No class known: by name, both `load`s.
                call("app.py:unknown", 24, "repo.py:Cache.load", 0.5),
                call("app.py:unknown", 24, "repo.py:Repo.load", 0.5),
                // `self` reaches the base class in another file.
                call("repo.py:Repo.load", 5, "base.py:Base.save", 1.0),
            ]
        );
    }

    /// A name given two classes in one function has none; one given a class in
    /// another function does not leak; a module-level binding is seen in functions.
    #[test]
    fn python_receiver_classes_follow_scopes() {
        let g = graph(&[(
            "m.py",
            "class A:\n    def go(self):\n        pass\n\nclass B:\n    def go(self):\n        pass\n\nshared = B()\n\ndef both(flag):\n    v = A()\n    v = B()\n    v.go()\n\ndef one():\n    w = A()\n\ndef other():\n    w.go()\n    shared.go()\n",
        )]);
        let from = |f: &str| calls_from(&g, f);
        assert_eq!(
            from("m.py:both"),
            [
                call("m.py:both", 12, "m.py:A", 1.0),
                call("m.py:both", 13, "m.py:B", 1.0),
                call("m.py:both", 14, "m.py:A.go", 0.5),
                call("m.py:both", 14, "m.py:B.go", 0.5),
            ]
        );
        assert_eq!(
            from("m.py:other"),
            [
                call("m.py:other", 20, "m.py:A.go", 0.5),
                call("m.py:other", 20, "m.py:B.go", 0.5),
                call("m.py:other", 21, "m.py:B.go", 1.0),
            ]
        );
    }

    /// Go: a method's receiver, a declared `var`, a parameter, `&T{}` and an
    /// embedded struct's methods.
    #[test]
    fn go_calls_resolve_through_declared_types_and_embedding() {
        let g = graph(&[
            (
                "srv/base.go",
                "package srv\n\ntype Base struct{}\n\nfunc (b *Base) Close() {}\n\ntype Server struct {\n\tBase\n}\n\nfunc (s *Server) Stop() {}\n\nfunc (s *Server) Run() {\n\ts.Stop()\n\ts.Close()\n}\n",
            ),
            (
                "srv/client.go",
                "package srv\n\ntype Client struct{}\n\nfunc (c Client) Stop() {}\n\nfunc (c Client) Close() {}\n\nfunc Use(p *Client) {\n\tvar q Server\n\tr := &Server{}\n\tp.Stop()\n\tq.Stop()\n\tr.Close()\n}\n",
            ),
        ]);
        assert_eq!(
            calls(&g),
            [
                call("srv/base.go:Run", 14, "srv/base.go:Stop", 1.0),
                call("srv/base.go:Run", 15, "srv/base.go:Close", 1.0),
                call("srv/client.go:Use", 12, "srv/client.go:Stop", 1.0),
                call("srv/client.go:Use", 13, "srv/base.go:Stop", 1.0),
                call("srv/client.go:Use", 14, "srv/base.go:Close", 1.0),
            ]
        );
    }

    /// Java: a local's declared type, `var x = new T()`, a parameter, a field used
    /// with and without `this`, and an inherited method.
    #[test]
    fn java_calls_resolve_through_declared_types() {
        let g = graph(&[
            (
                "a/Base.java",
                "package a;\nclass Base {\n  void close() {}\n}\nclass Repo extends Base {\n  void load() {}\n}\nclass Cache {\n  void load() {}\n  void close() {}\n}\n",
            ),
            (
                "a/App.java",
                "package a;\nclass App {\n  Cache cache;\n  void run(Repo r) {\n    Cache c = new Cache();\n    var d = new Repo();\n    r.load();\n    c.load();\n    d.close();\n    cache.close();\n    this.cache.load();\n  }\n}\n",
            ),
        ]);
        let from = |f: &str| calls_from(&g, f);
        assert_eq!(
            from("a/App.java:App.run"),
            [
                call("a/App.java:App.run", 7, "a/Base.java:Repo.load", 1.0),
                call("a/App.java:App.run", 8, "a/Base.java:Cache.load", 1.0),
                call("a/App.java:App.run", 9, "a/Base.java:Base.close", 1.0),
                call("a/App.java:App.run", 10, "a/Base.java:Cache.close", 1.0),
                call("a/App.java:App.run", 11, "a/Base.java:Cache.load", 1.0),
            ]
        );
    }

    /// C#: a local's declared type, `var x = new T()`, a parameter, a field and a
    /// property used with and without `this`, and an inherited method.
    #[test]
    fn csharp_calls_resolve_through_declared_types() {
        let g = graph(&[
            (
                "A/Base.cs",
                "namespace A {\nclass Base {\n  public void Close() {}\n}\nclass Repo : Base {\n  public void Load() {}\n}\nclass Cache {\n  public void Load() {}\n  public void Close() {}\n}\n}\n",
            ),
            (
                "A/App.cs",
                "namespace A {\nclass App {\n  Cache cache;\n  Repo Store { get; set; }\n  void Run(Repo r) {\n    Cache c = new Cache();\n    var d = new Repo();\n    r.Load();\n    c.Load();\n    d.Close();\n    cache.Close();\n    this.cache.Load();\n    Store.Load();\n  }\n}\n}\n",
            ),
        ]);
        let from = |f: &str| calls_from(&g, f);
        assert_eq!(
            from("A/App.cs:App.Run"),
            [
                call("A/App.cs:App.Run", 8, "A/Base.cs:Repo.Load", 1.0),
                call("A/App.cs:App.Run", 9, "A/Base.cs:Cache.Load", 1.0),
                call("A/App.cs:App.Run", 10, "A/Base.cs:Base.Close", 1.0),
                call("A/App.cs:App.Run", 11, "A/Base.cs:Cache.Close", 1.0),
                call("A/App.cs:App.Run", 12, "A/Base.cs:Cache.Load", 1.0),
                call("A/App.cs:App.Run", 13, "A/Base.cs:Repo.Load", 1.0),
            ]
        );
    }

    /// TypeScript: an annotated variable and parameter, `new`, a field and a
    /// constructor's parameter property used through `this`, an inherited method.
    #[test]
    fn typescript_calls_resolve_through_declared_types() {
        let g = graph(&[
            (
                "src/repo.ts",
                "export class Base {\n  close(): void {}\n}\nexport class Repo extends Base {\n  load(): void {}\n}\nexport class Cache {\n  load(): void {}\n  close(): void {}\n}\n",
            ),
            (
                "src/app.ts",
                "import { Repo, Cache } from \"./repo\";\nexport class App {\n  cache: Cache;\n  constructor(private repo: Repo) {}\n  run(c: Cache): void {\n    const r: Repo = this.repo;\n    const n = new Cache();\n    r.load();\n    c.load();\n    n.close();\n    this.cache.load();\n    this.repo.close();\n  }\n}\n",
            ),
        ]);
        let from = |f: &str| calls_from(&g, f);
        assert_eq!(
            from("src/app.ts:App.run"),
            [
                call("src/app.ts:App.run", 8, "src/repo.ts:Repo.load", 1.0),
                call("src/app.ts:App.run", 9, "src/repo.ts:Cache.load", 1.0),
                call("src/app.ts:App.run", 10, "src/repo.ts:Cache.close", 1.0),
                call("src/app.ts:App.run", 11, "src/repo.ts:Cache.load", 1.0),
                call("src/app.ts:App.run", 12, "src/repo.ts:Base.close", 1.0),
            ]
        );
    }

    /// Updating a file whose class is a base on the way to a method elsewhere: the
    /// calls re-linked meanwhile see the base edges into its new nodes (g.py is
    /// re-linked before h.py, which holds the edge C -> B).
    #[test]
    fn updates_repair_base_edges_before_resolving_methods() {
        let files = [
            (
                "g.py",
                "from h import C\nimport f\n\ndef main():\n    x = C()\n    x.n()\n",
            ),
            (
                "f.py",
                "from k import A\n\nclass B(A):\n    pass\n\ndef n():\n    pass\n",
            ),
            ("k.py", "class A:\n    def n(self):\n        pass\n"),
            ("h.py", "from f import B\n\nclass C(B):\n    pass\n"),
        ];
        let mut g = graph(&files);
        let expected = [
            call("g.py:main", 5, "h.py:C", 1.0),
            call("g.py:main", 6, "k.py:A.n", 1.0),
        ];
        assert_eq!(calls(&g), expected);
        g.update_file("f.py", extract(Language::Python, files[1].1.as_bytes()));
        assert_eq!(calls(&g), expected);
        assert_eq!(g.edge_list(), graph(&files).edge_list());
    }

    #[test]
    fn go_receiver_types_come_from_signatures() {
        assert_eq!(go_receiver("func (s *Server) Run() {"), Some("Server"));
        assert_eq!(
            go_receiver("func (c Client[K, V]) Get(k K) V {"),
            Some("Client")
        );
        assert_eq!(go_receiver("func (*T) M()"), Some("T"));
        assert_eq!(go_receiver("func Run() {"), None);
        assert_eq!(go_receiver("type T struct{}"), None);
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
