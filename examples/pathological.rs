//! Times the extraction of hostile source files (deep nesting, long chains, huge
//! import lists), phase by phase: the parse alone, then the whole extraction.
//!
//! ```text
//! cargo run --release --example pathological [name-filter] [scale]
//! ```
//!
//! `scale` (default 1.0) multiplies each file's size: 0.1 is quick for profiling.

use std::time::Instant;

use _core::graph::{extract, parse_tree, Language};

#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
    format!("{}{middle}{}", open.repeat(depth), close.repeat(depth))
}

/// (name, language, source) of each hostile file at `scale`.
fn files(scale: f64) -> Vec<(&'static str, Language, String)> {
    let n = |base: usize| ((base as f64 * scale) as usize).max(1);
    let imports = (0..n(2_500))
        .map(|i| format!("a{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    vec![
        (
            "js-named-imports",
            Language::JavaScript,
            format!("import {{{imports}}} from \"./m\";\n"),
        ),
        (
            "ts-named-imports",
            Language::TypeScript,
            format!("import {{{imports}}} from \"./m\";\n"),
        ),
        (
            "py-nested-calls",
            Language::Python,
            nested("f(", "x", ")", n(60_000)) + "\n",
        ),
        (
            "py-attribute-chain",
            Language::Python,
            format!("a{}\n", ".b".repeat(n(200_000))),
        ),
        (
            "py-nested-lists",
            Language::Python,
            nested("[", "", "]", n(100_000)) + "\n",
        ),
        (
            "rs-nested-use",
            Language::Rust,
            format!("use a::{};\n", nested("b::{", "c", "}", n(250_000))),
        ),
        (
            "rs-nested-calls",
            Language::Rust,
            format!("fn m() {{ {}; }}\n", nested("f(", "x", ")", n(60_000))),
        ),
        (
            "js-nested-brackets",
            Language::JavaScript,
            nested("[", "", "]", n(100_000)) + "\n",
        ),
        (
            "js-nested-calls",
            Language::JavaScript,
            nested("f(", "x", ")", n(60_000)) + "\n",
        ),
        (
            "js-member-chain",
            Language::JavaScript,
            format!("a{}\n", ".b".repeat(n(200_000))),
        ),
        (
            "tsx-nested-calls",
            Language::Tsx,
            nested("f(", "x", ")", n(60_000)) + "\n",
        ),
        (
            "go-nested-calls",
            Language::Go,
            format!(
                "package p\nfunc m() {{ {} }}\n",
                nested("f(", "x", ")", n(60_000))
            ),
        ),
        (
            "java-nested-calls",
            Language::Java,
            format!(
                "class A {{ void m() {{ {}; }} }}\n",
                nested("f(", "x", ")", n(60_000))
            ),
        ),
        (
            "java-nested-blocks",
            Language::Java,
            format!(
                "class A {{ void m() {} }}\n",
                nested("{", "", "}", n(100_000))
            ),
        ),
        (
            "py-wide-chains",
            Language::Python,
            format!("a{}\n", ".b".repeat(120)).repeat(n(4_000)),
        ),
        (
            "js-wide-calls",
            Language::JavaScript,
            (nested("f(", "x", ")", 120) + ";\n").repeat(n(4_000)),
        ),
        (
            "js-named-imports-25k",
            Language::JavaScript,
            format!(
                "import {{{}}} from \"./m\";\n",
                (0..n(25_000))
                    .map(|i| format!("a{i}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (
            "py-many-defs",
            Language::Python,
            (0..n(20_000))
                .map(|i| format!("def f{i}():\n    g{i}()\n"))
                .collect(),
        ),
    ]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let filter = args.next().unwrap_or_default();
    let scale: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    for (name, language, source) in files(scale) {
        if !name.contains(&filter) {
            continue;
        }
        let start = Instant::now();
        let tree = parse_tree(language, source.as_bytes());
        let parse = start.elapsed();
        drop(tree);
        let start = Instant::now();
        let symbols = extract(language, source.as_bytes());
        let total = start.elapsed();
        println!(
            "{name:20} {:>8} bytes  parse {:>9.3?}  extract {:>9.3?}  defs {} refs {} imports {}",
            source.len(),
            parse,
            total,
            symbols.definitions.len(),
            symbols.references.len(),
            symbols.imports.len()
        );
    }
}
