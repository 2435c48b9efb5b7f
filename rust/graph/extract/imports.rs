//! Import statements: the query's captures grouped into `Import`s (Rust use trees
//! and Scala import clauses read from their text), and the names each binds.

use foldhash::{HashMap, HashSet};

use super::{Import, Language, RawImport};

/// One `Import` per (statement, module), items attached, in source order; true when
/// a Rust use tree was cut at `MAX_USE_DEPTH`. Linear in the captures (each lookup
/// is a hash).
pub(super) fn group_imports(language: Language, raw: Vec<RawImport>) -> (Vec<Import>, bool) {
    let mut imports: Vec<(usize, Import)> = Vec::new();
    let mut index: HashMap<(usize, String), usize> = HashMap::default();
    // Every import of a statement, by the statement's start.
    let mut of_statement: HashMap<usize, Vec<usize>> = HashMap::default();
    // Items already in each import (`Import::items` without repeats).
    let mut has: Vec<HashSet<String>> = Vec::new();
    // Items matched apart from their module: (statement, item, local name if renamed).
    let mut loose_items: Vec<(usize, String, Option<String>)> = Vec::new();
    let mut cut = false;
    for r in raw {
        let Some(module) = r.module else {
            loose_items.extend(r.item.map(|i| (r.statement, i, r.item_alias)));
            continue;
        };
        let paths: Vec<(String, Option<String>)> = match language {
            Language::Rust if !r.submodule => {
                let (paths, deeper) = flatten_use(&module);
                cut |= deeper;
                paths
            }
            Language::Go => vec![(
                module.trim_matches(|c| c == '"' || c == '`').to_string(),
                None,
            )],
            Language::Scala => scala_imports(&module),
            // `require_relative "x"` is the file `./x`.
            _ if r.relative && !module.starts_with('.') => vec![(format!("./{module}"), r.item)],
            _ => vec![(module, r.item)],
        };
        for (module, item) in paths {
            let at = *index
                .entry((r.statement, module.clone()))
                .or_insert_with(|| {
                    let import = Import {
                        module,
                        items: vec![],
                        alias: None,
                        renamed: vec![],
                        submodule: r.submodule,
                        line: r.line,
                        statement: r.text.clone(),
                    };
                    imports.push((r.statement, import));
                    has.push(HashSet::default());
                    of_statement
                        .entry(r.statement)
                        .or_default()
                        .push(imports.len() - 1);
                    imports.len() - 1
                });
            let import = &mut imports[at].1;
            add_item(import, &mut has[at], item, r.item_alias.clone());
            if r.alias.is_some() {
                import.alias.clone_from(&r.alias);
            }
        }
    }
    for (statement, item, local) in loose_items {
        for &at in of_statement.get(&statement).into_iter().flatten() {
            add_item(
                &mut imports[at].1,
                &mut has[at],
                Some(item.clone()),
                local.clone(),
            );
        }
    }
    imports.sort_by_key(|(s, _)| *s);
    (imports.into_iter().map(|(_, i)| i).collect(), cut)
}

/// Adds an item (under `local` when renamed) to an import once; `has` holds the
/// import's items and renamed local names, for constant-time repeats.
fn add_item(
    import: &mut Import,
    has: &mut HashSet<String>,
    item: Option<String>,
    local: Option<String>,
) {
    let Some(item) = item else { return };
    if let Some(local) = local.filter(|l| *l != item) {
        if has.insert(format!("as {local}")) {
            import.renamed.push((local, item.clone()));
        }
    }
    if has.insert(item.clone()) {
        import.items.push(item);
    }
}

/// How deep `flatten_use` follows nested braces; deeper groups are dropped and the
/// file gets a warning (`nesting deeper than 32 use-tree levels: truncated`). No real
/// use tree comes near.
pub(super) const MAX_USE_DEPTH: usize = 32;

