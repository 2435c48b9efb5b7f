//! Extractive analysis of prose: sentences, words classified (entities, numbers,
//! negations, stop words, fillers), sentence centrality, and the forms long-term
//! memory keeps of a text (summary, key point, compressed and index forms,
//! headline, tags, entities, decisions, open questions). `aircher_mem.longterm.compress`
//! documents each form; this is its engine.
//!
//! Texts come cleaned and cut (control characters and lone surrogates read as
//! spaces, at most the first characters the caller examines). Character classes
//! follow Python's: a word character is a letter or number (`\p{L}`, `\p{N}`) or
//! `_`; "upper" and "lower" are Unicode's Uppercase and Lowercase properties.
//! Centrality sums each sentence's cosine similarities to the others over integer
//! term counts (dot products and squared norms exact, then one division): the same
//! in any language that rounds IEEE doubles, so a reference can match it bit for bit.

use std::ops::ControlFlow;
use std::sync::{Arc, LazyLock, OnceLock};

use foldhash::{HashMap, HashSet};
use regex::Regex;

use crate::retrieve::tokenize::{for_each_token, for_each_token_with};

/// Sentences ranked by centrality (the first ones); later sentences are not candidates.
pub const MAX_SENTENCES: usize = 200;
/// Sentences a key point keeps at most.
pub const KEY_POINT_SENTENCES: usize = 2;
/// A headline's length at most, "..." included.
pub const HEADLINE_CHARS: usize = 300;
/// Words of an episode's compressed form.
const COMPRESSED_WORDS: usize = 16;
/// Terms of an index form.
const INDEX_TERMS: usize = 3;
/// Words of an episode's headline.
const HEADLINE_WORDS: usize = 20;
/// Tags of an episode.
const TAGS: usize = 5;

fn pattern(source: &str) -> Regex {
    Regex::new(source).expect("a valid pattern")
}

