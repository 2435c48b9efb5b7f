//! Property tests that run with `cargo test` (bounded: a few seconds each): hostile
//! input never panics the engine and never breaks its invariants.
//! - extraction, every language: random bytes, and random mutations of a small
//!   valid file (byte flips, inserted brackets, cut and repeated spans);
//! - graph files: random bytes and random corruptions of a valid file decode to a
//!   typed error or a good graph;
//! - the context window: random sequences of add / extend / remove / prune with
//!   random values keep `token_count` equal to the sum of the items' costs.

use std::sync::Arc;

use proptest::prelude::*;

use crate::context::{ContextItem, ContextItemType, ContextPolicy, ContextWindow};
use crate::graph::{extract, load, save, KnowledgeGraph, Language, Saved};
use crate::Error;

const SAMPLES: [(Language, &str); 17] = [
    (Language::Python, "import os\nfrom .m import a as b\nclass A(B):\n    def f(self, x: int) -> T:\n        return g(x).h\nX = 1\n"),
    (Language::Rust, "use a::{b, c::d as e};\nmod m;\nconst X: u8 = 1;\ntrait T: U {}\nimpl T for S { fn f(&self) { g(X); a::h(); } }\n"),
    (Language::JavaScript, "import {a, b as c} from './m';\nconst x = require('y');\nclass A extends B { f() { g(a); } }\nexport const h = () => 1;\n"),
    (Language::TypeScript, "import {A} from './a';\ninterface I extends J<T> { x: number }\nclass C extends D implements I { f(a: A): void { g(); } }\n"),
    (Language::Tsx, "import React from 'react';\nconst App = () => <div onClick={() => f(1)}>{x}</div>;\nfunction f(n: number) { return n; }\n"),
    (Language::Go, "package p\nimport (\n\t\"fmt\"\n\tu \"x/util\"\n)\nvar V = 1\ntype T struct { Base }\nfunc (t T) F() { fmt.Println(V); u.G() }\n"),
    (Language::Java, "package a;\nimport b.C;\nclass A extends B implements I { static int n; void f() { g(n); new C(); } }\n"),
    (Language::C, "#include \"a.h\"\n#include <b.h>\n#define N 1\nstatic int x = 0;\nstruct s { int y; };\ntypedef struct s s_t;\nint f(s_t *p) { g(x); p->h(N); return 0; }\n"),
    (Language::Cpp, "#include \"a.hpp\"\nnamespace n {\nclass A : public B<int> { int x; void f() { g(x); this->h(); } };\nvoid A::k() { n::g(); new A(); }\n}\n"),
    (Language::CSharp, "using A.B;\nusing M = C.D;\nnamespace N { class A : B, I<int> { int x; void F(T t) { G(x); this.H(); new C(); } } }\n"),
    (Language::Ruby, "require 'a'\nrequire_relative 'b'\nX = 1\nmodule M\n  class A < B\n    include C\n    def f(y)\n      z = g(y)\n      h + X\n    end\n  end\nend\n"),
    (Language::Php, "<?php\nnamespace A;\nuse B\\C;\nuse D\\{E, F as G};\nrequire __DIR__ . '/h.php';\nconst X = 1;\nclass A extends B implements I { use T; private $n; function f(C $c) { g($this->n); $c->h(); C::k(X); } }\n"),
    (Language::Lua, "local m = require(\"a.b\")\nX = 1\nlocal T = {}\nfunction T.f(y) m.g(y); h(X) end\nfunction T:k() self:f(1) end\n"),
    (Language::Bash, "source ./a.sh\n. \"$D/b.sh\"\nX=1\nf() { g \"$X\"; echo $(h 1); }\nfunction k { f; }\n"),
    (Language::Kotlin, "package p\nimport a.b.C\nimport d.e as f\nval X = 1\nclass A(val c: C) : B(), I { fun f(y: Int) { g(X); c.h(); this.k() } }\nobject O : I\n"),
    (Language::Swift, "import Foundation\nlet x = 1\nprotocol P: Q { func f() }\nclass A: B, P {\n  var c: C = C()\n  func f() { g(x); c.h(); self.k() }\n  var d: Int { e() }\n}\nextension A: R { func m() {} }\n"),
    (Language::Scala, "package p\nimport a.b.{C, D => E}\nobject O { val X = 1 }\ntrait T\nclass A(c: C) extends B with T { def f(y: Int) = { g(O.X); c.h(); this.k(); y max 2 } }\n"),
];

