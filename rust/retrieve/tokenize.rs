//! A tokenizer for code and the prose around it: identifiers are kept whole and split
//! into their parts, so a query for `completion` finds `shell_completion` and a query
//! for `shell_completion` prefers it over a text that only says "shell".
//!
//! Rules, in order:
//! - a *word* is a run of Unicode alphanumerics and `_`; anything else separates
//!   words, so paths and dotted names split at `/` and `.`;
//! - each word is emitted whole, lower-cased (`find_symbol`, `httpserver`), then its
//!   `_`-separated segments, then the *parts* of each segment: split at camelCase
//!   boundaries with acronyms kept together (`HTTPServerError` -> `http`, `server`,
//!   `error`) and at letter/digit boundaries (`getX2Value` -> `get`, `x`, `2`,
//!   `value`); nothing is emitted twice for one position (`click` is one token), and
//!   a word of underscores only is no token;
//! - a token shorter than [`MIN_CHARS`] characters or longer than [`MAX_BYTES`]
//!   bytes is dropped, and so is one in [`STOP_WORDS`] or [`CODE_NOISE`].
//!
//! One pass over the text, no recursion; the only memory is a buffer of
//! [`MAX_BYTES`] for the lower-cased token (a longer one is given up on as soon as it
//! is known to be too long).
//!
//! Stemming (optional, for prose: [`tokens_with`], [`for_each_token_with`]). Each
//! token that passes the filters above is replaced by its Snowball English stem
//! ([`stem`]: `parties` and `party` -> `parti`, `running` and `runs` -> `run`), and
//! dropped if the stem is itself a stop word (`others` -> `other`) or shorter than
//! [`MIN_CHARS`]. Every token is stemmed, identifiers and their parts included:
//! `parseHTTPResponse` gives `parsehttprespons`, `pars`, `http`, `respons`. That is
//! harmless as long as documents and queries are stemmed alike (the lexical index
//! does both or neither), but it is why code search does not stem. A stem is never
//! longer than its word, so it still fits in [`MAX_BYTES`]. The stemmer is made
//! once per process; a token whose stem differs costs one small allocation.

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::OnceLock;

use foldhash::HashSet;

use rust_stemmers::{Algorithm, Stemmer};

/// Tokens shorter than this many characters are dropped (`x`, `2`).
pub const MIN_CHARS: usize = 2;
/// Tokens longer than this many bytes (lower-cased, UTF-8) are dropped: hashes,
/// base64 blobs, minified code.
pub const MAX_BYTES: usize = 64;

/// English words too common in questions and comments to tell documents apart
/// ("how does the parser handle it"). Sorted (a test checks). Words that are also
/// meaningful names in code are left out on purpose: `while`, `all`, `any`, `some`,
/// `each`, `then`, `now`, `once`, `before`, `after`, `up`, `down`, `out`, `over`,
/// `under`, `re` (the regex module).
#[rustfmt::skip]
pub const STOP_WORDS: &[&str] = &[
    "about", "above", "across", "again", "against", "already", "also", "although", "am",
    "among", "an", "and", "another", "anyone", "anything", "are", "aren", "as", "at", "be",
    "became", "because", "become", "been", "being", "below", "between", "both", "but", "by",
    "can", "cannot", "could", "couldn", "did", "didn", "do", "does", "doesn", "doing",
    "don", "during", "either", "enough", "even", "ever", "every", "few", "for", "from",
    "further", "had", "hadn", "has", "hasn", "have", "haven", "having", "he", "her", "here",
    "hers", "herself", "him", "himself", "his", "how", "however", "if", "in", "instead",
    "into", "is", "isn", "it", "its", "itself", "just", "ll", "many", "may", "maybe", "me",
    "might", "mightn", "more", "most", "much", "must", "mustn", "my", "myself", "needn",
    "neither", "no", "nor", "not", "of", "often", "on", "only", "or", "other", "our",
    "ours", "ourselves", "own", "perhaps", "please", "quite", "rather", "really", "same",
    "shall", "shan", "she", "should", "shouldn", "since", "so", "something", "sometimes",
    "still", "such", "than", "that", "the", "their", "theirs", "them", "themselves",
    "there", "these", "they", "this", "those", "though", "through", "thus", "to", "too",
    "toward", "towards", "until", "upon", "us", "ve", "very", "was", "wasn", "we", "were",
    "weren", "what", "when", "where", "whether", "which", "who", "whom", "whose", "why",
    "will", "with", "without", "won", "would", "wouldn", "yet", "you", "your", "yours",
    "yourself", "yourselves",
];