static WORD: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"[$€£]?[\p{L}\p{N}_]+(?:[.'’\-/:][\p{L}\p{N}_]+)*%?"));
static POSSESSIVE: LazyLock<Regex> = LazyLock::new(|| pattern(r"(?i)['’]s$"));
static BOUNDARY: LazyLock<Regex> =
    LazyLock::new(|| pattern(r#"[.!?…]+["'”’)\]]*\s+|[。！？]+["'”’)\]]*\s*"#));
static DIGIT: LazyLock<Regex> = LazyLock::new(|| pattern(r"\d"));
static NUMERIC: LazyLock<Regex> = LazyLock::new(|| pattern(r"^[$€£]?[\d.,:/\-%]+$"));
static CAMEL: LazyLock<Regex> = LazyLock::new(|| pattern(r"[a-z][A-Z]|[A-Z]{2,}[a-z]"));
static DOTTED: LazyLock<Regex> = LazyLock::new(|| pattern(r"[A-Za-z_]\.[A-Za-z_]"));
static BACKTICKS: LazyLock<Regex> = LazyLock::new(|| pattern(r"`([^`\n]{1,64})`"));
static NEGATION: LazyLock<Regex> = LazyLock::new(|| {
    pattern(r"(?i)^(?:not|no|nor|never|cannot|without|none|neither|[\p{L}\p{N}_]+n['’]t)$")
});
const DISCOURSE: &str = "(?:well|oh|so|yeah|yes|yep|okay|ok|um|uh|hmm|ah|anyway|actually|hey|wow|\
right|alright|like|basically|honestly|also|sure|great|cool|nice)";
static LEADING: LazyLock<Regex> = LazyLock::new(|| {
    pattern(&format!(
        r"(?i)^(?:{DISCOURSE}(?:\s+{DISCOURSE})*\s*(?:[,!…—–\-]+|\.\.\.)\s*)+"
    ))
});
/// A word boundary on either side, as Python's `\b` (whose word characters are
/// letters, numbers and `_`), consumed rather than asserted: only whether it
/// matches is asked.
static DECISION: LazyLock<Regex> = LazyLock::new(|| {
    pattern(concat!(
        r"(?i)(?:^|[^\p{L}\p{N}_])(?:decided|decide to|we['’]ll use|we['’]ll go with|will use|",
        r"going with|go with|chose|chosen|let['’]s|switched to|switching to|agreed|settled on|",
        r"opted for|picked)(?:[^\p{L}\p{N}_]|$)",
    ))
});
static LETTER: LazyLock<Regex> = LazyLock::new(|| pattern(r"^\p{L}$"));
static TITLE: LazyLock<Regex> = LazyLock::new(|| pattern(r"^\p{Lt}$"));

const TERMINAL: &[char] = &['.', '!', '?', '…', '。', '！', '？'];
const CLOSING: &[char] = &['"', '\'', ')', ']', '”', '’'];
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "vs", "cf", "approx", "incl", "etc", "mr", "mrs", "ms", "dr", "prof", "st", "jr",
    "sr", "no", "fig", "eq", "al", "a.m", "p.m", "u.s",
];
const STOP_ABBREVIATIONS: &[&str] = &["e.g", "i.e", "etc", "vs", "cf", "a.m", "p.m"];
const FILLERS: &[&str] = &[
    "wow",
    "thanks",
    "thank",
    "great",
    "cool",
    "nice",
    "awesome",
    "ok",
    "okay",
    "sure",
    "yeah",
    "yes",
    "yep",
    "yup",
    "nope",
    "lol",
    "haha",
    "hahaha",
    "hi",
    "hello",
    "hey",
    "bye",
    "goodbye",
    "oh",
    "ah",
    "well",
    "hmm",
    "um",
    "uh",
    "really",
    "totally",
    "amazing",
    "perfect",
    "good",
    "sounds",
    "sound",
    "love",
    "glad",
    "fun",
    "interesting",
    "right",
    "indeed",
    "absolutely",
    "exactly",
    "definitely",
    "agree",
    "true",
    "welcome",
    "happy",
    "wonderful",
    "fantastic",
    "incredible",
    "sweet",
    "lovely",
    "hear",
    "appreciate",
    "much",
    "lot",
    "congrats",
    "congratulations",
    "night",
    "morning",
    "see",
    "later",
    "soon",
    "care",
    "cheers",
    "gotcha",
    "got",
    "alright",
    "fine",
    "sharing",
    "share",
    "luck",
    "wish",
    "wishing",
    "bet",
    "omg",
    "impressive",
    "super",
    "excellent",
    "basically",
    "honestly",
    "actually",
    "anyway",
    "like",
];

fn is_letter(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    let mut buffer = [0; 4];
    LETTER.is_match(c.encode_utf8(&mut buffer))
}

fn is_alnum(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    is_letter(c) || c.is_numeric()
}

fn is_title(c: char) -> bool {
    let mut buffer = [0; 4];
    !c.is_ascii() && TITLE.is_match(c.encode_utf8(&mut buffer))
}

/// Python's `str.isupper`: a cased character, and none lower or title case.
fn is_upper(text: &str) -> bool {
    let mut cased = false;
    for c in text.chars() {
        if c.is_lowercase() || is_title(c) {
            return false;
        }
        cased |= c.is_uppercase();
    }
    cased
}

fn capitalized(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// The first `n` characters of `text`.
fn first_chars(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// A word without its possessive "'s" (the word itself when that leaves nothing).
fn surface(word: &str) -> &str {
    match POSSESSIVE.find(word) {
        Some(m) if m.start() > 0 => &word[..m.start()],
        _ => word,
    }
}

fn is_stop(lower: &str) -> bool {
    if DIGIT.is_match(lower) {
        return false;
    }
    if STOP_ABBREVIATIONS.contains(&lower) {
        return true;
    }
    let mut any = false;
    for_each_token(lower, |_| {
        any = true;
        ControlFlow::Break(())
    });
    !any
}

fn identifier(word: &str) -> bool {
    if word.trim_matches('_').contains('_') || CAMEL.is_match(word) {
        return true;
    }
    if ABBREVIATIONS.contains(&word.to_lowercase().as_str()) {
        return false;
    }
    DOTTED.is_match(word)
}

fn acronym(word: &str) -> bool {
    let letters: Vec<char> = word.chars().filter(|&c| is_letter(c)).collect();
    letters.len() >= 2 && letters.iter().all(|c| c.is_uppercase())
}

fn trim(sentence: &str) -> String {
    let trimmed = match LEADING.find(sentence) {
        Some(m) => &sentence[m.end()..],
        None => sentence,
    };
    if trimmed.is_empty() {
        return sentence.to_string();
    }
    if trimmed.len() == sentence.len() {
        return trimmed.to_string();
    }
    let first = trimmed.chars().next().expect("not empty");
    let mut upper = first.to_uppercase();
    if first.is_lowercase() && upper.len() == 1 {
        let mut out = String::with_capacity(trimmed.len() + 2);
        out.push(upper.next().expect("one character"));
        out.push_str(&trimmed[first.len_utf8()..]);
        return out;
    }
    trimmed.to_string()
}

/// The sentences of one cleaned text (see `aircher_mem.longterm.compress.sentences`).
pub fn sentences(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.split(['\n', '\r', '\u{2028}', '\u{2029}']) {
        let line: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut start = 0;
        for m in BOUNDARY.find_iter(&line) {
            if m.as_str().trim() == "." {
                let before = line[start..m.start()].split_whitespace().next_back();
                let last = before
                    .map(|b| {
                        b.to_lowercase()
                            .trim_start_matches(['(', '"', '\''])
                            .to_string()
                    })
                    .unwrap_or_default();
                let after = first_chars(&line[m.end()..], 1);
                if ABBREVIATIONS.contains(&last.as_str()) && !(last == "etc" && is_upper(after)) {
                    continue;
                }
                let mut letters = last.chars();
                if let (Some(c), None) = (letters.next(), letters.next()) {
                    if is_letter(c) && before.is_some_and(is_upper) {
                        continue; // an initial: "J. Smith"
                    }
                }
            }
            let piece = line[start..m.end()].trim();
            if !piece.is_empty() {
                out.push(piece.to_string());
            }
            start = m.end();
        }
        let piece = line[start..].trim();
        if !piece.is_empty() {
            out.push(piece.to_string());
        }
    }
    out.retain(|s| s.chars().any(is_alnum));
    out
}

/// The words of a cleaned text that are not stop words, lowercased, in order.
pub fn content_words(text: &str) -> Vec<String> {
    WORD.find_iter(text)
        .map(|m| surface(m.as_str()).to_lowercase())
        .filter(|lower| !is_stop(lower))
        .collect()
}

#[derive(Debug, Clone)]
struct Word {
    /// As written, possessive dropped.
    text: String,
    /// Shared by every occurrence of the word.
    lower: Arc<str>,
    entity: bool,
    numeric: bool,
    negation: bool,
    stop: bool,
    filler: bool,
}

/// What a word is wherever it stands: its lowercase, numeric, stop word, negation,
/// filler, shaped like code or an acronym.
#[derive(Clone)]
struct Class {
    lower: Arc<str>,
    numeric: bool,
    stop: bool,
    negation: bool,
    filler: bool,
    shaped: bool,
}

/// Words classified on this thread, at most `CLASSES` of them (then forgotten
/// all at once): a word is classified once, not at each use.
const CLASSES: usize = 65_536;

thread_local! {
    static CLASSIFIED: std::cell::RefCell<HashMap<String, Class>> =
        std::cell::RefCell::new(HashMap::default());
}

impl Class {
    /// `Class::of(word)`, from this thread's cache when it holds the word.
    fn cached(word: &str) -> Class {
        CLASSIFIED.with(|cache| {
            let mut cache = cache.borrow_mut();
            if let Some(class) = cache.get(word) {
                return class.clone();
            }
            let class = Class::of(word);
            if cache.len() >= CLASSES {
                cache.clear();
            }
            cache.insert(word.to_string(), class.clone());
            class
        })
    }

    fn of(word: &str) -> Class {
        let lower = word.to_lowercase();
        Class {
            numeric: DIGIT.is_match(word),
            stop: is_stop(&lower),
            negation: NEGATION.is_match(word),
            filler: FILLERS.contains(&lower.as_str()),
            shaped: identifier(word) || acronym(word),
            lower: lower.into(),
        }
    }
}

#[derive(Debug, Clone)]
struct Sentence {
    /// As written, whitespace collapsed.
    text: String,
    /// Leading discourse words dropped.
    trimmed: String,
    text_index: usize,
    words: Vec<Word>,
    small_talk: bool,
    question: bool,
    decision: bool,
    /// Its place among the analysis's sentences (`Vectors::of`).
    at: usize,
}

/// Each sentence's stemmed content-word tokens by id and count, sorted by id:
/// made only when a form ranks sentences or looks for open questions.
struct Vectors {
    vectors: Vec<Vec<(u32, u32)>>,
    /// How many token ids there are.
    tokens: usize,
}

impl Vectors {
    fn of(&self, sentence: &Sentence) -> &[(u32, u32)] {
        &self.vectors[sentence.at]
    }
}

/// The sentences of some texts, their words classified.
pub struct Analysis {
    sentences: Vec<Sentence>,
    vectors: OnceLock<Vectors>,
    /// The order of all the sentences by centrality (`ranked`), once asked.
    order: OnceLock<Vec<usize>>,
}

type Sentences<'a> = [&'a Sentence];

/// Analyzes cleaned texts (their term counts made when first needed).
pub fn analyze(texts: &[&str]) -> Analysis {
    struct Raw {
        index: usize,
        sentence: String,
        /// (word, at the sentence's start, in backticks)
        words: Vec<(String, bool, bool)>,
    }
    let mut raw: Vec<Raw> = Vec::new();
    let mut capitalized_inside: HashSet<String> = HashSet::default();
    for (index, text) in texts.iter().enumerate() {
        for sentence in sentences(text) {
            let code: HashSet<&str> = if sentence.contains('`') {
                BACKTICKS
                    .captures_iter(&sentence)
                    .flat_map(|c| {
                        let span = c.get(1).expect("a group").as_str();
                        WORD.find_iter(span).map(|m| surface(m.as_str()))
                    })
                    .collect()
            } else {
                HashSet::default()
            };
            let mut words = Vec::new();
            for (position, m) in WORD.find_iter(&sentence).enumerate() {
                let mut word = m.as_str();
                if word.contains(['\'', '’']) {
                    word = surface(word);
                }
                words.push((word.to_string(), position == 0, code.contains(word)));
                if position > 0 && capitalized(word) {
                    capitalized_inside.insert(word.to_string());
                }
            }
            raw.push(Raw {
                index,
                words,
                sentence,
            });
        }
    }
    let mut out = Vec::with_capacity(raw.len());
    for Raw {
        index,
        sentence,
        words,
    } in raw
    {
        let mut classified = Vec::with_capacity(words.len());
        for (word, initial, in_code) in words {
            let class = Class::cached(&word);
            let negation = class.negation && !(initial && &*class.lower == "no"); // "No, ..."
            let named = capitalized(&word) && (!initial || capitalized_inside.contains(&word));
            let entity = class.numeric
                || (!class.stop && !class.filler && (in_code || class.shaped || named));
            classified.push(Word {
                text: word,
                lower: class.lower,
                entity,
                numeric: class.numeric,
                negation,
                stop: class.stop,
                filler: class.filler,
            });
        }
        let small_talk = classified.iter().all(|w| (w.stop || w.filler) && !w.entity);
        let tail = sentence.trim_end_matches([' ', '"', '\'', ')', ']', '”', '’']);
        let question = tail.ends_with(['?', '？']);
        out.push(Sentence {
            at: out.len(),
            trimmed: trim(&sentence),
            decision: !question && DECISION.is_match(&sentence),
            text: sentence,
            text_index: index,
            words: classified,
            small_talk,
            question,
        });
    }
    Analysis {
        sentences: out,
        vectors: OnceLock::new(),
        order: OnceLock::new(),
    }
}

/// The term counts of `sentences`: the stemmed tokens of their words that are not
/// stop words.
fn vectors_of(sentences: &[Sentence]) -> Vectors {
    let mut ids: HashMap<String, u32> = HashMap::default();
    let mut vectors = Vec::with_capacity(sentences.len());
    for sentence in sentences {
        let content: Vec<&str> = sentence
            .words
            .iter()
            .filter(|w| !w.stop)
            .map(|w| &*w.lower)
            .collect();
        let mut counts: HashMap<u32, u32> = HashMap::default();
        for_each_token_with(&content.join(" "), true, |token| {
            let id = match ids.get(token) {
                Some(&id) => id,
                None => {
                    let id = ids.len() as u32;
                    ids.insert(token.to_string(), id);
                    id
                }
            };
            *counts.entry(id).or_default() += 1;
            ControlFlow::Continue(())
        });
        let mut vector: Vec<(u32, u32)> = counts.into_iter().collect();
        vector.sort_unstable();
        vectors.push(vector);
    }
    Vectors {
        vectors,
        tokens: ids.len(),
    }
}

/// Σ count² of a vector.
fn squared(vector: &[(u32, u32)]) -> u64 {
    vector
        .iter()
        .map(|&(_, c)| u64::from(c) * u64::from(c))
        .sum()
}

/// The dot product of two vectors sorted by id.
fn dot(a: &[(u32, u32)], b: &[(u32, u32)]) -> u64 {
    let (mut i, mut j, mut sum) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                sum += u64::from(a[i].1) * u64::from(b[j].1);
                i += 1;
                j += 1;
            }
        }
    }
    sum
}

