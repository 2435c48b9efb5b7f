//! Prints where tree-sitter put ERROR and MISSING nodes in a file (the first 20):
//! `cargo run --example syntax_errors -- FILE...`

use _core::graph::{parse_tree, Language};

fn main() {
    for path in std::env::args().skip(1) {
        let source = std::fs::read(&path).expect("readable");
        let language = Language::from_path(std::path::Path::new(&path)).expect("a known language");
        let tree = parse_tree(language, &source).expect("parsed");
        let mut cursor = tree.walk();
        let mut shown = 0;
        'walk: loop {
            let node = cursor.node();
            if node.is_error() || node.is_missing() {
                let p = node.start_position();
                let text = String::from_utf8_lossy(&source[node.byte_range()]);
                let text: String = text.chars().take(80).collect();
                println!(
                    "{path}:{}:{} {} {:?}",
                    p.row + 1,
                    p.column + 1,
                    node.kind(),
                    text
                );
                shown += 1;
                if shown == 20 {
                    break;
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
        println!("{path}: has_error {}", tree.root_node().has_error());
    }
}
