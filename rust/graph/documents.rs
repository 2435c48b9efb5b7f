//! A source file as retrieval documents: one per definition (name, qualified name,
//! signature, docstring, body, path) and one for the file (path, module docstring,
//! top-level names). Built from the bytes the graph was extracted from, so the lexical
//! index changes exactly when the graph does.

use super::extract::{DefKind, FileSymbols, Language};
use crate::retrieve::Document;

/// The document kind of a definition.
pub const DEFINITION: &str = "definition";
/// The document kind of a file.
pub const FILE: &str = "file";
/// The meta key of the text an embedding model reads for a document (functions,
/// classes and files have one; variables do not).
pub const EMBED: &str = "embed";
/// Bytes of a document's embedding text.
const MAX_EMBED_BYTES: usize = 1024;

/// Bytes of a definition's body that are indexed (the rest is left out).
const MAX_BODY_BYTES: usize = 64 * 1024;
/// Bytes of a docstring kept.
const MAX_DOC_BYTES: usize = 4 * 1024;
/// Lines a Python signature may span before its body starts.
const MAX_HEADER_LINES: usize = 24;
/// Comment lines above a definition read as its documentation.
const MAX_COMMENT_LINES: usize = 40;

/// The key of definition `index` (in `FileSymbols::definitions`) of `path`.
pub fn definition_key(path: &str, index: usize) -> String {
    format!("{path}#{index}")
}

/// The key of the file document of `path`.
pub fn file_key(path: &str) -> String {
    format!("{path}#")
}

/// (path, definition index) of a key; the index is None for a file's document.
pub fn parse_key(key: &str) -> Option<(&str, Option<usize>)> {
    let (path, index) = key.rsplit_once('#')?;
    if index.is_empty() {
        return Some((path, None));
    }
    index.parse().ok().map(|i| (path, Some(i)))
}

/// The documents of one file: its definitions (functions, classes, variables), then
/// the file itself. `source` is the text the symbols were extracted from.
pub fn documents(path: &str, symbols: &FileSymbols, source: &[u8]) -> Vec<Document> {
    let defs = &symbols.definitions;
    let lines = LineIndex::new(source);
    let mut out = Vec::with_capacity(defs.len() + 1);
    let mut top_level = Vec::new();
    // The innermost class or function around each definition (definitions are in
    // source order, outer before inner).
    let mut stack: Vec<usize> = Vec::new();
    for (i, def) in defs.iter().enumerate() {
        while stack.last().is_some_and(|&j| !defs[j].contains(def)) {
            stack.pop();
        }
        let parent = stack.last().copied();
        if parent.is_none() {
            top_level.push(&*def.name);
        }
        let qualified = match (&def.owner, parent) {
            (Some(owner), _) => format!("{owner}.{}", def.name),
            (None, Some(p)) => format!("{}.{}", defs[p].name, def.name),
            (None, None) => def.name.to_string(),
        };
        let range = def.byte_range();
        // The body without the definitions nested in it: a class is its own text
        // and the names of its members, not every method's body again.
        let mut body = String::new();
        let mut at = range.start;
        for inner in defs[i + 1..]
            .iter()
            .take_while(|d| d.byte_range().start < range.end)
        {
            let inner_range = inner.byte_range();
            if inner_range.start < at || !def.contains(inner) {
                continue;
            }
            push_lossy(&mut body, slice(source, at, inner_range.start));
            body.push('\n');
            body.push_str(&inner.name);
            body.push('\n');
            at = inner_range.end.min(range.end);
            if body.len() > MAX_BODY_BYTES {
                break;
            }
        }
        if at < range.end && body.len() <= MAX_BODY_BYTES {
            push_lossy(&mut body, slice(source, at, range.end));
        }
        truncate(&mut body, MAX_BODY_BYTES);
        let doc = if def.kind == DefKind::Variable {
            String::new()
        } else {
            docstring(
                symbols.language,
                source,
                &lines,
                def.line as usize,
                range.end,
            )
        };
        let meta = if def.kind == DefKind::Variable {
            Vec::new()
        } else {
            vec![(
                EMBED.to_string(),
                embedding_text(&[&qualified, &def.signature, &doc]),
            )]
        };
        if matches!(def.kind, DefKind::Function | DefKind::Class) {
            stack.push(i);
        }
        out.push(Document {
            kind: DEFINITION.into(),
            key: definition_key(path, i),
            group: path.to_string(),
            fields: vec![
                ("name".into(), def.name.to_string()),
                ("qualified".into(), qualified),
                ("signature".into(), def.signature.to_string()),
                ("doc".into(), doc),
                ("body".into(), body),
                ("path".into(), path.to_string()),
            ],
            meta,
        });
    }
    let module = module_doc(symbols.language, source, &lines);
    let names = top_level.join(" ");
    out.push(Document {
        kind: FILE.into(),
        key: file_key(path),
        group: path.to_string(),
        meta: vec![(EMBED.to_string(), embedding_text(&[path, &module, &names]))],
        fields: vec![
            ("path".into(), path.to_string()),
            ("doc".into(), module),
            ("names".into(), names),
        ],
    });
    out
}