/// Each sentence's centrality: the sum of its cosine similarities to the other
/// sentences that are not small talk (`dot / (norm_a * norm_b)`, 0 for an empty
/// vector, summed in order), plus 0.25 for each of: holds an entity, holds a
/// number, states a decision; plus 0.02 per content word up to 10; halved for a
/// question; 0 for small talk.
fn scores(candidates: &Sentences, vectors: &Vectors) -> Vec<f64> {
    let talking: Vec<usize> = (0..candidates.len())
        .filter(|&i| !candidates[i].small_talk)
        .collect();
    let norms: Vec<f64> = candidates
        .iter()
        .map(|s| (squared(vectors.of(s)) as f64).sqrt())
        .collect();
    let mut out = Vec::with_capacity(candidates.len());
    for (i, s) in candidates.iter().enumerate() {
        if s.small_talk {
            out.push(0.0);
            continue;
        }
        let mut centrality = 0.0;
        if talking.len() > 1 {
            for &j in &talking {
                if j == i || norms[i] == 0.0 || norms[j] == 0.0 {
                    continue;
                }
                let d = dot(vectors.of(s), vectors.of(candidates[j])) as f64;
                centrality += d / (norms[i] * norms[j]);
            }
        }
        let content = s.words.iter().filter(|w| !w.stop && !w.filler).count();
        let mut score = centrality + 0.02 * content.min(10) as f64;
        let flag = |b: bool| if b { 0.25 } else { 0.0 };
        score += flag(s.words.iter().any(|w| w.entity && !w.numeric));
        score += flag(s.words.iter().any(|w| w.numeric));
        score += flag(s.decision);
        out.push(if s.question { score / 2.0 } else { score });
    }
    out
}