/// Verbs a question about code uses to point at code without naming it ("where is
/// gitignore *handled*", "how is the limit *implemented*", "where are they
/// *defined*"). Code search weighs such a word by `QueryTerms::filler` when the
/// project writes it in prose only (see [`crate::retrieve::QueryTerms`]): a project
/// whose names have it keeps it at full weight. Sorted (a test checks).
#[rustfmt::skip]
pub const FILLER_WORDS: &[&str] = &[
    "accomplished", "achieved", "carried", "dealt", "defined", "determined", "done",
    "handled", "happened", "happens", "implemented", "involved", "located", "managed",
    "occurs", "performed", "responsible", "treated", "used", "worked", "works",
];

/// Words so common in code that they say nothing about a definition: receivers
/// (`self`, `cls`, `this`), declaration keywords (`def`, `fn`, `let`, `var`,
/// `const`), `return`, `pass`, and the literals `None`, `true`, `false`, `null`.
/// Sorted (a test checks). `this` is in both lists: it is prose and code noise.
pub const CODE_NOISE: &[&str] = &[
    "cls", "const", "def", "false", "fn", "let", "none", "null", "pass", "return", "self", "this",
    "true", "var",
];

/// Whether `token` (lower-cased) is dropped as a stop word or code noise.
pub fn is_stop_word(token: &str) -> bool {
    // Every listed word is 2 to 10 bytes long: compare them as integers, by hash
    // (a binary search's unpredictable branches were 7 % of a bulk load).
    static PACKED: OnceLock<HashSet<u128>> = OnceLock::new();
    if !(2..=LONGEST_STOP_WORD).contains(&token.len()) {
        return false;
    }
    let packed = PACKED.get_or_init(|| {
        STOP_WORDS
            .iter()
            .chain(CODE_NOISE)
            .map(|w| head(w.as_bytes()))
            .collect()
    });
    packed.contains(&head(token.as_bytes()))
}

/// Bytes of the longest word of [`STOP_WORDS`] and [`CODE_NOISE`] (a test checks).
const LONGEST_STOP_WORD: usize = 10;

/// The first 16 bytes of `bytes` (fewer: padded with zeros) as a big-endian
/// integer, so that integers order as the byte strings do when no byte is 0.
/// Read with fixed-size loads that overlap rather than copied to a buffer of
/// their length: the copy's variable-length stores stalled the read back (a
/// third of the tokenizer's time).
pub(crate) fn head(bytes: &[u8]) -> u128 {
    let n = bytes.len().min(16);
    if n >= 8 {
        let high = u64::from_be_bytes(bytes[..8].try_into().expect("8 bytes"));
        let tail = u64::from_be_bytes(bytes[n - 8..n].try_into().expect("8 bytes"));
        // The last n - 8 bytes in the top of the low half.
        let low = if n == 8 { 0 } else { tail << ((16 - n) * 8) };
        return (u128::from(high) << 64) | u128::from(low);
    }
    let high = if n >= 4 {
        let first = u32::from_be_bytes(bytes[..4].try_into().expect("4 bytes"));
        let last = u32::from_be_bytes(bytes[n - 4..n].try_into().expect("4 bytes"));
        (u64::from(first) << 32) | (u64::from(last) << ((8 - n) * 8))
    } else {
        bytes[..n]
            .iter()
            .enumerate()
            .fold(0, |acc, (i, &b)| acc | (u64::from(b) << ((7 - i) * 8)))
    };
    u128::from(high) << 64
}

