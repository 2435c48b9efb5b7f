//! C and C++ macros written where the grammar expects no name: attribute-like
//! macros before a declaration (`FMT_CONSTEXPR write_int_data(int n) : size(n) {}`,
//! `FMT_API void f();`, `class FMT_API format_error`) and macros alone on a line
//! (`FMT_BEGIN_NAMESPACE`, `Q_OBJECT`). tree-sitter reads such a macro as a type
//! or a declaration and its error recovery can go badly wrong: a constructor
//! with a macro before it in a class body made the class swallow the next
//! ~700 lines of fmt's `format.h`, and every function there became its method.
//! Blanked (spaces for its bytes, so that every offset stays the same and the
//! tree's ranges still index the original source) the macro is read as the
//! attribute it stands for. Lines are read as text: preprocessor lines and
//! comments are skipped, a macro is a name written as macros are (`macro_like`).

use std::ops::Range;

use foldhash::HashSet;

use super::macro_like;

/// Words that start a declaration: a macro before one is blanked. `const` and
/// `volatile` are not among them (`UINT8 const x;` declares a variable of the
/// type the macro names).
const DECLARATION_START: &[&[u8]] = &[
    b"inline",
    b"static",
    b"constexpr",
    b"consteval",
    b"constinit",
    b"explicit",
    b"virtual",
    b"extern",
    b"auto",
    b"void",
    b"bool",
    b"char",
    b"int",
    b"long",
    b"short",
    b"unsigned",
    b"signed",
    b"float",
    b"double",
    b"struct",
    b"class",
    b"union",
    b"enum",
    b"namespace",
    b"typename",
    b"friend",
    b"template",
    b"thread_local",
    b"typedef",
    b"using",
];

fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The end of the word starting at `at` (`at` itself when none starts there).
fn word_end(source: &[u8], at: usize) -> usize {
    source[at..]
        .iter()
        .position(|&b| !word_byte(b))
        .map_or(source.len(), |n| at + n)
}

/// The first byte at or after `at` that is no blank (space or tab), within `end`.
fn skip_blanks(source: &[u8], at: usize, end: usize) -> usize {
    source[at..end]
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .map_or(end, |n| at + n)
}

/// The byte after the `>` closing the `<` at `at`, on the line ending at `end`.
fn after_angles(source: &[u8], at: usize, end: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in source[at..end].iter().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Where the words `class` and `struct` start in `source`, in order: the places
/// `class_names` and `between_class_and_name` look at. A word is a longest run of
/// word bytes, so an occurrence is one when no word byte touches either end of it
/// (found with a substring search: far fewer bytes looked at one by one than
/// reading every word of the file).
fn class_keywords(source: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    for keyword in [&b"class"[..], b"struct"] {
        out.extend(memchr::memmem::find_iter(source, keyword).filter(|&at| {
            let end = at + keyword.len();
            (at == 0 || !word_byte(source[at - 1]))
                && source.get(end).is_none_or(|&b| !word_byte(b))
        }));
    }
    out.sort_unstable();
    out
}

/// The names given to classes and structs in the file (`class X`, `struct X`,
/// past macros between: `class FMT_API X`), given where the keywords start
/// (`class_keywords`): a macro before one of them followed by `(` is before a
/// constructor.
fn class_names<'a>(source: &'a [u8], keywords: &[usize]) -> HashSet<&'a [u8]> {
    let mut out = HashSet::default();
    for &at in keywords {
        let at = word_end(source, at);
        let mut next = skip_blanks(source, at, source.len());
        loop {
            let name_end = word_end(source, next);
            let name = &source[next..name_end];
            if name.is_empty() {
                break;
            }
            if macro_like(name) {
                next = skip_blanks(source, name_end, source.len());
                continue;
            }
            out.insert(name);
            break;
        }
    }
    out
}

/// The ranges of the macros to blank in C or C++ `source`, in order (see the
/// module's documentation): on a line (not a preprocessor line or in a comment),
/// - macros starting it (after `template <...>`, if any) that are followed by a
///   word starting a declaration (`DECLARATION_START`), by `~` (a destructor), by
///   a class's name and `(` (a constructor), or by a type and a name and `(` (`FMT_API
///   std::string vformat(`);
/// - a macro alone on it, after a line ending a statement or a block (`;`, `{`,
///   `}`, `:`) or a preprocessor line, or first in the file;
/// - a macro between `class` or `struct` and the name (`class FMT_API X`).
pub(super) fn attribute_macros(source: &[u8]) -> Vec<Range<usize>> {
    let keywords = class_keywords(source);
    let classes = class_names(source, &keywords);
    // The first keyword not before the line being read.
    let mut keyword = 0;
    let mut out = Vec::new();
    // The last byte of the last line read that was code (a boundary at the start).
    let mut previous = b';';
    let mut continued = false;
    let mut in_comment = false;
    let mut start = 0;
    while start < source.len() {
        let end = memchr::memchr(b'\n', &source[start..]).map_or(source.len(), |n| start + n);
        let line = start..end;
        start = end + 1;
        let text = &source[line.clone()];
        let trimmed_end = text
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(line.start, |n| line.start + n + 1);
        let first = skip_blanks(source, line.start, trimmed_end);
        if continued {
            continued = source[line.clone()].ends_with(b"\\");
            continue;
        }
        if in_comment {
            in_comment = !contains(&source[line.clone()], b"*/");
            continue;
        }
        if first == trimmed_end {
            continue;
        }
        let rest = &source[first..trimmed_end];
        if rest.starts_with(b"#") {
            continued = rest.ends_with(b"\\");
            previous = b';';
            continue;
        }
        if rest.starts_with(b"//") {
            continue;
        }
        if rest.starts_with(b"/*") {
            in_comment = !contains(&rest[2..], b"*/");
            continue;
        }
        if prefixes(source, first, trimmed_end, previous, &classes, &mut out) {
            // A macro alone, blanked: the line before still bounds the next.
            continue;
        }
        while keywords.get(keyword).is_some_and(|&at| at < first) {
            keyword += 1;
        }
        if keywords.get(keyword).is_some_and(|&at| at < trimmed_end) {
            between_class_and_name(source, first, trimmed_end, &mut out);
        }
        let code_end = find(&source[first..trimmed_end], b"//").map_or(trimmed_end, |n| first + n);
        if let Some(&last) = source[first..code_end]
            .iter()
            .rev()
            .find(|b| !b.is_ascii_whitespace())
        {
            previous = last;
        }
    }
    out.sort_by_key(|r| r.start);
    out.dedup();
    out
}

