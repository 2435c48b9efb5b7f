//! Token counts of a byte-pair encoding given as a tiktoken ranks file (one
//! `<base64 token> <rank>` line per token) and its pre-tokenizer pattern: the
//! number of tokens `tiktoken.Encoding.encode_ordinary` returns, without building
//! the tokens. The text is split into pieces by the pattern; a piece that is a
//! token counts one, any other is merged pair by pair, always the adjacent pair
//! whose bytes have the lowest rank (the leftmost of equals), until no pair is a
//! token. Loading the ranks takes a few milliseconds where tiktoken's encoder
//! takes a tenth of a second, which every process that counts tokens paid at its
//! first count.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::hash_table::Entry;
use hashbrown::HashTable;

use crate::error::{Error, Result};

type Rank = u32;

/// Pieces longer than this many bytes are merged with a heap (`O(n log n)`),
/// shorter ones by scanning (what is fastest for the short pieces of real text).
/// A long run of letters or symbols (minified code, base64) stays fast.
const SCAN_MAX: usize = 256;

/// A byte-pair encoding: its tokens' ranks and the pattern that splits text into
/// the pieces merged apart.
#[derive(Debug)]
pub struct Bpe {
    ranks: Ranks,
    pattern: fancy_regex::Regex,
}

/// The tokens' ranks by their bytes: every token's bytes back to back in one
/// buffer, and a table of token numbers hashed by those bytes (no allocation per
/// token: the ranks load in a few milliseconds).
#[derive(Debug)]
struct Ranks {
    bytes: Vec<u8>,
    /// Where each token's bytes end in `bytes`; they start where the one before ends.
    ends: Vec<u32>,
    ranks: Vec<Rank>,
    table: HashTable<u32>,
}

/// Token `i`'s bytes (a free function, so that the table can rehash while borrowed
/// apart from the buffer).
fn token<'a>(bytes: &'a [u8], ends: &[u32], i: u32) -> &'a [u8] {
    let i = i as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &bytes[start..ends[i] as usize]
}

fn hash(bytes: &[u8]) -> u64 {
    FixedState::default().hash_one(bytes)
}

impl Ranks {
    /// Token bytes decoded from base64 `text`, at `rank` (a token given twice keeps
    /// its last rank); false when `text` is not base64 or the buffer would pass
    /// 4 GiB.
    fn add(&mut self, text: &[u8], rank: Rank) -> bool {
        let start = self.bytes.len();
        if !base64_onto(text, &mut self.bytes) || u32::try_from(self.bytes.len()).is_err() {
            self.bytes.truncate(start);
            return false;
        }
        let (bytes, ends) = (&self.bytes, &self.ends);
        let added = &bytes[start..];
        let id = ends.len() as u32;
        match self.table.entry(
            hash(added),
            |&other| token(bytes, ends, other) == added,
            |&other| hash(token(bytes, ends, other)),
        ) {
            Entry::Occupied(found) => {
                self.ranks[*found.get() as usize] = rank;
                self.bytes.truncate(start);
            }
            Entry::Vacant(vacant) => {
                vacant.insert(id);
                self.ends.push(self.bytes.len() as u32);
                self.ranks.push(rank);
            }
        }
        true
    }

    fn get(&self, piece: &[u8]) -> Option<Rank> {
        self.table
            .find(hash(piece), |&i| token(&self.bytes, &self.ends, i) == piece)
            .map(|&i| self.ranks[i as usize])
    }
}

