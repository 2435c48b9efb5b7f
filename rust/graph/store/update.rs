//! Updating and removing one file: its nodes replaced, and the links into and out
//! of it that can have changed made again (and only those).

use std::collections::{BTreeMap, BTreeSet};

use foldhash::{HashMap, HashSet};

use super::{KnowledgeGraph, Prepared};
use crate::graph::adjacency::{Direction, NodeIndex};
use crate::graph::extract::{DefKind, Definition, FileSymbols, Language, Origin, RefKind};
use crate::graph::link::{go_receiver, targets, typed, Relink, MAX_CANDIDATES};
use crate::graph::model::{EdgeKind, NodeKind};
use crate::graph::modules;

/// What of a file decides method resolution in other files: each class's name with
/// its bases as written and, when it names bases, the imports that resolve them.
/// Method names are not in it: the calls to them are linked again by name.
#[derive(Default, PartialEq)]
pub(super) struct Shape {
    classes: Vec<(String, Vec<String>)>,
    imports: Vec<ImportShape>,
}

/// An import's module, items, renamed items and alias.
type ImportShape = (String, Vec<String>, Vec<(String, String)>, Option<String>);

pub(super) fn class_shape(symbols: &FileSymbols) -> Shape {
    let mut bases: HashMap<u32, Vec<String>> = HashMap::default();
    for r in &symbols.references {
        if let (RefKind::Inherit, Origin::Definition(d)) = (r.kind, r.origin) {
            bases.entry(d).or_default().push(r.name.to_string());
        }
    }
    let mut classes: Vec<(String, Vec<String>)> = symbols
        .definitions
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind == DefKind::Class)
        .map(|(i, d)| {
            let mut bases = bases.remove(&(i as u32)).unwrap_or_default();
            bases.sort();
            (d.name.to_string(), bases)
        })
        .collect();
    classes.sort();
    let imports = if classes.iter().any(|(_, bases)| !bases.is_empty()) {
        symbols
            .imports
            .iter()
            .map(|i| {
                let renamed = i.renamed.clone();
                (i.module.clone(), i.items.clone(), renamed, i.alias.clone())
            })
            .collect()
    } else {
        vec![]
    };
    Shape { classes, imports }
}

/// The names of the classes of one or two versions of a file.
fn class_names(a: Option<&FileSymbols>, b: Option<&FileSymbols>) -> HashSet<String> {
    a.into_iter()
        .chain(b)
        .flat_map(|s| s.definitions.iter())
        .filter(|d| d.kind == DefKind::Class)
        .map(|d| d.name.to_string())
        .collect()
}

/// (class, method) of every method a file defines: a function directly in a class,
/// or a Go function whose receiver names a type.
fn methods(symbols: &FileSymbols) -> HashSet<(String, String)> {
    let mut out = HashSet::default();
    // The definitions open at each one (they are in start order), innermost last.
    let mut open: Vec<&Definition> = Vec::new();
    for d in &symbols.definitions {
        while open.last().is_some_and(|c| !c.contains(d)) {
            open.pop();
        }
        let container = open.last().copied();
        open.push(d);
        if d.kind != DefKind::Function {
            continue;
        }
        match container {
            Some(c) if c.kind == DefKind::Class => {
                out.insert((c.name.to_string(), d.name.to_string()));
            }
            None if symbols.language == Language::Go => {
                if let Some(t) = go_receiver(&d.signature) {
                    out.insert((t.to_string(), d.name.to_string()));
                }
            }
            _ => {}
        }
    }
    out
}

/// The names of the methods one version of a file has and the other has not (in
/// that class).
fn moved_methods(a: Option<&FileSymbols>, b: Option<&FileSymbols>) -> HashSet<String> {
    let (a, b) = (
        a.map(methods).unwrap_or_default(),
        b.map(methods).unwrap_or_default(),
    );
    a.symmetric_difference(&b).map(|(_, m)| m.clone()).collect()
}

/// Per name, its candidate counts (see `candidate_counts`) before a change.
pub(super) struct Counts {
    pub(super) family: &'static str,
    pub(super) before: Vec<(String, [usize; 2])>,
}