/// The macros starting the line `first..end` (see `attribute_macros`); true when
/// the line is one macro alone, blanked.
fn prefixes(
    source: &[u8],
    first: usize,
    end: usize,
    previous: u8,
    classes: &HashSet<&[u8]>,
    out: &mut Vec<Range<usize>>,
) -> bool {
    let mut at = first;
    let mut templated = false;
    if source[at..end].starts_with(b"template") && word_end(source, at) == at + 8 {
        let open = skip_blanks(source, at + 8, end);
        if source.get(open) == Some(&b'<') {
            let Some(after) = after_angles(source, open, end) else {
                return false;
            };
            at = skip_blanks(source, after, end);
            templated = true;
        }
    }
    let mut macros = Vec::new();
    loop {
        let word_end = word_end(source, at);
        let word = &source[at..word_end];
        if !macro_like(word)
            || !matches!(source.get(word_end), Some(b' ' | b'\t') | None) && word_end != end
        {
            break;
        }
        macros.push(at..word_end);
        at = skip_blanks(source, word_end, end);
        if at == end {
            break;
        }
    }
    if macros.is_empty() {
        return false;
    }
    let rest = &source[at..end];
    let alone = rest.is_empty() || rest.starts_with(b"//");
    let blank = if alone {
        macros.len() == 1 && !templated && matches!(previous, b';' | b'{' | b'}' | b':')
    } else if rest.starts_with(b"~") {
        true
    } else {
        let name_end = word_end(source, at);
        let name = &source[at..name_end];
        let after = skip_blanks(source, name_end, end);
        !name.is_empty()
            && (DECLARATION_START.contains(&name)
                || source.get(after) == Some(&b'(') && classes.contains(name)
                || typed_name(source, at, end))
    };
    if blank {
        out.extend(macros);
    }
    blank && alone
}

/// Whether a type and then a name and `(` start at `at` (`std::string f(`,
/// `basic_string_view<Char> name(`, `T* f(`), on the line ending at `end`.
fn typed_name(source: &[u8], mut at: usize, end: usize) -> bool {
    // The type: words joined by `::`, then type arguments, then `*` and `&`.
    loop {
        let word_end = word_end(source, at);
        if word_end == at {
            return false;
        }
        at = word_end;
        if source[at..end].starts_with(b"::") {
            at += 2;
            continue;
        }
        break;
    }
    if source.get(at) == Some(&b'<') {
        match after_angles(source, at, end) {
            Some(after) => at = after,
            None => return false,
        }
    }
    let before_name = at;
    while at < end && matches!(source[at], b' ' | b'\t' | b'*' | b'&') {
        at += 1;
    }
    let name_end = word_end(source, at);
    if at == before_name || name_end == at {
        return false;
    }
    source.get(skip_blanks(source, name_end, end)) == Some(&b'(')
}

/// A macro between `class` or `struct` and the class's name on the line
/// `first..end` (`class FMT_API format_error : public std::runtime_error {`).
fn between_class_and_name(source: &[u8], first: usize, end: usize, out: &mut Vec<Range<usize>>) {
    let mut at = first;
    while at < end {
        let word_end = word_end(source, at);
        if word_end == at {
            at += 1;
            continue;
        }
        let word = &source[at..word_end];
        let boundary = at == 0 || !word_byte(source[at - 1]);
        at = word_end;
        if !boundary || (word != b"class" && word != b"struct") {
            continue;
        }
        let next = skip_blanks(source, at, end);
        let macro_end = self::word_end(source, next);
        let name = skip_blanks(source, macro_end, end);
        if next > at
            && macro_like(&source[next..macro_end])
            && name > macro_end
            && self::word_end(source, name) > name
        {
            out.push(next..macro_end);
        }
    }
}

fn find(text: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(text, needle)
}

fn contains(text: &[u8], needle: &[u8]) -> bool {
    find(text, needle).is_some()
}

/// `source` with the bytes of `ranges` made spaces.
pub(super) fn blanked(source: &[u8], ranges: &[Range<usize>]) -> Vec<u8> {
    let mut out = source.to_vec();
    for range in ranges {
        out[range.clone()].fill(b' ');
    }
    out
}

/// Where a definition whose node starts at `start` starts in the source: before
/// the blanked macros right before it on its line (`FMT_CONSTEXPR` of
/// `FMT_CONSTEXPR write_int_data(`), so that its signature and its uses keep them.
pub(super) fn start_before(start: usize, ranges: &[Range<usize>], source: &[u8]) -> usize {
    let mut start = start;
    let mut i = ranges.partition_point(|r| r.end <= start);
    while i > 0 {
        let r = &ranges[i - 1];
        if source[r.end..start]
            .iter()
            .all(|&b| b == b' ' || b == b'\t')
        {
            start = r.start;
            i -= 1;
        } else {
            break;
        }
    }
    start
}