impl Bpe {
    /// The encoding of a tiktoken ranks file's bytes and its `pattern`. A line
    /// that is not `<base64> <rank>` is `Error::Corrupt` naming its number.
    pub fn new(ranks_file: &[u8], pattern: &str) -> Result<Bpe> {
        let tokens = ranks_file.len() / 12;
        let mut ranks = Ranks {
            bytes: Vec::with_capacity(ranks_file.len() / 2),
            ends: Vec::with_capacity(tokens),
            ranks: Vec::with_capacity(tokens),
            table: HashTable::with_capacity(tokens),
        };
        for (n, line) in ranks_file.split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let bad = || {
                Error::Corrupt(format!(
                    "ranks file line {}: not '<base64 token> <rank>'",
                    n + 1
                ))
            };
            let space = line.iter().position(|&b| b == b' ').ok_or_else(bad)?;
            let rank = decimal(&line[space + 1..]).ok_or_else(bad)?;
            if !ranks.add(&line[..space], rank) {
                return Err(bad());
            }
        }
        let pattern = fancy_regex::Regex::new(pattern).map_err(|e| Error::InvalidValue {
            field: "pattern",
            reason: format!("does not compile: {e}"),
        })?;
        Ok(Bpe { ranks, pattern })
    }

    /// How many tokens the encoding makes of `text` (special tokens' text counted
    /// as ordinary text).
    pub fn count(&self, text: &str) -> usize {
        let mut total = 0;
        let mut done = 0;
        for found in self.pattern.find_iter(text) {
            match found {
                Ok(piece) => {
                    total += self.count_piece(piece.as_str().as_bytes());
                    done = piece.end();
                }
                // The backtracking limit (which a tiktoken pattern does not reach):
                // the rest counted as pieces of whitespace-separated words, never a
                // hang or a panic.
                Err(_) => {
                    total += text[done..]
                        .split_inclusive(char::is_whitespace)
                        .map(|word| self.count_piece(word.as_bytes()))
                        .sum::<usize>();
                    break;
                }
            }
        }
        total
    }

    /// The tokens of one piece.
    fn count_piece(&self, piece: &[u8]) -> usize {
        if piece.is_empty() {
            return 0;
        }
        if piece.len() == 1 || self.ranks.get(piece).is_some() {
            return 1;
        }
        if piece.len() <= SCAN_MAX {
            self.merge_scanning(piece)
        } else {
            self.merge_with_heap(piece)
        }
    }

    fn rank(&self, bytes: &[u8]) -> Rank {
        self.ranks.get(bytes).unwrap_or(Rank::MAX)
    }

    /// The parts `piece` merges into, counted: `starts` holds where each part
    /// begins (and the piece's end), `pair[i]` the rank of parts `i` and `i + 1`
    /// joined; the lowest (leftmost of equals) is merged until none is a token.
    fn merge_scanning(&self, piece: &[u8]) -> usize {
        let mut starts: Vec<usize> = (0..=piece.len()).collect();
        let mut pair: Vec<Rank> = (0..piece.len() - 1)
            .map(|i| self.rank(&piece[i..i + 2]))
            .collect();
        loop {
            let Some((i, _)) = pair
                .iter()
                .enumerate()
                .filter(|(_, &r)| r != Rank::MAX)
                .min_by_key(|&(i, &r)| (r, i))
            else {
                return starts.len() - 1;
            };
            starts.remove(i + 1);
            pair.remove(i);
            if i + 2 < starts.len() {
                pair[i] = self.rank(&piece[starts[i]..starts[i + 2]]);
            }
            if i > 0 {
                pair[i - 1] = self.rank(&piece[starts[i - 1]..starts[i + 1]]);
            }
        }
    }

    /// [`Bpe::merge_scanning`] in `O(n log n)`: the parts are a linked list, the
    /// pairs a heap ordered by (rank, start), entries made stale by a merge skipped
    /// when they come up.
    fn merge_with_heap(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        // Part `i` starts at byte `i` while alive; `next[i]` is the next part's start.
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        let mut parts = n;
        let mut heap: BinaryHeap<Reverse<(Rank, usize, usize)>> = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            let r = self.rank(&piece[i..i + 2]);
            if r != Rank::MAX {
                heap.push(Reverse((r, i, i + 2)));
            }
        }
        while let Some(Reverse((r, i, end))) = heap.pop() {
            // Stale: part `i` merged away, or its pair no longer ends at `end`.
            let j = next.get(i).copied().unwrap_or(n);
            if !alive[i] || j >= n || next[j] != end {
                continue;
            }
            debug_assert_eq!(self.rank(&piece[i..end]), r);
            alive[j] = false;
            next[i] = end;
            if end < n {
                prev[end] = i;
            }
            parts -= 1;
            if end < n {
                let after = next[end];
                let r = self.rank(&piece[i..after]);
                if r != Rank::MAX {
                    heap.push(Reverse((r, i, after)));
                }
            }
            let p = prev[i];
            if p != usize::MAX {
                let r = self.rank(&piece[p..end]);
                if r != Rank::MAX {
                    heap.push(Reverse((r, p, end)));
                }
            }
        }
        parts
    }
}

/// The SHA-256 of `data` in lowercase hex (the digest a ranks file is published
/// with), on the CPU's SHA instructions where it has them.
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;

    Sha256::digest(data)
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// The rank written in decimal digits (a carriage return after them allowed);
/// None when it is not that or passes `Rank::MAX`.
fn decimal(text: &[u8]) -> Option<Rank> {
    let digits = text.strip_suffix(b"\r").unwrap_or(text);
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0 as Rank, |n, &c| {
        c.is_ascii_digit()
            .then_some(())
            .and_then(|()| n.checked_mul(10)?.checked_add(Rank::from(c - b'0')))
    })
}