/// One edit of a source: (kind, position, length, byte).
fn mutate(source: &[u8], edits: &[(u8, usize, usize, u8)]) -> Vec<u8> {
    let mut out = source.to_vec();
    for &(kind, at, len, byte) in edits {
        let at = at % (out.len() + 1);
        let end = (at + len).min(out.len());
        match kind % 5 {
            0 if at < out.len() => out[at] = byte,
            1 => out.insert(at, b"({[<\"'`)}]>"[byte as usize % 11]),
            2 => {
                out.drain(at..end);
            }
            3 => {
                let span = out[at..end].to_vec();
                for _ in 0..(byte % 8) {
                    out.splice(at..at, span.iter().copied());
                }
            }
            _ => out.insert(at, byte),
        }
    }
    out
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn extraction_of_random_bytes_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        language in 0..SAMPLES.len(),
    ) {
        let symbols = extract(SAMPLES[language].0, &bytes);
        for d in &symbols.definitions {
            prop_assert!(d.line <= d.end_line);
        }
    }

    #[test]
    fn extraction_of_mutated_sources_never_panics(
        edits in proptest::collection::vec((any::<u8>(), any::<usize>(), 0usize..64, any::<u8>()), 1..12),
        language in 0..SAMPLES.len(),
    ) {
        let (language, sample) = SAMPLES[language];
        let source = mutate(sample.as_bytes(), &edits);
        let symbols = extract(language, &source);
        // What is found can be indexed: a graph of it links without panicking.
        let graph = KnowledgeGraph::from_files(vec![("a".to_string(), symbols)]);
        prop_assert_eq!(graph.file_count(), 1);
    }
}

/// A small valid graph file's bytes.
fn good_graph_file(dir: &std::path::Path) -> Vec<u8> {
    let files = SAMPLES
        .iter()
        .enumerate()
        .map(|(i, (l, src))| (format!("f{i}"), extract(*l, src.as_bytes())))
        .collect();
    let graph = KnowledgeGraph::from_files(files);
    let saved = Saved {
        root: "/repo".into(),
        graph: graph.saved(),
        skipped: vec![("x.py".into(), "binary (NUL byte)".into())],
        warnings: vec![],
    };
    let path = dir.join("good.bin");
    save(&path, &saved).unwrap();
    std::fs::read(&path).unwrap()
}

/// Loading `bytes` as a graph file: a typed error or a graph (never a panic).
fn load_bytes(dir: &std::path::Path, bytes: &[u8]) -> Result<(), TestCaseError> {
    let path = dir.join("case.bin");
    std::fs::write(&path, bytes).unwrap();
    match load(&path) {
        Ok(saved) => {
            // A file that decodes must also make a graph, or say why not.
            let _ = KnowledgeGraph::from_saved(saved.graph);
            Ok(())
        }
        Err(Error::Corrupt(_) | Error::FormatVersion { .. }) => Ok(()),
        Err(other) => Err(TestCaseError::fail(format!("unexpected error {other}"))),
    }
}