/// The text an embedding model reads for a document: the non-empty parts, one per
/// line, at most `MAX_EMBED_BYTES` (the model reads 256 tokens anyway).
fn embedding_text(parts: &[&str]) -> String {
    let mut text = parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    truncate(&mut text, MAX_EMBED_BYTES);
    text
}

/// `source[start..end]`, clamped to the source.
fn slice(source: &[u8], start: usize, end: usize) -> &[u8] {
    let end = end.min(source.len());
    &source[start.min(end)..end]
}

fn push_lossy(out: &mut String, bytes: &[u8]) {
    out.push_str(&String::from_utf8_lossy(bytes));
}

/// Cuts `text` to at most `max` bytes, at a character boundary.
fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
}

/// Start byte of every line.
struct LineIndex<'a> {
    source: &'a [u8],
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(source: &'a [u8]) -> Self {
        let starts = std::iter::once(0)
            .chain(
                source
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        Self { source, starts }
    }

    /// Line `n` (1-based) without its newline; empty past the end.
    fn line(&self, n: usize) -> &'a [u8] {
        let Some(&start) = n.checked_sub(1).and_then(|i| self.starts.get(i)) else {
            return &[];
        };
        let end = self
            .starts
            .get(n)
            .map_or(self.source.len(), |next| next - 1);
        &self.source[start..end.max(start)]
    }

    /// The 1-based line holding byte `at`.
    fn line_of(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at)
    }

    fn count(&self) -> usize {
        self.starts.len()
    }
}

fn trim(line: &[u8]) -> &[u8] {
    line.trim_ascii()
}

/// A definition's documentation: Python's docstring (the string that opens its
/// body), else the comment block right above it (`//`, `///`, `/** */`, `#`),
/// skipping attributes and decorators.
fn docstring(
    language: Language,
    source: &[u8],
    lines: &LineIndex<'_>,
    line: usize,
    end: usize,
) -> String {
    if language == Language::Python {
        // The body starts after the first line of the header ending with `:`.
        let last = lines
            .line_of(end.saturating_sub(1))
            .min(line + MAX_HEADER_LINES);
        return (line..last)
            .find(|&n| trim(lines.line(n)).ends_with(b":"))
            .and_then(|n| python_string_at(source, lines, n + 1))
            .unwrap_or_default();
    }
    comments_above(lines, line)
}

/// The comment block ending just above line `line` (attributes, annotations and
/// decorators between it and the definition skipped).
fn comments_above(lines: &LineIndex<'_>, line: usize) -> String {
    let mut collected: Vec<&[u8]> = Vec::new();
    let mut n = line;
    while n > 1 && collected.len() < MAX_COMMENT_LINES {
        n -= 1;
        let text = trim(lines.line(n));
        if text.starts_with(b"#[") || text.starts_with(b"@") {
            continue;
        }
        let stripped = strip_comment(text);
        match stripped {
            Some(body) => collected.push(body),
            None => break,
        }
    }
    collected.reverse();
    join_doc(&collected)
}