/// A Rust use tree as (module path, item) pairs: `a::{b, c::d as e, self}` gives
/// (a, b), (a::c, d), (a, none); a glob or a bare path imports the module itself.
/// Iterative (a work list), each brace group read once: linear in the text. Groups
/// nested deeper than `MAX_USE_DEPTH` are dropped, and the flag says so.
pub(super) fn flatten_use(tree: &str) -> (Vec<(String, Option<String>)>, bool) {
    let compact = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = compact.as_str();
    // The matching close of each `{` (None if unbalanced), by one pass with a stack.
    let mut closes: HashMap<usize, usize> = HashMap::default();
    let mut open: Vec<usize> = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '{' => open.push(i),
            '}' => {
                if let Some(start) = open.pop() {
                    closes.insert(start, i);
                }
            }
            _ => {}
        }
    }
    let join = |prefix: &str, head: &str| match (prefix.is_empty(), head.is_empty()) {
        (true, _) => head.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}::{head}"),
    };
    let mut cut = false;
    let mut paths = Vec::new();
    // (prefix, byte range of a use tree, level), last first.
    let mut work: Vec<(String, usize, usize, usize)> = vec![(String::new(), 0, text.len(), 0)];
    while let Some((prefix, start, end, level)) = work.pop() {
        if level > MAX_USE_DEPTH {
            cut = true;
            continue;
        }
        let part = &text[start..end];
        let lead = part.len() - part.trim_start().len();
        let brace = part
            .find('{')
            .map(|o| start + o)
            .and_then(|o| closes.get(&o).filter(|c| **c < end).map(|c| (o, *c)));
        match brace {
            Some((open, close)) => {
                let head = join(
                    &prefix,
                    text[start + lead..open].trim().trim_end_matches("::"),
                );
                // The group's members at its own level, split at top-level commas.
                let mut members = Vec::new();
                let mut at = open + 1;
                let mut i = open + 1;
                while i < close {
                    match text.as_bytes()[i] {
                        b'{' => i = closes.get(&i).map_or(close, |c| *c + 1),
                        b',' => {
                            members.push((at, i));
                            at = i + 1;
                            i += 1;
                        }
                        _ => i += 1,
                    }
                }
                members.push((at, close));
                for (a, b) in members.into_iter().rev() {
                    work.push((head.clone(), a, b, level + 1));
                }
            }
            None => {
                let path = part.split(" as ").next().unwrap_or_default().trim();
                if !path.is_empty() && !path.contains(['{', '}']) {
                    paths.push(join(&prefix, path));
                }
            }
        }
    }
    let pairs = paths
        .into_iter()
        .map(|path| match path.rsplit_once("::") {
            Some((module, "*" | "self")) => (module.to_string(), None),
            Some((module, item)) => (module.to_string(), Some(item.to_string())),
            None => (path, None),
        })
        .collect();
    (pairs, cut)
}

/// A Scala import statement as (module, no item) pairs, one per class or package it
/// names, as Java's: `import a.b.C` is a.b.C, `import a.b._` and `a.b.*` a.b,
/// `import a.b.{C, D => E, given}` a.b.C and a.b.D, `import a.b.C as D` a.b.C; a
/// statement of several clauses (`import a.B, c.D`) gives each. Renames keep the
/// imported name.
pub(super) fn scala_imports(statement: &str) -> Vec<(String, Option<String>)> {
    let body = statement.trim();
    let body = body.strip_prefix("import").unwrap_or(body);
    // Clauses, split at commas outside braces.
    let mut clauses = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                clauses.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    clauses.push(&body[start..]);
    let plain = |s: &str| s.split_whitespace().collect::<String>();
    let mut out = Vec::new();
    for clause in clauses {
        let clause = clause.trim();
        match clause.split_once('{') {
            Some((prefix, selectors)) => {
                let module = plain(prefix).trim_end_matches('.').to_string();
                let selectors = selectors.split('}').next().unwrap_or_default();
                let mut any = false;
                for selector in selectors.split(',') {
                    let item = selector
                        .split("=>")
                        .next()
                        .unwrap_or_default()
                        .split(" as ")
                        .next()
                        .unwrap_or_default()
                        .trim();
                    let wildcard =
                        matches!(item, "_" | "*" | "given" | "") || item.starts_with("given ");
                    if !wildcard && item.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        out.push((format!("{module}.{item}"), None));
                        any = true;
                    }
                }
                if !any && !module.is_empty() {
                    out.push((module, None));
                }
            }
            None => {
                let path = clause.split(" as ").next().unwrap_or_default();
                let path = plain(path);
                let path = path
                    .strip_suffix("._")
                    .or_else(|| path.strip_suffix(".*"))
                    .or_else(|| path.strip_suffix(".given"))
                    .unwrap_or(&path);
                if !path.is_empty() {
                    out.push((path.to_string(), None));
                }
            }
        }
    }
    out
}

/// The names an import binds in the file: its alias; else, for a module import, the
/// name code uses to reach it (`os` for `import os.path`, `util` for a Go import of
/// `x/util`, `Foo` for `import a.Foo`) and, where an item can be a module, its items.
pub(super) fn bound_names(language: Language, import: &Import) -> Vec<&str> {
    if let Some(alias) = &import.alias {
        return vec![alias.as_str()];
    }
    let module = import.module.as_str();
    let last = |sep: &str| module.rsplit(sep).next().unwrap_or(module);
    let mut out: Vec<&str> = match language {
        Language::Python if import.items.is_empty() && !module.starts_with('.') => {
            vec![module.split('.').next().unwrap_or(module)]
        }
        Language::Go => vec![last("/")],
        Language::Java | Language::Kotlin | Language::Scala => vec![last(".")],
        Language::Rust => vec![last("::")],
        // A grouped `use A\{B, C}` binds its items, `use A\B` the last name.
        Language::Php if import.items.is_empty() && !module.contains(['/', '.']) => {
            vec![last("\\")]
        }
        _ => vec![],
    };
    if matches!(language, Language::Python | Language::Rust | Language::Php) {
        out.extend(import.items.iter().map(String::as_str));
    }
    out
}
