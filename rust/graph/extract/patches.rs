//! Source patched before parsing, where a grammar crate misreads valid code: the
//! bytes it trips on become spaces, so every byte keeps its offset and the tree's
//! ranges still index the original source (text is always read from it).

/// TypeScript that tree-sitter-typescript 0.23 (the latest grammar crate) does not
/// parse, blanked out so that the rest of the file parses: the variance modifiers of
/// type parameters (`interface I<out O, in I>`, TypeScript 4.7) and the `type` of
/// `export type * from` (5.0). Spaces replace the words, so every byte keeps its
/// offset and the tree's ranges still index the original source (text is always
/// read from it). A modifier is `in` or `out` after `<` or `,`, followed on the same
/// line by a name and then `,`, `>`, `=`, `extends` or another name (`in out T`):
/// in valid code that is a type parameter (or text of a string, comment or JSX,
/// where blanking changes nothing extracted). None when nothing needs blanking.
pub(super) fn typescript_patched(source: &[u8]) -> Option<Vec<u8>> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let blank = |b: u8| b == b' ' || b == b'\t';
    let skip = |at: usize, ws: &dyn Fn(u8) -> bool| {
        source[at..]
            .iter()
            .position(|&b| !ws(b))
            .map_or(source.len(), |n| at + n)
    };
    let word_end = |at: usize| {
        source[at..]
            .iter()
            .position(|&b| !word(b))
            .map_or(source.len(), |n| at + n)
    };
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < source.len() {
        let b = source[i];
        i += 1;
        if b == b'<' || b == b',' {
            let mut at = skip(i, &|b: u8| b.is_ascii_whitespace());
            // `in`, `out` or `in out`, then the parameter's name.
            let mut modifiers = Vec::new();
            loop {
                let end = word_end(at);
                let text = &source[at..end];
                let next = skip(end, &blank);
                if (text == b"in" || text == b"out") && next > end && word_end(next) > next {
                    modifiers.push(at..end);
                    at = next;
                } else {
                    break;
                }
            }
            if modifiers.is_empty() {
                continue;
            }
            let name_end = word_end(at);
            let after = skip(name_end, &|b: u8| b.is_ascii_whitespace());
            let follows = source.get(after).copied();
            let fits = matches!(follows, Some(b',' | b'>' | b'='))
                || source[after..].starts_with(b"extends")
                    && !source.get(after + 7).copied().is_some_and(word);
            if name_end > at && fits {
                let out = out.get_or_insert_with(|| source.to_vec());
                for range in modifiers {
                    out[range].fill(b' ');
                }
            }
        } else if b == b'e'
            && (i < 2 || !word(source[i - 2]))
            && source[i - 1..].starts_with(b"export")
        {
            // `export type *`: the `type` goes.
            let after_export = i - 1 + 6;
            let at = skip(after_export, &|b: u8| b.is_ascii_whitespace());
            if at > after_export && source[at..].starts_with(b"type") {
                let star = skip(at + 4, &|b: u8| b.is_ascii_whitespace());
                if star > at + 4 && source.get(star) == Some(&b'*') {
                    out.get_or_insert_with(|| source.to_vec())[at..at + 4].fill(b' ');
                }
            }
        }
    }
    out
}

/// Python that tree-sitter-python 0.25 (the latest grammar crate) reads as a syntax
/// error, made to parse: a format spec that starts with `=` in an f-string
/// (`f"{x:=}"`, `f"{x:=^10}"`: fill or alignment `=`), which its lexer takes for the
/// walrus operator `:=`. The `=` becomes a space (every byte keeps its offset; the
/// spec is text, nothing is extracted from it). Found by a scan of strings: prefixes,
/// quotes (triple too), escapes, comments, and in an f-string's replacement fields
/// brackets, nested strings and fields; a `:=` at a field's top level begins its
/// format spec (Python needs parentheses for a walrus there). None when nothing
/// needs it.
pub(super) fn python_patched(source: &[u8]) -> Option<Vec<u8>> {
    if !source.windows(2).any(|w| w == b":=") {
        return None;
    }
    enum Context {
        /// Code: the file, or an f-string's replacement field (`field`), with the
        /// brackets open in it.
        Code { field: bool, depth: u32 },
        /// A string: its quote, tripled or not, raw or not, an f-string or not.
        Text {
            quote: u8,
            triple: bool,
            raw: bool,
            f: bool,
        },
        /// A replacement field's format spec, up to its `}`.
        Spec,
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let mut stack = vec![Context::Code {
        field: false,
        depth: 0,
    }];
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < source.len() {
        let b = source[i];
        match stack.last_mut().expect("the file's context stays") {
            Context::Code { field, depth } => match b {
                b'#' => {
                    i = source[i..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(source.len(), |n| i + n);
                    continue;
                }
                b'\'' | b'"' => {
                    // The prefix: the letters right before the quote.
                    let start = source[..i]
                        .iter()
                        .rposition(|&c| !word(c))
                        .map_or(0, |n| n + 1);
                    let prefix = &source[start..i];
                    let string =
                        prefix.len() <= 3 && prefix.iter().all(|c| b"rRbBuUfFtT".contains(c));
                    let (raw, f) = if string {
                        (
                            prefix.iter().any(|c| b"rR".contains(c)),
                            prefix.iter().any(|c| b"fFtT".contains(c)),
                        )
                    } else {
                        (false, false)
                    };
                    let triple = source[i..].starts_with(&[b, b, b]);
                    stack.push(Context::Text {
                        quote: b,
                        triple,
                        raw,
                        f,
                    });
                    i += if triple { 3 } else { 1 };
                    continue;
                }
                b'(' | b'[' | b'{' => *depth += 1,
                b')' | b']' => *depth = depth.saturating_sub(1),
                b'}' if *field && *depth == 0 => {
                    stack.pop();
                }
                b'}' => *depth = depth.saturating_sub(1),
                b':' if *field && *depth == 0 => {
                    if source.get(i + 1) == Some(&b'=') {
                        out.get_or_insert_with(|| source.to_vec())[i + 1] = b' ';
                    }
                    *stack.last_mut().expect("just matched") = Context::Spec;
                }
                _ => {}
            },
            Context::Text {
                quote,
                triple,
                raw,
                f,
            } => {
                let (quote, triple, raw, f) = (*quote, *triple, *raw, *f);
                if b == b'\\' && !raw {
                    i += 2;
                    continue;
                }
                if b == quote && (!triple || source[i..].starts_with(&[quote, quote, quote])) {
                    stack.pop();
                    i += if triple { 3 } else { 1 };
                    continue;
                }
                if b == b'\n' && !triple {
                    // An unterminated string ends at its line, as the parser's does.
                    stack.pop();
                } else if f && b == b'{' {
                    if source.get(i + 1) == Some(&b'{') {
                        i += 2;
                        continue;
                    }
                    stack.push(Context::Code {
                        field: true,
                        depth: 0,
                    });
                }
            }
            Context::Spec => match b {
                b'{' => stack.push(Context::Code {
                    field: true,
                    depth: 0,
                }),
                b'}' => {
                    stack.pop();
                }
                _ => {}
            },
        }
        i += 1;
    }
    out
}