/// The text of a comment line, or None if the line is not a comment.
fn strip_comment(text: &[u8]) -> Option<&[u8]> {
    for marker in [&b"///"[..], b"//!", b"//", b"/**", b"/*", b"*/", b"*", b"#"] {
        if let Some(rest) = text.strip_prefix(marker) {
            let rest = rest.strip_suffix(b"*/").unwrap_or(rest);
            return Some(trim(rest));
        }
    }
    None
}

fn join_doc(parts: &[&[u8]]) -> String {
    let mut out = String::new();
    for part in parts {
        if !part.is_empty() {
            if !out.is_empty() {
                out.push(' ');
            }
            push_lossy(&mut out, part);
        }
        if out.len() > MAX_DOC_BYTES {
            break;
        }
    }
    truncate(&mut out, MAX_DOC_BYTES);
    out
}

/// The Python string literal starting on the first non-blank line at or after
/// `line`, without its quotes; None if that line does not open a string.
fn python_string_at(source: &[u8], lines: &LineIndex<'_>, line: usize) -> Option<String> {
    let mut n = line;
    while n <= lines.count() && trim(lines.line(n)).is_empty() {
        n += 1;
    }
    let text = trim(lines.line(n));
    let prefix = text
        .iter()
        .take_while(|b| matches!(b, b'r' | b'R' | b'u' | b'U' | b'b' | b'B' | b'f' | b'F'))
        .count();
    if prefix > 2 {
        return None;
    }
    let rest = &text[prefix..];
    let quote: &[u8] = [&b"\"\"\""[..], b"'''", b"\"", b"'"]
        .into_iter()
        .find(|q| rest.starts_with(q))?;
    // Byte offset of the string's content in `source`.
    let line_start = lines.starts[n - 1];
    let indent = lines.line(n).len() - lines.line(n).trim_ascii_start().len();
    let content = line_start + indent + prefix + quote.len();
    let window = &source[content.min(source.len())..source.len().min(content + MAX_DOC_BYTES)];
    let end = window
        .windows(quote.len())
        .position(|w| w == quote)
        .unwrap_or(window.len());
    let parts: Vec<&[u8]> = window[..end].split(|b| *b == b'\n').map(trim).collect();
    Some(join_doc(&parts))
}