/// The sentences that are not small talk among the first MAX_SENTENCES, best
/// first by `scores`; ties go to the earlier sentence.
fn ranked(candidates: &Sentences, vectors: &Vectors) -> Vec<usize> {
    let pool = &candidates[..candidates.len().min(MAX_SENTENCES)];
    let scores = scores(pool, vectors);
    let mut order: Vec<usize> = (0..pool.len()).filter(|&i| !pool[i].small_talk).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}

/// The `k` best sentences that are not small talk, in their original order.
fn central<'a>(candidates: &Sentences<'a>, k: usize, order: &[usize]) -> Vec<&'a Sentence> {
    let mut chosen: Vec<usize> = order.iter().take(k).copied().collect();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| candidates[i]).collect()
}

/// The `k` best sentences of `candidates` that are not small talk (among the first
/// MAX_SENTENCES), in their original order: all of them, unranked, when they are no
/// more than `k`; else the first `k` of `order()` (`ranked`'s).
fn chosen<'a>(
    candidates: &Sentences<'a>,
    k: usize,
    order: impl FnOnce() -> Vec<usize>,
) -> Vec<&'a Sentence> {
    let pool = &candidates[..candidates.len().min(MAX_SENTENCES)];
    let talking: Vec<&Sentence> = pool.iter().copied().filter(|s| !s.small_talk).collect();
    if talking.len() <= k {
        return talking;
    }
    central(candidates, k, &order())
}