/// Standard base64 (with `=` padding) decoded onto the end of `out`; false, and
/// `out` as it was, when it is not.
fn base64_onto(text: &[u8], out: &mut Vec<u8>) -> bool {
    /// Each byte's 6 bits, 255 for a byte that is not a base64 digit.
    const VALUES: [u8; 256] = {
        let mut values = [255u8; 256];
        let digits = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut i = 0;
        while i < 64 {
            values[digits[i] as usize] = i as u8;
            i += 1;
        }
        values
    };
    fn value(c: u8) -> Option<u32> {
        let v = VALUES[c as usize];
        (v != 255).then_some(v as u32)
    }
    fn decode(text: &[u8], out: &mut Vec<u8>) -> Option<()> {
        if text.is_empty() || !text.len().is_multiple_of(4) {
            return None;
        }
        let padding = text.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 {
            return None;
        }
        let start = out.len();
        for chunk in text.chunks_exact(4) {
            let mut bits = 0u32;
            let mut valid = 0;
            for &c in chunk {
                bits <<= 6;
                if c != b'=' {
                    bits |= value(c)?;
                    valid += 1;
                }
            }
            let bytes = bits.to_be_bytes();
            match valid {
                4 => out.extend_from_slice(&bytes[1..4]),
                3 => out.extend_from_slice(&bytes[1..3]),
                2 => out.push(bytes[1]),
                _ => return None,
            }
        }
        (out.len() - start == text.len() / 4 * 3 - padding).then_some(())
    }
    let start = out.len();
    let decoded = decode(text, out).is_some();
    if !decoded {
        out.truncate(start);
    }
    decoded
}

/// Standard base64 (with `=` padding) decoded; None when it is not.
#[cfg(test)]
fn base64(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    base64_onto(text, &mut out).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy encoding: the bytes, then "ab", "bc", "abc", "aa" in that order.
    fn toy() -> Bpe {
        let mut file = String::new();
        let mut rank = 0;
        for b in 0u8..=255 {
            file += &format!("{} {rank}\n", encode64(&[b]));
            rank += 1;
        }
        for token in ["ab", "bc", "abc", "aa"] {
            file += &format!("{} {rank}\n", encode64(token.as_bytes()));
            rank += 1;
        }
        Bpe::new(file.as_bytes(), r"\S+|\s+").unwrap()
    }

    fn encode64(bytes: &[u8]) -> String {
        const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for k in 0..4 {
                if k <= chunk.len() {
                    out.push(ABC[(n >> (18 - 6 * k) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    #[test]
    fn merges_the_lowest_ranked_pair_first() {
        let bpe = toy();
        assert_eq!(bpe.count("abc"), 1); // a token
        assert_eq!(bpe.count("abcx"), 2); // ab, then abc; x
        assert_eq!(bpe.count("aab"), 2); // ab (rank 256) before aa (259): a, ab
        assert_eq!(bpe.count("aaaa"), 2); // aa, aa
        assert_eq!(bpe.count("ab bc"), 3);
        assert_eq!(bpe.count(""), 0);
    }

    #[test]
    fn the_heap_merges_as_the_scan_does() {
        let bpe = toy();
        let mut seed = 7u64;
        for len in [2, 3, 5, 17, 300, 1000] {
            for _ in 0..50 {
                let piece: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        b"abcx"[(seed >> 33) as usize % 4]
                    })
                    .collect();
                assert_eq!(
                    bpe.merge_with_heap(&piece),
                    bpe.merge_scanning(&piece),
                    "{piece:?}"
                );
            }
        }
    }

    #[test]
    fn sha256_hex_gives_the_published_digests() {
        // FIPS 180-2's examples
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(&vec![b'a'; 1_000_000]),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn base64_round_trips_and_refuses_what_is_not() {
        for bytes in [&b""[..], b"a", b"ab", b"abc", b"abcd", b"\xff\x00\x10"] {
            if bytes.is_empty() {
                continue;
            }
            assert_eq!(base64(encode64(bytes).as_bytes()).as_deref(), Some(bytes));
        }
        for bad in ["", "a", "ab=c", "====", "a===", "ab!d"] {
            assert_eq!(base64(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn a_malformed_ranks_file_names_its_line() {
        let err = Bpe::new(b"YQ== 0\nnot a line\n", r"\S+").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        assert!(Bpe::new(b"YQ== x\n", r"\S+").is_err());
        assert!(Bpe::new(b"YQ== 0\n", r"(").is_err());
        for rank in ["", "+1", "-1", "1 ", "4294967296", "1\r\r"] {
            let file = format!("YQ== {rank}\n");
            assert!(Bpe::new(file.as_bytes(), r"\S+").is_err(), "{rank:?}");
        }
        assert!(Bpe::new(b"YQ== 4294967295\r\nYg== 0\n", r"\S+").is_ok());
    }

    #[test]
    fn ranks_find_each_token_and_keep_the_last_rank_of_a_repeated_one() {
        // a, b, ab, then a again at another rank
        let bpe = Bpe::new(b"YQ== 0\nYg== 1\nYWI= 2\nYQ== 7\n", r"\S+").unwrap();
        assert_eq!(bpe.ranks.get(b"a"), Some(7));
        assert_eq!(bpe.ranks.get(b"b"), Some(1));
        assert_eq!(bpe.ranks.get(b"ab"), Some(2));
        assert_eq!(bpe.ranks.get(b"ba"), None);
        assert_eq!(bpe.ranks.get(b""), None);
        assert_eq!(bpe.ranks.ends, [1, 2, 4]); // the repeat's bytes are not kept twice
        assert_eq!(bpe.count("ab ba"), 3);
    }
}