/// Rewrites the header's checksum so that a corruption reaches the decoder.
fn reseal(bytes: &mut [u8]) {
    use std::hash::BuildHasher;
    if bytes.len() >= 28 {
        let payload = bytes[28..].to_vec();
        let sum = foldhash::fast::FixedState::with_seed(0xA1C4_E7A0).hash_one(&payload);
        bytes[12..20].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes[20..28].copy_from_slice(&sum.to_le_bytes());
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn graph_files_of_random_bytes_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let dir = tempfile::tempdir().unwrap();
        let mut with_header = b"AIRGRAPH".to_vec();
        with_header.extend_from_slice(&crate::graph::FORMAT_VERSION.to_le_bytes());
        with_header.extend_from_slice(&[0; 16]);
        with_header.extend_from_slice(&bytes);
        reseal(&mut with_header);
        load_bytes(dir.path(), &bytes)?;
        load_bytes(dir.path(), &with_header)?;
    }

    #[test]
    fn corrupted_graph_files_give_a_typed_error_or_a_graph(
        edits in proptest::collection::vec((any::<u8>(), any::<usize>(), 0usize..64, any::<u8>()), 1..6),
        sealed in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let good = good_graph_file(dir.path());
        // Corrupt the payload only, then fix the checksum (when `sealed`) so that
        // the decoder sees the damage, not just the checksum test.
        let mut bytes = good[..28].to_vec();
        bytes.extend(mutate(&good[28..], &edits));
        if sealed {
            reseal(&mut bytes);
        }
        load_bytes(dir.path(), &bytes)?;
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add {
        id: u8,
        tokens: u64,
        timestamp: f64,
        relevance: f64,
        dep: Option<u8>,
        sticky: bool,
    },
    Extend(Vec<(u8, u64)>),
    Remove(u8),
    Prune(f64),
    MaybePrune(f64),
    Task(Option<u8>),
}

fn op() -> impl Strategy<Value = Op> {
    let tokens = prop_oneof![
        0u64..1000,
        Just(i64::MAX as u64),
        Just(u64::MAX),
        any::<u64>()
    ];
    let real = prop_oneof![
        -1e12f64..1e12,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
    ];
    prop_oneof![
        (
            any::<u8>(),
            tokens.clone(),
            real.clone(),
            real.clone(),
            proptest::option::of(any::<u8>()),
            any::<bool>()
        )
            .prop_map(|(id, tokens, timestamp, relevance, dep, sticky)| Op::Add {
                id,
                tokens,
                timestamp,
                relevance,
                dep,
                sticky
            }),
        proptest::collection::vec((any::<u8>(), tokens), 0..6).prop_map(Op::Extend),
        any::<u8>().prop_map(Op::Remove),
        real.clone().prop_map(Op::Prune),
        real.prop_map(Op::MaybePrune),
        proptest::option::of(0u8..4).prop_map(Op::Task),
    ]
}

fn item(
    id: u8,
    tokens: u64,
    timestamp: f64,
    relevance: f64,
    dep: Option<u8>,
    sticky: bool,
) -> Option<Arc<ContextItem>> {
    let token_cost = usize::try_from(tokens).ok()?;
    ContextItem {
        id: format!("i{id}"),
        content: "x".into(),
        item_type: ContextItemType::SystemPrompt,
        timestamp,
        relevance_score: relevance,
        token_cost,
        task_id: Some(format!("t{}", id % 4)),
        dependencies: dep.map(|d| format!("i{d}")).into_iter().collect(),
        sticky,
    }
    .validated()
    .ok()
    .map(Arc::new)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn window_operations_keep_the_token_count_exact(
        max_tokens in prop_oneof![1usize..5000, Just(i64::MAX as usize)],
        ops in proptest::collection::vec(op(), 1..40),
    ) {
        let mut w = ContextWindow::new(max_tokens, ContextPolicy::default()).unwrap();
        for op in ops {
            match op {
                Op::Add { id, tokens, timestamp, relevance, dep, sticky } => {
                    if let Some(it) = item(id, tokens, timestamp, relevance, dep, sticky) {
                        let _ = w.add(it);
                    }
                }
                Op::Extend(batch) => {
                    let items: Vec<_> = batch
                        .into_iter()
                        .filter_map(|(id, t)| item(id, t, 0.0, 1.0, None, false))
                        .collect();
                    let before = (w.len(), w.token_count());
                    if w.extend(items).is_err() {
                        prop_assert_eq!((w.len(), w.token_count()), before, "all or none");
                    }
                }
                Op::Remove(id) => {
                    let _ = w.remove(&format!("i{id}"));
                }
                Op::Prune(now) => {
                    let _ = w.prune(now);
                }
                Op::MaybePrune(now) => {
                    let _ = w.maybe_prune(now);
                }
                Op::Task(task) => w.set_current_task(task.map(|t| format!("t{t}"))),
            }
            let sum = w.items().iter().try_fold(0usize, |s, i| s.checked_add(i.token_cost));
            prop_assert_eq!(sum, Some(w.token_count()));
            prop_assert!(w.token_count() <= i64::MAX as usize);
            prop_assert_eq!(w.items().len(), w.len());
        }
    }
}