fn join(chosen: &Sentences, punctuate: bool) -> String {
    let several = punctuate && chosen.len() > 1;
    let parts: Vec<String> = chosen
        .iter()
        .map(|s| {
            let p = &s.trimmed;
            if several && !p.ends_with(TERMINAL) && !p.ends_with(CLOSING) {
                format!("{p}.")
            } else {
                p.clone()
            }
        })
        .collect();
    parts.join(" ")
}

/// The key point of the sentences `group` of `analysis` (one text of `chars`
/// characters): never longer than the text.
fn key_point_of(analysis: &Analysis, group: &Sentences, chars: usize) -> String {
    let best = chosen(group, KEY_POINT_SENTENCES, || {
        ranked(group, analysis.vectors())
    });
    let out = join(&best, false);
    if char_count(&out) <= chars {
        out
    } else {
        first_chars(&out, chars).trim_end().to_string()
    }
}

/// The words that carry content, in order, first occurrence only (negations
/// repeat), of the sentences that are not small talk, leading discourse words
/// excluded.
fn key_words<'a>(analyzed: &Sentences<'a>, fillers: bool) -> Vec<&'a Word> {
    let mut out = Vec::new();
    let mut seen: HashSet<&str> = HashSet::default();
    for s in analyzed.iter().filter(|s| !s.small_talk) {
        let removed = char_count(&s.text) - char_count(&s.trimmed);
        let skipped = WORD.find_iter(first_chars(&s.text, removed)).count();
        for w in s.words.iter().skip(skipped) {
            if !(w.entity || w.negation || !(w.stop || (w.filler && !fillers))) {
                continue;
            }
            // negations repeat; other words count once
            if w.negation || seen.insert(&w.lower) {
                out.push(w);
            }
        }
    }
    out
}

fn compressed_of(analyzed: &Sentences, max_words: usize, fillers: bool) -> String {
    let mut words = key_words(analyzed, fillers);
    if words.len() > max_words {
        let mut counts: HashMap<&str, usize> = HashMap::default();
        for w in analyzed.iter().flat_map(|s| &s.words).filter(|w| !w.stop) {
            *counts.entry(&*w.lower).or_default() += 1;
        }
        let count = |w: &Word| counts.get(&*w.lower).copied().unwrap_or(0);
        let mut order: Vec<usize> = (0..words.len()).collect();
        order.sort_by_key(|&i| {
            (
                !(words[i].entity || words[i].negation),
                usize::MAX - count(words[i]),
                i,
            )
        });
        let keep: HashSet<usize> = order.into_iter().take(max_words).collect();
        words = words
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, w)| w)
            .collect();
    }
    let parts: Vec<&str> = words
        .iter()
        .map(|w| {
            if w.entity || w.negation {
                w.text.as_str()
            } else {
                &w.lower
            }
        })
        .collect();
    parts.join(" ")
}

