//! What a parse with syntax errors lost: the text in its ERROR nodes that the
//! extraction cannot read. An ERROR node holds what the parser could not fit,
//! beside complete constructs it wrapped (a function, a declaration, a
//! statement: the query still reads those); a MISSING node is a token the
//! parser supplied (an `#endif` the C grammar wants where an `extern "C" {`
//! guard closes under its own `#ifdef`) and loses nothing. Lost are the names and
//! the pieces of code held directly by an ERROR node: its identifiers,
//! expressions, declarators, parameter lists, bodies. Keywords, punctuation and
//! literals held alone name nothing.

/// At most this many line ranges are listed in a warning (then how many more).
const MAX_RANGES: usize = 5;

/// What a file's parse lost: the line ranges (1-based, inclusive, merged) of the
/// text its ERROR nodes hold that extraction cannot read, and whether parts of
/// definitions (a declarator, parameters, a body) are among it or a body follows
/// it (its definition's head was lost: `template <typename T> T f(T x) {` read as C).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    pub lines: Vec<(usize, usize)>,
    pub definitions: bool,
}

impl Skipped {
    /// The file's warning: "syntax errors: lines 4-6, 9 not indexed" and, when
    /// parts of definitions are among them, "(definitions there are missing or
    /// incomplete)".
    pub fn note(&self) -> String {
        let mut ranges: Vec<String> = self
            .lines
            .iter()
            .take(MAX_RANGES)
            .map(|&(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        if self.lines.len() > MAX_RANGES {
            ranges.push(format!("and {} more", self.lines.len() - MAX_RANGES));
        }
        let word = if self.lines.len() == 1 && self.lines[0].0 == self.lines[0].1 {
            "line"
        } else {
            "lines"
        };
        let parts = if self.definitions {
            " (definitions there are missing or incomplete)"
        } else {
            ""
        };
        format!(
            "syntax errors: {word} {} not indexed{parts}",
            ranges.join(", ")
        )
    }
}

/// Whether a node held by an ERROR node is read by the extraction on its own: a
/// complete definition, declaration or statement, a preprocessor directive, a
/// comment.
fn complete(kind: &str) -> bool {
    kind.ends_with("definition")
        || kind.ends_with("declaration")
        || kind.ends_with("statement")
        || kind.ends_with("_item")
        || kind.ends_with("comment")
        || kind.starts_with("preproc_")
        || matches!(kind, "method" | "class" | "module" | "singleton_method")
}

/// Whether a node held by an ERROR node names nothing: a literal, or a keyword or
/// punctuation (an unnamed node).
fn inert(node: tree_sitter::Node) -> bool {
    !node.is_named() || node.kind().contains("literal") || node.kind().ends_with("string")
}

/// Whether a node is part of a definition: its declarator, parameters or body.
fn definition_part(kind: &str) -> bool {
    [
        "declarator",
        "parameter",
        "body",
        "block",
        "declaration_list",
    ]
    .iter()
    .any(|part| kind.contains(part))
        || kind == "compound_statement"
}

/// What `tree` lost (None when nothing: no ERROR node, or only what names nothing).
/// Linear in the nodes holding errors (each one's children listed once); past
/// `deadline` it stops with what it found (checked every 1,024 nodes).
pub fn skipped(
    tree: &tree_sitter::Tree,
    source: &[u8],
    deadline: std::time::Instant,
) -> Option<Skipped> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut lines: Vec<(usize, usize)> = Vec::new();
    let mut definitions = false;
    let mut cursor = tree.walk();
    // The lines of a node, 1-based (a node ending at column 0 ends on the line before).
    let lines_of = |node: tree_sitter::Node| {
        let end = node.end_position();
        let last = if end.column == 0 && end.row > node.start_position().row {
            end.row
        } else {
            end.row + 1
        };
        (node.start_position().row + 1, last)
    };
    let mut stack = vec![root];
    let mut visited = 0usize;
    while let Some(node) = stack.pop() {
        visited += 1;
        if visited.is_multiple_of(1024) && std::time::Instant::now() >= deadline {
            break;
        }
        let children: Vec<tree_sitter::Node> = node.children(&mut cursor).collect();
        if node.is_error() {
            for &child in &children {
                if child.is_error() || child.is_extra() || inert(child) || complete(child.kind()) {
                    continue;
                }
                definitions |= definition_part(child.kind());
                lines.push(lines_of(child));
            }
        }
        // An ERROR node holding no node but text of its own (what it skipped is no
        // token of the grammar; tree-sitter says such a leaf has no error): lost if
        // the text has a name in it.
        let named_text = |n: tree_sitter::Node| {
            source[n.byte_range()]
                .iter()
                .any(|&b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80)
        };
        if node.is_error() && children.is_empty() && named_text(node) {
            lines.push(lines_of(node));
        }
        for (i, &child) in children.iter().enumerate() {
            if child.is_error() && child.child_count() == 0 && named_text(child) {
                lines.push(lines_of(child));
            }
            // A body right after an ERROR node, outside any definition: its
            // definition's head was lost.
            if child.is_error() && !complete(node.kind()) {
                definitions |= children[i + 1..]
                    .iter()
                    .find(|c| c.is_named() && !c.is_extra())
                    .is_some_and(|next| definition_part(next.kind()));
            }
            if child.has_error() {
                stack.push(child);
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    lines.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(lines.len());
    for (a, b) in lines {
        match merged.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    Some(Skipped {
        lines: merged,
        definitions,
    })
}