impl KnowledgeGraph {
    /// Replaces one file's symbols (adds the file if new) and repairs the edges into
    /// and out of it: its own, the references elsewhere to names it defined or now
    /// defines, and the imports elsewhere that resolve to it. Nothing else is re-linked.
    pub fn update_file(&mut self, path: &str, symbols: FileSymbols) {
        self.make_modules();
        // A Kotlin or Scala file whose `package` line changed answers to other module
        // keys (`modules::declared_keys`): out as a removed file, in as a new one.
        if self
            .files
            .get(path)
            .is_some_and(|e| e.symbols.package != symbols.package)
        {
            self.remove_file(path);
        }
        let existed = self.files.contains_key(path);
        let old = self.files.get(path).map(|e| self.unstored(e));
        let old = old.as_ref();
        let reshaped = old.map(class_shape).unwrap_or_default() != class_shape(&symbols);
        let moved = moved_methods(old, Some(&symbols));
        let classes = class_names(old, Some(&symbols));
        let mut names: HashSet<String> = symbols
            .definitions
            .iter()
            .map(|d| d.name.to_string())
            .collect();
        names.extend(
            self.files
                .get(path)
                .into_iter()
                .flat_map(|e| e.defs.iter().map(|&id| self.graph[id].name.to_string())),
        );
        let before = self.counts_before(&names, modules::family(symbols.language));
        let typed_in = self.typed_calls_into(path);
        let file = self.remove_nodes(path, !existed);
        let mut symbols = symbols;
        let prepared = Prepared::of(path, &mut symbols, true);
        self.add_file_at(path.to_string(), symbols, None, prepared, file);
        self.link(path, &Relink::All);
        // The base edges into the file's classes first: resolving a method walks them.
        self.relink_bases(path, &classes);
        let changed = self.changed(before);
        // The file set changed only if the file is new: then imports elsewhere may
        // now resolve to it. Otherwise they still do, and only the names they refer
        // to that this file defined or defines need repair.
        let importers = self.importers(path);
        if existed {
            for (file, names) in self.referring(&names, |f| !importers.contains(f)) {
                self.relink(file, Relink::Names(&names));
            }
        } else {
            for &file in &importers {
                self.relink(file, Relink::All);
            }
        }
        self.relink_others(path, &changed, &importers);
        self.relink_typed(path, typed_in, &moved, reshaped);
    }

    /// The calls elsewhere made on a receiver of a known class or `self` that are
    /// linked into `path`'s definitions: (file, names).
    fn typed_calls_into(&self, path: &str) -> HashMap<NodeIndex, HashSet<String>> {
        let mut out: HashMap<NodeIndex, HashSet<String>> = HashMap::default();
        let Some(entry) = self.files.get(path) else {
            return out;
        };
        // Method resolution links only to methods (children of classes, Go
        // functions with a receiver); a typed call it could not pin down is linked
        // by name like any other, and repaired like any other.
        let method = |def: NodeIndex| {
            let node = &self.graph[def];
            node.kind == NodeKind::Function
                && (self
                    .parent(def)
                    .is_some_and(|p| self.graph[p].kind == NodeKind::Class)
                    || node.language == Language::Go && go_receiver(&node.signature).is_some())
        };
        for &def in entry.defs.iter().filter(|&&d| method(d)) {
            for e in self.graph.edges_directed(def, Direction::Incoming) {
                if e.weight().kind != EdgeKind::Calls {
                    continue;
                }
                let file = self.owner[e.source().index()];
                if file == entry.node {
                    continue;
                }
                let caller = &self.files[&*self.graph[file].path];
                if let Some(r) = caller.symbols.references.get(e.weight().reference as usize) {
                    if typed(r.receiver) {
                        let name = self.interned.get(r.name).to_string();
                        out.entry(file).or_default().insert(name);
                    }
                }
            }
        }
        out
    }

    /// Re-links, in the files other than `path`, the base classes named in `names`.
    fn relink_bases(&mut self, path: &str, names: &HashSet<String>) {
        let own = self.files.get(path).map(|e| e.node);
        for (file, names) in self.referring(names, |f| Some(*f) == own) {
            self.relink(file, Relink::Bases(&names));
        }
    }