/// Lowercased key terms, best first: entities that are not pure numbers, then the
/// other content words of 3 characters or more, then shorter words and numbers;
/// within each, most frequent first, then first seen.
fn terms(analyzed: &Sentences) -> Vec<String> {
    let mut counts: HashMap<&str, usize> = HashMap::default();
    // lower -> (rank group, first position); and the order first seen
    let mut first: HashMap<&str, (u8, usize)> = HashMap::default();
    let mut seen: Vec<&str> = Vec::new();
    let mut position = 0;
    for s in analyzed.iter().filter(|s| !s.small_talk) {
        for w in &s.words {
            position += 1;
            if w.negation || ((w.filler || w.stop) && !w.entity) {
                continue;
            }
            let term = &*w.lower;
            let group = if NUMERIC.is_match(term) {
                2
            } else if w.entity {
                0
            } else if char_count(term) > 2 {
                1
            } else {
                2
            };
            *counts.entry(term).or_default() += 1;
            match first.get_mut(term) {
                None => {
                    first.insert(term, (group, position));
                    seen.push(term);
                }
                Some(known) if group < known.0 => known.0 = group,
                Some(_) => {}
            }
        }
    }
    let mut keyed: Vec<((u8, usize, usize), &str)> = seen
        .into_iter()
        .map(|t| ((first[t].0, usize::MAX - counts[t], first[t].1), t))
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, t)| t.to_string()).collect()
}

/// The headline of the most central sentence, `best` (none: small talk only).
fn headline_of(best: Option<&Sentence>, max_words: usize) -> String {
    let Some(sentence) = best else {
        return String::new();
    };
    if max_words == 0 {
        return String::new();
    }
    let parts: Vec<&str> = sentence.trimmed.split_whitespace().collect();
    let mut cut = parts.len() > max_words;
    let mut out = parts[..parts.len().min(max_words)].join(" ");
    if char_count(&out) > HEADLINE_CHARS {
        cut = true;
        let head = first_chars(&out, HEADLINE_CHARS - 3);
        out = match head.rsplit_once(' ') {
            Some((before, _)) => before.to_string(),
            None => head.to_string(),
        };
    }
    if cut {
        out = out
            .trim_end_matches([' ', ',', ';', ':', '-', '—', '–'])
            .to_string()
            + "...";
    }
    out
}

/// At most `n` tags of the sentences whose `terms` these are.
fn tags_of(analyzed: &Sentences, terms: &[String], n: usize) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    let named: HashSet<&str> = analyzed
        .iter()
        .flat_map(|s| &s.words)
        .filter(|w| w.entity)
        .map(|w| &*w.lower)
        .collect();
    let entity_terms: Vec<&String> = terms
        .iter()
        .filter(|t| named.contains(t.as_str()) && !NUMERIC.is_match(t))
        .collect();
    let mut out: Vec<String> = entity_terms
        .iter()
        .take(n.saturating_sub(2).max(1))
        .map(|t| t.to_string())
        .collect();
    let rest: Vec<&String> = terms.iter().filter(|t| !out.contains(t)).collect();
    let room = n.saturating_sub(out.len());
    let common: Vec<String> = rest
        .iter()
        .filter(|t| !named.contains(t.as_str()))
        .take(room)
        .map(|t| t.to_string())
        .collect();
    out.extend(common);
    let room = n.saturating_sub(out.len());
    let more: Vec<String> = rest
        .iter()
        .filter(|t| !out.contains(t))
        .take(room)
        .map(|t| t.to_string())
        .collect();
    out.extend(more);
    out.truncate(n);
    out
}

fn entities_of(analyzed: &Sentences) -> Vec<String> {
    let mut seen: HashSet<&str> = HashSet::default();
    analyzed
        .iter()
        .flat_map(|s| &s.words)
        .filter(|w| w.entity && seen.insert(&w.lower))
        .map(|w| w.text.clone())
        .collect()
}

fn decisions_of(analyzed: &Sentences) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in analyzed.iter().filter(|s| s.decision) {
        if !out.contains(&s.trimmed) {
            out.push(s.trimmed.clone());
        }
    }
    out
}