/// The Snowball English stem of `token` (lower-case): `running` -> `run`,
/// `parties` -> `parti`, `meetings` -> `meet`. Borrowed when it is the token itself.
pub fn stem(token: &str) -> Cow<'_, str> {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER
        .get_or_init(|| Stemmer::create(Algorithm::English))
        .stem(token)
}

/// The tokens of `text`, in order, repeats included (they are term frequencies).
pub fn tokens(text: &str) -> Vec<String> {
    tokens_with(text, false)
}

/// [`tokens`], each replaced by its stem if `stem` (see the module documentation).
pub fn tokens_with(text: &str, stem: bool) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token_with(text, stem, |token| {
        out.push(token.to_owned());
        ControlFlow::Continue(())
    });
    out
}

/// Calls `emit` with each token of `text` in order (see [`tokens`]), without
/// allocating per token; `emit` stops the walk by returning `ControlFlow::Break`.
pub fn for_each_token(text: &str, emit: impl FnMut(&str) -> ControlFlow<()>) {
    for_each_token_with(text, false, emit);
}

/// [`for_each_token`], each token replaced by its stem if `stem` (see the module
/// documentation).
pub fn for_each_token_with(text: &str, stem: bool, mut emit: impl FnMut(&str) -> ControlFlow<()>) {
    let mut out = Out {
        buffer: String::with_capacity(MAX_BYTES + 8),
        stem,
        emit: &mut emit,
    };
    let mut start: Option<usize> = None;
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        // ASCII a byte at a time; anything else decoded (`at` is always at the
        // start of a character).
        let (in_word, width) = match bytes[at] {
            b if b.is_ascii() => (b.is_ascii_alphanumeric() || b == b'_', 1),
            _ => {
                let c = text[at..].chars().next().expect("a character starts here");
                (is_word_char(c), c.len_utf8())
            }
        };
        if in_word {
            start.get_or_insert(at);
        } else if let Some(from) = start.take() {
            if word(&text[from..at], &mut out).is_break() {
                return;
            }
        }
        at += width;
    }
    if let Some(from) = start {
        let _ = word(&text[from..], &mut out);
    }
}

/// Where tokens go: the lower-casing buffer, whether to stem, the caller's `emit`.
struct Out<'a, F> {
    buffer: String,
    stem: bool,
    emit: &'a mut F,
}

fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        c.is_alphanumeric()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Upper,
    /// Lower-case letters and letters without case (CJK, ...).
    Lower,
    Digit,
}

fn class(c: char) -> Class {
    if c.is_uppercase() {
        Class::Upper
    } else if c.is_numeric() {
        Class::Digit
    } else {
        Class::Lower
    }
}

/// Emits `word` whole, then for each `_`-separated segment: the segment if it is
/// not the whole word, then its camelCase and letter/digit parts if it has more than
/// one (`getX2Value_async` -> `getx2value_async`, `getx2value`, `get`, `x`, `2`,
/// `value`, `async`, before the length filter).
fn word<F: FnMut(&str) -> ControlFlow<()>>(word: &str, out: &mut Out<'_, F>) -> ControlFlow<()> {
    if word.bytes().all(|b| b.is_ascii_lowercase()) {
        // Most words of code and prose: nothing to split.
        return emit_lower(word, out);
    }
    if word.bytes().all(|b| b == b'_') {
        return ControlFlow::Continue(());
    }
    emit_lower(word, out)?;
    for segment in word.split('_').filter(|s| !s.is_empty()) {
        if segment.len() != word.len() {
            emit_lower(segment, out)?;
        }
        if boundaries(segment, |_| ControlFlow::Break(())).is_continue() {
            continue;
        }
        let mut start = 0;
        boundaries(segment, |at| {
            emit_lower(&segment[start..at], out)?;
            start = at;
            ControlFlow::Continue(())
        })?;
        emit_lower(&segment[start..], out)?;
    }
    ControlFlow::Continue(())
}