/// A module's documentation: Python's module docstring, else the comment block at
/// the top of the file (after a shebang), e.g. Rust's `//!` and Go's package comment.
fn module_doc(language: Language, source: &[u8], lines: &LineIndex<'_>) -> String {
    let mut n = 1;
    while n <= lines.count() {
        let text = trim(lines.line(n));
        if text.is_empty() || text.starts_with(b"#!") || text.starts_with(b"# -*-") {
            n += 1;
            continue;
        }
        break;
    }
    if language == Language::Python {
        // Comments before the docstring (a licence header) are skipped.
        while n <= lines.count() && trim(lines.line(n)).starts_with(b"#") {
            n += 1;
        }
        return python_string_at(source, lines, n).unwrap_or_default();
    }
    let mut collected = Vec::new();
    while n <= lines.count() && collected.len() < MAX_COMMENT_LINES {
        match strip_comment(trim(lines.line(n))) {
            Some(body) => collected.push(body),
            None => break,
        }
        n += 1;
    }
    join_doc(&collected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::extract;

    fn field<'a>(doc: &'a Document, name: &str) -> &'a str {
        &doc.fields.iter().find(|(n, _)| n == name).unwrap().1
    }

    #[test]
    fn python_definitions_and_file() {
        let source = br#"#!/usr/bin/env python
"""Shell completion for bash and zsh."""

import os


class BashComplete(ShellComplete):
    """Completion for Bash."""

    name = "bash"

    def source(self,
               prog):
        '''Render the
        completion script.'''
        return prog


def helper(): return 1
"#;
        let symbols = extract(Language::Python, source);
        let docs = documents("click/shell_completion.py", &symbols, source);
        let keys: Vec<&str> = docs.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "click/shell_completion.py#0",
                "click/shell_completion.py#1",
                "click/shell_completion.py#2",
                "click/shell_completion.py#"
            ]
        );
        let class = &docs[0];
        assert_eq!(class.kind, DEFINITION);
        assert_eq!(class.group, "click/shell_completion.py");
        assert_eq!(field(class, "name"), "BashComplete");
        assert_eq!(field(class, "qualified"), "BashComplete");
        assert_eq!(field(class, "doc"), "Completion for Bash.");
        // The class body names its method but does not repeat its body.
        let body = field(class, "body");
        assert!(body.contains("\nsource\n"), "{body}");
        assert!(!body.contains("return prog"), "{body}");
        assert!(body.contains("name = \"bash\""), "{body}");
        let method = &docs[1];
        assert_eq!(field(method, "name"), "source");
        assert_eq!(field(method, "qualified"), "BashComplete.source");
        assert_eq!(field(method, "doc"), "Render the completion script.");
        assert!(field(method, "body").contains("return prog"));
        assert_eq!(field(&docs[2], "qualified"), "helper");
        assert_eq!(field(&docs[2], "doc"), "");
        let file = &docs[3];
        assert_eq!(file.kind, FILE);
        assert_eq!(field(file, "doc"), "Shell completion for bash and zsh.");
        assert_eq!(field(file, "names"), "BashComplete helper");
        assert_eq!(field(file, "path"), "click/shell_completion.py");
        let embed = |d: &Document| {
            d.meta
                .iter()
                .find(|(k, _)| k == EMBED)
                .map(|(_, t)| t.clone())
        };
        assert_eq!(
            embed(method).as_deref(),
            Some("BashComplete.source\ndef source(self,\nRender the completion script.")
        );
        assert_eq!(
            embed(file).as_deref(),
            Some("click/shell_completion.py\nShell completion for bash and zsh.\nBashComplete helper")
        );
    }

    #[test]
    fn comment_documentation_in_other_languages() {
        let source = b"//! Routing with a radix tree.\n\nuse std::fmt;\n\n/// Adds a route\n/// to the tree.\n#[inline]\npub fn add_route(path: &str) {}\n\n// unrelated\n\nfn bare() {}\n";
        let symbols = extract(Language::Rust, source);
        let docs = documents("src/tree.rs", &symbols, source);
        assert_eq!(field(&docs[0], "doc"), "Adds a route to the tree.");
        assert_eq!(field(&docs[1], "doc"), "");
        assert_eq!(field(&docs[2], "doc"), "Routing with a radix tree.");
        let go = b"// Package gin routes requests.\npackage gin\n\n/* addRoute adds a node\n * with the given handle. */\nfunc (n *node) addRoute(path string) {}\n";
        let symbols = extract(Language::Go, go);
        let docs = documents("tree.go", &symbols, go);
        assert_eq!(
            field(&docs[0], "doc"),
            "addRoute adds a node with the given handle."
        );
        assert_eq!(
            field(docs.last().unwrap(), "doc"),
            "Package gin routes requests."
        );
    }

    #[test]
    fn keys_round_trip() {
        assert_eq!(
            parse_key(&definition_key("a#b.py", 12)),
            Some(("a#b.py", Some(12)))
        );
        assert_eq!(parse_key(&file_key("a#b.py")), Some(("a#b.py", None)));
        assert_eq!(parse_key("nohash"), None);
        assert_eq!(parse_key("a.py#x"), None);
    }

    #[test]
    fn hostile_sources_stay_bounded() {
        // An unterminated docstring, bad UTF-8 and a huge body.
        let mut source = b"def f():\n    \"\"\"never closed\n".to_vec();
        source.extend(std::iter::repeat_n(b'x', 200_000));
        source.extend(b"\n\xff\xfe\n");
        let symbols = extract(Language::Python, &source);
        let docs = documents("f.py", &symbols, &source);
        for doc in &docs {
            for (_, text) in &doc.fields {
                assert!(text.len() <= MAX_BODY_BYTES, "{}", text.len());
            }
        }
        let empty = extract(Language::Python, b"");
        let docs = documents("e.py", &empty, b"");
        assert_eq!(docs.len(), 1);
        assert_eq!(field(&docs[0], "doc"), "");
    }
}