/// The open questions: sentences ending in "?" with a content word that are in the
/// last text or share no content word (stemmed) with a later text.
fn questions_of(analysis: &Analysis) -> Vec<String> {
    let analyzed = &analysis.sentences;
    let Some(last) = analyzed.last().map(|s| s.text_index) else {
        return Vec::new();
    };
    if !analyzed.iter().any(|s| s.question) {
        return Vec::new(); // no question: no term counts needed
    }
    let vectors = analysis.vectors();
    let mut said_last = vec![0usize; vectors.tokens];
    for s in analyzed {
        for &(token, _) in vectors.of(s) {
            said_last[token as usize] = s.text_index;
        }
    }
    let mut out: Vec<String> = Vec::new();
    for s in analyzed
        .iter()
        .filter(|s| s.question && !vectors.of(s).is_empty())
    {
        let answered = s.text_index != last
            && vectors
                .of(s)
                .iter()
                .any(|&(t, _)| said_last[t as usize] > s.text_index);
        if !answered && !out.contains(&s.trimmed) {
            out.push(s.trimmed.clone());
        }
    }
    out
}

impl Analysis {
    fn all(&self) -> Vec<&Sentence> {
        self.sentences.iter().collect()
    }

    fn vectors(&self) -> &Vectors {
        self.vectors.get_or_init(|| vectors_of(&self.sentences))
    }

    /// `ranked` of all the sentences, made once.
    fn order(&self) -> Vec<usize> {
        self.order
            .get_or_init(|| ranked(&self.all(), self.vectors()))
            .clone()
    }

    /// The `sentences` most central sentences, joined (a "." added between them).
    pub fn summary(&self, sentences: usize) -> String {
        join(&chosen(&self.all(), sentences, || self.order()), true)
    }

    /// A key point of a text of `chars` characters: never longer.
    pub fn key_point(&self, chars: usize) -> String {
        key_point_of(self, &self.all(), chars)
    }

    pub fn compressed(&self, max_words: usize, fillers: bool) -> String {
        compressed_of(&self.all(), max_words, fillers)
    }

    pub fn terms(&self) -> Vec<String> {
        terms(&self.all())
    }

    pub fn headline(&self, max_words: usize) -> String {
        let best = chosen(&self.all(), 1, || self.order());
        headline_of(best.first().copied(), max_words)
    }

    pub fn tags(&self, n: usize) -> Vec<String> {
        let all = self.all();
        tags_of(&all, &terms(&all), n)
    }

    pub fn entities(&self) -> Vec<String> {
        entities_of(&self.all())
    }

    pub fn decisions(&self) -> Vec<String> {
        decisions_of(&self.all())
    }

    pub fn questions(&self) -> Vec<String> {
        questions_of(self)
    }
}

/// Levels 1-3 of one text: summary, compressed form, index form.
pub fn levels(text: &str, sentences: usize) -> (String, String, String) {
    let analysis = analyze(&[text]);
    let index = analysis
        .terms()
        .into_iter()
        .take(INDEX_TERMS)
        .collect::<Vec<_>>();
    (
        analysis.summary(sentences),
        analysis.compressed(COMPRESSED_WORDS, false),
        index.join("_"),
    )
}

/// [`levels`] of each text, on the thread pool, in order.
pub fn levels_of_many(texts: &[&str], sentences: usize) -> Vec<(String, String, String)> {
    use rayon::prelude::*;
    texts
        .par_iter()
        .map(|text| levels(text, sentences))
        .collect()
}

/// Everything an episode keeps of its texts, from one reading of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub headline: String,
    pub summary: String,
    pub compressed: String,
    pub index: String,
    pub key_points: Vec<String>,
    pub entities: Vec<String>,
    pub decisions: Vec<String>,
    pub questions: Vec<String>,
    pub tags: Vec<String>,
}

/// The digest of cleaned texts: headline, summary, the compressed form of the
/// summary's sentences, index form, each text's key point (the non-empty ones),
/// entities, decisions, open questions and tags.
pub fn digest(texts: &[&str], sentences: usize) -> Digest {
    let analysis = analyze(texts);
    let all = analysis.all();
    let best = chosen(&all, sentences, || analysis.order());
    let head = chosen(&all, 1, || analysis.order());
    let mut by_text: Vec<Vec<&Sentence>> = vec![Vec::new(); texts.len()];
    for s in &all {
        by_text[s.text_index].push(s);
    }
    let key_points = by_text
        .iter()
        .enumerate()
        .filter(|(_, group)| !group.is_empty())
        .map(|(i, group)| key_point_of(&analysis, group, char_count(texts[i])))
        .filter(|p| !p.is_empty())
        .collect();
    let terms = terms(&all);
    Digest {
        headline: headline_of(head.first().copied(), HEADLINE_WORDS),
        summary: join(&best, true),
        compressed: compressed_of(&best, COMPRESSED_WORDS, false),
        index: terms[..terms.len().min(INDEX_TERMS)].join("_"),
        key_points,
        entities: entities_of(&all),
        decisions: decisions_of(&all),
        questions: questions_of(&analysis),
        tags: tags_of(&all, &terms, TAGS),
    }
}

