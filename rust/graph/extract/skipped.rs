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
pub fn skipped(tree: &tree_sitter::Tree, source: &[u8]) -> Option<Skipped> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut lines: Vec<(usize, usize)> = Vec::new();
    let mut definitions = false;
    let mut cursor = tree.walk();
    let mut children = tree.walk();
    'walk: loop {
        let node = cursor.node();
        if node.is_error() {
            for child in node.children(&mut children) {
                if child.is_error() || child.is_extra() || inert(child) || complete(child.kind()) {
                    continue;
                }
                definitions |= definition_part(child.kind());
                let end = child.end_position();
                let last = if end.column == 0 && end.row > child.start_position().row {
                    end.row
                } else {
                    end.row + 1
                };
                lines.push((child.start_position().row + 1, last));
            }
            definitions |= node
                .next_named_sibling()
                .is_some_and(|next| definition_part(next.kind()));
            // An ERROR node holding no node but text of its own (what it skipped is
            // no token of the grammar): lost if the text has a name in it.
            if node.child_count() == 0
                && source[node.byte_range()]
                    .iter()
                    .any(|&b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80)
            {
                let row = node.start_position().row + 1;
                lines.push((row, node.end_position().row + 1));
            }
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
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