/// Calls `found` with the byte offset of each camelCase or letter/digit boundary
/// inside `segment` (which has no `_`), in order.
fn boundaries(segment: &str, mut found: impl FnMut(usize) -> ControlFlow<()>) -> ControlFlow<()> {
    // The previous character's class and offset, and the class of the one before.
    let mut previous: Option<(Class, usize)> = None;
    let mut before_previous: Option<Class> = None;
    for (at, c) in segment.char_indices() {
        let current = class(c);
        if let Some((last, last_at)) = previous {
            let boundary = match (last, current) {
                (Class::Lower, Class::Upper) => Some(at),
                (Class::Digit, Class::Upper | Class::Lower)
                | (Class::Upper | Class::Lower, Class::Digit) => Some(at),
                // The end of an acronym: `HTTPServer` splits before the `S`.
                (Class::Upper, Class::Lower) if before_previous == Some(Class::Upper) => {
                    Some(last_at)
                }
                _ => None,
            };
            if let Some(boundary) = boundary {
                found(boundary)?;
            }
        }
        before_previous = previous.map(|(last, _)| last);
        previous = Some((current, at));
    }
    ControlFlow::Continue(())
}

/// Lower-cases `token` into the buffer and emits it (or its stem) if it passes the
/// filters. Gives up as soon as the lower-cased form is longer than [`MAX_BYTES`],
/// so a megabyte-long word costs no more than a short one here.
fn emit_lower<F: FnMut(&str) -> ControlFlow<()>>(
    token: &str,
    out: &mut Out<'_, F>,
) -> ControlFlow<()> {
    let buffer = &mut out.buffer;
    buffer.clear();
    let mut chars = 0;
    if token.is_ascii() {
        // One byte per character: the length is known before copying anything.
        if token.len() > MAX_BYTES {
            return ControlFlow::Continue(());
        }
        buffer.push_str(token);
        buffer.make_ascii_lowercase();
        chars = token.len();
    } else {
        for c in token.chars() {
            buffer.extend(c.to_lowercase());
            chars += 1;
            if buffer.len() > MAX_BYTES {
                return ControlFlow::Continue(());
            }
        }
    }
    if chars < MIN_CHARS || is_stop_word(buffer) {
        return ControlFlow::Continue(());
    }
    if out.stem {
        if let Cow::Owned(stemmed) = stem(buffer) {
            if stemmed.chars().nth(MIN_CHARS - 1).is_none() || is_stop_word(&stemmed) {
                return ControlFlow::Continue(());
            }
            return (out.emit)(&stemmed);
        }
    }
    (out.emit)(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(text: &str) -> Vec<String> {
        tokens(text)
    }

    #[test]
    fn lists_are_sorted_lowercase_and_unique() {
        assert!(FILLER_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(FILLER_WORDS.iter().all(|w| *w == w.to_lowercase()));
        for list in [STOP_WORDS, CODE_NOISE] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
            assert!(list.iter().all(|w| w.len() <= 16 && *w == w.to_lowercase()));
            assert!(list
                .iter()
                .all(|w| (2..=LONGEST_STOP_WORD).contains(&w.len())));
        }
        assert!(STOP_WORDS.len() >= 140);
    }

    #[test]
    fn snake_case() {
        assert_eq!(t("find_symbol"), ["find_symbol", "find", "symbol"]);
        assert_eq!(t("__init__"), ["__init__", "init"]);
        assert_eq!(
            t("MAX_FIELD_TOKENS"),
            ["max_field_tokens", "max", "field", "tokens"]
        );
    }

    #[test]
    fn camel_case_and_acronyms() {
        assert_eq!(t("HttpServer"), ["httpserver", "http", "server"]);
        assert_eq!(
            t("HTTPServerError"),
            ["httpservererror", "http", "server", "error"]
        );
        assert_eq!(t("parseJSON"), ["parsejson", "parse", "json"]);
        assert_eq!(
            t("XMLHttpRequest"),
            ["xmlhttprequest", "xml", "http", "request"]
        );
        assert_eq!(t("click"), ["click"]);
        assert_eq!(t("Click"), ["click"]);
        assert_eq!(t("URL"), ["url"]);
    }

    #[test]
    fn digits() {
        // `x` and `2` are parts too, but shorter than two characters.
        assert_eq!(t("getX2Value"), ["getx2value", "get", "value"]);
        assert_eq!(t("utf8_decode"), ["utf8_decode", "utf8", "utf", "decode"]);
        assert_eq!(
            t("getValue_async"),
            ["getvalue_async", "getvalue", "get", "value", "async"]
        );
        assert_eq!(
            t("sha256sum 42 7"),
            ["sha256sum", "sha", "256", "sum", "42"]
        );
        assert_eq!(t("Base64URL"), ["base64url", "base", "64", "url"]);
    }

    #[test]
    fn paths_and_dotted_names() {
        assert_eq!(
            t("src/click/shell_completion.py"),
            [
                "src",
                "click",
                "shell_completion",
                "shell",
                "completion",
                "py"
            ]
        );
        assert_eq!(t("os.path.join"), ["os", "path", "join"]);
        assert_eq!(t("a::b::CamelCase()"), ["camelcase", "camel", "case"]);
    }

    #[test]
    fn stop_words_and_code_noise() {
        assert_eq!(
            t("How does the parser handle it when self is None?"),
            ["parser", "handle"]
        );
        assert_eq!(t("def f(self): return True"), Vec::<String>::new());
        // Parts are filtered one by one: `is` goes, `valid` stays.
        assert_eq!(t("is_valid"), ["is_valid", "valid"]);
        assert_eq!(
            t("while async import class"),
            ["while", "async", "import", "class"]
        );
    }

    proptest! {
        #[test]
        fn head_is_the_padded_first_16_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut padded = [0u8; 16];
            let n = bytes.len().min(16);
            padded[..n].copy_from_slice(&bytes[..n]);
            prop_assert_eq!(head(&bytes), u128::from_be_bytes(padded));
        }
    }

    #[test]
    fn every_listed_word_is_a_stop_word_and_nothing_else() {
        for word in STOP_WORDS.iter().chain(CODE_NOISE) {
            assert!(is_stop_word(word), "{word}");
            // The same shape (length, first and last byte), another word.
            let mut other = word.as_bytes().to_vec();
            if other.len() > 2 {
                other[1] = b'q';
                let other = String::from_utf8(other).unwrap();
                let listed =
                    STOP_WORDS.contains(&other.as_str()) || CODE_NOISE.contains(&other.as_str());
                assert_eq!(is_stop_word(&other), listed, "{other}");
            }
        }
        for word in [
            "",
            "a",
            "parser",
            "theirselves",
            "yourselvesx",
            "xthe",
            "the_",
        ] {
            assert!(!is_stop_word(word), "{word}");
        }
    }

    #[test]
    fn unicode() {
        assert_eq!(t("größe_wert"), ["größe_wert", "größe", "wert"]);
        assert_eq!(t("ÜberKlasse"), ["überklasse", "über", "klasse"]);
        assert_eq!(t("naïve café"), ["naïve", "café"]);
        // Letters without case do not split.
        assert_eq!(t("数据_处理"), ["数据_处理", "数据", "处理"]);
    }

    #[test]
    fn empty_and_separators_only() {
        assert!(t("").is_empty());
        assert!(t("  ./-- ()[] \n\t").is_empty());
        assert!(t("_ __ ___").is_empty());
    }

    #[test]
    fn long_tokens_are_dropped() {
        let long = "a".repeat(65);
        assert!(t(&long).is_empty());
        let fits = "b".repeat(64);
        assert_eq!(t(&fits), [fits]);
        // The whole word is too long, its parts are not.
        let word = format!("{}_{}", "c".repeat(40), "d".repeat(40));
        assert_eq!(t(&word), ["c".repeat(40), "d".repeat(40)]);
    }

    #[test]
    fn a_megabyte_of_one_character_is_fast_and_empty() {
        let started = std::time::Instant::now();
        for c in ["a", "A", "_", "7", "ß", " "] {
            let text = c.repeat(1 << 20);
            assert!(t(&text).is_empty(), "{c}");
        }
        let text = "aB".repeat(1 << 19);
        let many = t(&text);
        assert_eq!(many.len(), (1 << 19) - 1);
        assert!(many.iter().all(|t| t == "ba"));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn the_walk_stops_when_asked() {
        let mut seen = Vec::new();
        for_each_token("alpha beta gamma", |t| {
            seen.push(t.to_owned());
            if seen.len() == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!(seen, ["alpha", "beta"]);
    }

    #[test]
    fn snowball_english_stems() {
        for (word, expected) in [
            ("running", "run"),
            ("runs", "run"),
            ("run", "run"),
            // Irregular forms are not stems of one another.
            ("ran", "ran"),
            ("parties", "parti"),
            ("party", "parti"),
            ("meeting", "meet"),
            ("meetings", "meet"),
            ("connection", "connect"),
            ("connected", "connect"),
        ] {
            assert_eq!(stem(word), expected, "{word}");
        }
        assert!(matches!(stem("run"), Cow::Borrowed("run")));
    }

    #[test]
    fn stemmed_tokens() {
        let s = |text: &str| tokens_with(text, true);
        assert_eq!(s("The parties were running late"), ["parti", "run", "late"]);
        assert_eq!(s("a party at the meeting"), ["parti", "meet"]);
        assert_eq!(s("meetings"), s("meeting"));
        // Identifiers are stemmed whole and part by part.
        assert_eq!(
            s("parseHTTPResponse"),
            ["parsehttprespons", "pars", "http", "respons"]
        );
        assert_eq!(s("find_symbols"), ["find_symbol", "find", "symbol"]);
        // A stem that is a stop word goes, as the word itself would.
        assert_eq!(s("others"), Vec::<String>::new());
        assert_eq!(t("others"), ["others"]);
        // Off, nothing changes.
        assert_eq!(
            tokens_with("The parties were running late", false),
            ["parties", "running", "late"]
        );
        let mut seen = Vec::new();
        for_each_token_with("meetings parties", true, |t| {
            seen.push(t.to_owned());
            ControlFlow::Break(())
        });
        assert_eq!(seen, ["meet"]);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn tokens_are_bounded_and_lowercase(text in any::<String>()) {
            check(&text)?;
        }

        #[test]
        fn code_like_tokens_are_bounded_and_lowercase(text in "[a-zA-Z0-9_ ./ßÉİΣ数]{0,300}") {
            check(&text)?;
        }

        #[test]
        fn prose_tokens_are_bounded_and_lowercase(
            text in "([a-zA-Zß]{1,8}(ing|ed|ies|s|ly|ness|ational|ization|y|e|ée)?[ ,._]){0,40}",
        ) {
            check(&text)?;
        }
    }

    fn check(text: &str) -> std::result::Result<(), TestCaseError> {
        let plain = tokens(text);
        let stemmed = tokens_with(text, true);
        // One stem per token at most, in order.
        prop_assert!(stemmed.len() <= plain.len());
        for token in plain.iter().chain(&stemmed) {
            prop_assert!(token.len() <= MAX_BYTES, "{token:?}");
            prop_assert!(token.chars().count() >= MIN_CHARS, "{token:?}");
            prop_assert!(!is_stop_word(token));
            prop_assert!(
                token.chars().flat_map(char::to_lowercase).eq(token.chars()),
                "not lower-case: {token:?}"
            );
        }
        Ok(())
    }
}