/// The digests of many episodes' cleaned texts, on the thread pool, in order.
pub fn digests(batches: &[Vec<&str>], sentences: usize) -> Vec<Digest> {
    use rayon::prelude::*;
    batches
        .par_iter()
        .map(|texts| digest(texts, sentences))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DB: &str =
        "The team decided to use PostgreSQL as the primary database because of its strong \
support for JSON operations and the team's existing expertise with it.";

    #[test]
    fn words_and_sentences() {
        assert_eq!(
            content_words("The team's DB is v3.5"),
            ["team", "db", "v3.5"]
        );
        assert_eq!(
            sentences("Dr. Smith met J. Doe at 3.5 p.m. today. Then? Yes!\nNext line"),
            [
                "Dr. Smith met J. Doe at 3.5 p.m. today.",
                "Then?",
                "Yes!",
                "Next line"
            ]
        );
        assert_eq!(sentences("... !!! \n  "), Vec::<String>::new());
    }

    #[test]
    fn levels_of_a_decision() {
        let (summary, compressed, index) = levels(DB, 3);
        assert_eq!(
            levels_of_many(&[DB, "", DB], 3),
            [levels(DB, 3), levels("", 3), levels(DB, 3)]
        );
        assert_eq!(summary, DB);
        assert_eq!(
            compressed,
            "team decided use PostgreSQL primary database strong support JSON operations existing expertise"
        );
        assert_eq!(index, "postgresql_json_team");
    }

    #[test]
    fn digest_of_a_conversation() {
        let texts = [
            "Well, hi there! How are you?",
            "We should pick a queue. Should we use Kafka or RabbitMQ for events?",
            "Let's go with RabbitMQ: the team knows it and v3.12 is stable.",
            "Thanks!",
        ];
        let made = digest(&texts, 2);
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let decision = "Let's go with RabbitMQ: the team knows it and v3.12 is stable.";
        let question = "Should we use Kafka or RabbitMQ for events?";
        assert_eq!(
            made,
            Digest {
                headline: decision.into(),
                summary: format!("{question} {decision}"),
                compressed: "use Kafka RabbitMQ events go team knows v3.12 stable".into(),
                index: "rabbitmq_kafka_v3.12".into(),
                key_points: strings(&[&format!("We should pick a queue. {question}"), decision]),
                entities: strings(&["Kafka", "RabbitMQ", "v3.12"]),
                decisions: strings(&[decision]),
                questions: Vec::new(),
                tags: strings(&["rabbitmq", "kafka", "v3.12", "pick", "queue"]),
            }
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256, failure_persistence: None, ..Default::default()
        })]

        /// Any text, any bounds: no panic, and no form longer than what it is
        /// made of bounds it (a key point never longer than its text).
        #[test]
        fn any_text_gives_every_form(
            texts in proptest::collection::vec(proptest::prelude::any::<String>(), 0..4),
            n in 0usize..40,
        ) {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let made = digest(&refs, n);
            proptest::prop_assert_eq!(&digests(&[refs.clone(), refs.clone()], n), &[made.clone(), made.clone()]);
            proptest::prop_assert!(made.key_points.len() <= texts.len());
            proptest::prop_assert!(made.key_points.iter().all(|p| !p.is_empty()));
            let analysis = analyze(&refs);
            for text in &texts {
                let one = analyze(&[text.as_str()]);
                proptest::prop_assert!(char_count(&one.key_point(char_count(text))) <= char_count(text));
                let _ = (one.compressed(n, n % 3 == 0), one.headline(n), one.tags(n));
            }
            proptest::prop_assert!(analysis.tags(n).len() <= n);
            proptest::prop_assert!(char_count(&analysis.headline(n)) <= HEADLINE_CHARS);
            let _ = (analysis.summary(n), analysis.questions(), analysis.decisions(), analysis.entities());
        }
    }

    #[test]
    fn never_panics_on_odd_text() {
        for text in [
            "",
            " ",
            "`",
            "``",
            "Σ.Σ",
            "İ. İ",
            "'s",
            "ǅ. x",
            "a\u{301}. B",
            "。！？",
            "…",
        ] {
            let _ = digest(&[text, text], 3);
            let _ = levels(text, 1);
            let _ = analyze(&[text]).compressed(0, true);
            let _ = analyze(&[text]).headline(0);
        }
    }
}