    /// Last step of an update: the calls method resolution links (on a receiver of
    /// a known class or `self`) that can go elsewhere now. With the file's classes
    /// and bases the same (`class_shape`), those are the calls that were linked
    /// into the file (its nodes were replaced), the calls to methods it added,
    /// removed or moved between classes, and the file's own (made while the base
    /// edges into it were missing); when its classes changed, every such call.
    fn relink_typed(
        &mut self,
        path: &str,
        typed_in: HashMap<NodeIndex, HashSet<String>>,
        moved: &HashSet<String>,
        reshaped: bool,
    ) {
        let own = self.files.get(path).map(|e| e.node);
        if reshaped {
            let mut files: Vec<NodeIndex> = self
                .files
                .values()
                .filter(|e| e.symbols.references.iter().any(|r| typed(r.receiver)))
                .map(|e| e.node)
                .collect();
            files.sort();
            for file in files {
                self.relink(file, Relink::Typed(None));
            }
            return;
        }
        let mut files: BTreeMap<NodeIndex, HashSet<String>> = typed_in
            .into_iter()
            .filter(|(f, _)| self.graph.contains_node(*f) && Some(*f) != own)
            .collect();
        for (file, names) in self.referring(moved, |f| Some(*f) == own) {
            files.entry(file).or_default().extend(names);
        }
        for (file, names) in files {
            self.relink(file, Relink::Typed(Some(&names)));
        }
        if let Some(file) = own {
            self.relink(file, Relink::Typed(None));
        }
    }

    /// Removes a file and repairs the references elsewhere to names it defined and
    /// the imports that resolved to it; false if it was not in the graph.
    pub fn remove_file(&mut self, path: &str) -> bool {
        self.make_modules();
        let Some(entry) = self.files.get(path) else {
            return false;
        };
        let names: HashSet<String> = entry
            .defs
            .iter()
            .map(|&id| self.graph[id].name.to_string())
            .collect();
        let before = self.counts_before(&names, modules::family(entry.symbols.language));
        let symbols = self.unstored(entry);
        let reshaped = class_shape(&symbols) != Shape::default();
        let moved = moved_methods(Some(&symbols), None);
        let classes = class_names(Some(&symbols), None);
        let typed_in = self.typed_calls_into(path);
        let importers = self.importers(path);
        self.remove_nodes(path, true);
        self.relink_bases(path, &classes);
        let changed = self.changed(before);
        for &file in &importers {
            self.relink(file, Relink::All);
        }
        self.relink_others(path, &changed, &importers);
        self.relink_typed(path, typed_in, &moved, reshaped);
        true
    }

    /// Files (other than `path`) that look up a module key `path` answers to.
    pub(super) fn importers(&self, path: &str) -> BTreeSet<NodeIndex> {
        let Some(entry) = self.files.get(path) else {
            return BTreeSet::new();
        };
        entry
            .keys
            .iter()
            .flat_map(|k| self.lookups.get(k).into_iter().flatten())
            .filter(|&&f| f != entry.node)
            .copied()
            .collect()
    }

    /// Definitions of a name in a language family that references from anywhere can
    /// link to: callables (for calls) and classes (for bases and types).
    pub(super) fn candidate_counts(&self, name: &str, family: &str) -> [usize; 2] {
        let ids = self.named(name);
        let count = |kind: RefKind| {
            ids.iter()
                .filter(|&&c| {
                    targets(kind, self.graph[c].kind)
                        && modules::family(self.graph[c].language) == family
                })
                .count()
        };
        [count(RefKind::Call), count(RefKind::Inherit)]
    }

    pub(super) fn counts_before(&self, names: &HashSet<String>, family: &'static str) -> Counts {
        Counts {
            family,
            before: names
                .iter()
                .map(|n| (n.clone(), self.candidate_counts(n, family)))
                .collect(),
        }
    }

    /// The names whose references elsewhere can resolve differently now. A name with
    /// more than `MAX_CANDIDATES` candidates of a kind both before and after links
    /// nowhere through that kind outside the files defining it and those importing
    /// them (re-linked anyway), so `__init__`, `get` and friends are skipped: that is
    /// what keeps an update cheap.
    pub(super) fn changed(&self, counts: Counts) -> HashSet<String> {
        counts
            .before
            .into_iter()
            .filter(|(name, b)| {
                let after = self.candidate_counts(name, counts.family);
                // A reference never links its own source: one candidate more can link.
                (0..2).any(|k| {
                    (b[k] <= MAX_CANDIDATES + 1 || after[k] <= MAX_CANDIDATES + 1)
                        && b[k] + after[k] > 0
                })
            })
            .map(|(n, _)| n)
            .collect()
    }
}
