use super::imports::{flatten_use, scala_imports};
use super::language::DROPPED_TAGS;
use super::*;

/// Extracts each sample and compares its definitions, imports and references
/// (as `summary`, `imports` and `refs` print them) with the expected text.
fn check_samples(samples: Vec<(Language, &str)>, expected: Vec<(&str, &str, &str)>) {
    assert_eq!(samples.len(), expected.len());
    for ((l, src), (defs, imps, rs)) in samples.into_iter().zip(expected) {
        let s = extract(l, src.as_bytes());
        assert_eq!(format!("{:?}", summary(&s)), defs, "{l:?}");
        assert_eq!(format!("{:?}", imports(&s)), imps, "{l:?}");
        assert_eq!(format!("{:?}", refs(&s)), rs, "{l:?}");
        assert!(!s.syntax_errors, "{l:?}");
    }
}

fn summary(symbols: &FileSymbols) -> Vec<(DefKind, &str, u32)> {
    symbols
        .definitions
        .iter()
        .map(|d| (d.kind, &*d.name, d.line))
        .collect()
}

/// (kind, name, line, origin as a definition's name, "file" or "import <module>").
/// By line, kind and name (the file holds them by name).
fn refs(s: &FileSymbols) -> Vec<(RefKind, String, u32, String)> {
    assert!(s.references.is_sorted_by(|a, b| a.name <= b.name));
    let mut out: Vec<_> = s
        .references
        .iter()
        .map(|r| {
            let origin = match r.origin {
                Origin::File => "file".to_string(),
                Origin::Definition(d) => s.definitions[d as usize].name.to_string(),
                Origin::Import(i) => format!("import {}", s.imports[i as usize].module),
            };
            (r.kind, r.name.to_string(), r.line, origin)
        })
        .collect();
    out.sort_by(|a, b| (a.2, a.0 as u8, &a.1).cmp(&(b.2, b.0 as u8, &b.1)));
    out
}

fn imports(s: &FileSymbols) -> Vec<(String, Vec<String>, usize)> {
    s.imports
        .iter()
        .map(|i| (i.module.clone(), i.items.clone(), i.line))
        .collect()
}

const EXPECTED: [(&str, &str, &str); 6] = [
    (
        r#"[(Variable, "LIMIT", 4), (Class, "Repo", 6), (Function, "load", 7), (Function, "fetch", 10)]"#,
        r#"[("os", [], 1), ("a.b", [], 1), ("..pkg", ["x", "y"], 2), ("m", [], 3)]"#,
        r#"[(Item, "x", 2, "import ..pkg"), (Item, "y", 2, "import ..pkg"), (Inherit, "Base", 6, "Repo"), (Inherit, "Mixin", 6, "Repo"), (Type, "Key", 7, "load"), (Type, "int", 7, "load"), (Call, "fetch", 8, "load"), (Use, "LIMIT", 8, "load"), (Use, "x", 8, "load"), (Call, "helper", 11, "fetch"), (Call, "strip", 11, "fetch"), (Call, "main", 13, "file")]"#,
    ),
    (
        r#"[(Variable, "MAX", 4), (Class, "S", 5), (Class, "T", 6), (Function, "go", 9), (Function, "helper", 11)]"#,
        r#"[("crate::graph", ["extract"], 1), ("crate::graph::store", ["Edge"], 1), ("std", ["io"], 2), ("util", [], 3)]"#,
        r#"[(Item, "Edge", 1, "import crate::graph::store"), (Item, "extract", 1, "import crate::graph"), (Item, "io", 2, "import std"), (Inherit, "Base", 6, "T"), (Inherit, "Other", 6, "T"), (Type, "T", 7, "file"), (Type, "S", 8, "file"), (Call, "helper", 9, "go"), (Use, "MAX", 9, "go")]"#,
    ),
    (
        r#"[(Variable, "Count", 8), (Class, "T", 10), (Class, "I", 16), (Function, "Run", 21), (Function, "Helper", 23)]"#,
        r#"[("fmt", [], 4), ("example.com/m/util", [], 5)]"#,
        r#"[(Type, "T", 10, "T"), (Inherit, "Base", 11, "T"), (Inherit, "Other", 12, "T"), (Type, "string", 13, "T"), (Type, "I", 16, "I"), (Type, "Stringer", 17, "I"), (Inherit, "Reader", 18, "I"), (Call, "Helper", 21, "Run"), (Call, "Println", 21, "Run"), (Type, "T", 21, "Run"), (Use, "Count", 21, "Run"), (Type, "int", 23, "Helper")]"#,
    ),
    (
        r#"[(Class, "A", 4), (Variable, "count", 5), (Function, "run", 6), (Function, "helper", 7), (Class, "I", 9)]"#,
        r#"[("com.x.Foo", [], 2), ("java.util", [], 3)]"#,
        r#"[(Inherit, "Base", 4, "A"), (Inherit, "I", 4, "A"), (Inherit, "J", 4, "A"), (Call, "helper", 6, "run"), (Type, "Foo", 6, "run"), (Use, "count", 6, "run"), (Inherit, "K", 9, "I")]"#,
    ),
    (
        r#"[(Variable, "fs", 3), (Variable, "LIMIT", 4), (Function, "f", 5), (Class, "A", 6), (Function, "run", 7), (Function, "helper", 9)]"#,
        r#"[("./util.js", ["slug", "title"], 1), ("react", [], 2), ("fs", [], 3)]"#,
        r#"[(Item, "slug", 1, "import ./util.js"), (Item, "title", 1, "import ./util.js"), (Inherit, "Base", 6, "A"), (Call, "helper", 7, "run"), (Call, "slug", 7, "run"), (Use, "LIMIT", 7, "run"), (Use, "slug", 7, "run")]"#,
    ),
    (
        r#"[(Class, "I", 3), (Class, "A", 4), (Function, "run", 5), (Function, "helper", 7)]"#,
        r#"[("../repo", ["Repo"], 1), ("./types", [], 2)]"#,
        r#"[(Item, "Repo", 1, "import ../repo"), (Inherit, "J", 3, "I"), (Inherit, "Base", 4, "A"), (Inherit, "I", 4, "A"), (Call, "helper", 5, "run"), (Type, "Repo", 5, "run")]"#,
    ),
];

/// Every language: definitions, imports (module, items) and references with their
/// origin, checked by hand.
#[test]
fn definitions_imports_and_references_in_every_language() {
    let samples: Vec<(Language, &str)> = vec![
        (Language::Python, "import os, a.b as c\nfrom ..pkg import x, y as z\nfrom m import *\nLIMIT = 3\n\nclass Repo(Base, mod.Mixin):\n    def load(self, key: Key) -> int:\n        return fetch(key) + LIMIT + x\n\ndef fetch(key):\n    return helper(key).strip()\n\nmain()\n"),
        (Language::Rust, "use crate::graph::{extract, store::Edge as E};\nuse std::io;\nmod util;\nconst MAX: usize = 3;\nstruct S;\ntrait T: Base + Other<u8> {}\nimpl T for S {}\nimpl S {\n    fn go(&self) { helper(MAX); }\n}\nfn helper(n: usize) {}\n"),
        (Language::Go, "package p\n\nimport (\n\t\"fmt\"\n\tu \"example.com/m/util\"\n)\n\nvar Count = 1\n\ntype T struct {\n\tBase\n\t*Other\n\tname string\n}\n\ntype I interface {\n\tfmt.Stringer\n\tReader\n}\n\nfunc (t T) Run() { Helper(Count); fmt.Println() }\n\nfunc Helper(n int) {}\n"),
        (Language::Java, "package a;\nimport com.x.Foo;\nimport java.util.*;\nclass A extends Base implements I, J<String> {\n  static int count = 0;\n  void run() { helper(count); new Foo(); }\n  void helper(int n) {}\n}\ninterface I extends K {}\n"),
        (Language::JavaScript, "import { slug, title as t } from './util.js';\nimport React from 'react';\nconst fs = require('fs');\nexport const LIMIT = 3;\nconst f = () => 1;\nclass A extends Base {\n  run() { helper(LIMIT); slug(); }\n}\nfunction helper() {}\n"),
        (Language::TypeScript, "import { Repo } from \"../repo\";\nexport * from './types';\ninterface I extends J<number> { x: number }\nclass A extends Base implements I {\n  run(r: Repo): void { helper(); }\n}\nfunction helper(): void {}\n"),
    ];
    for ((l, src), (defs, imps, rs)) in samples.into_iter().zip(EXPECTED) {
        let s = extract(l, src.as_bytes());
        assert_eq!(format!("{:?}", summary(&s)), defs, "{l:?}");
        assert_eq!(format!("{:?}", imports(&s)), imps, "{l:?}");
        assert_eq!(format!("{:?}", refs(&s)), rs, "{l:?}");
        assert!(!s.syntax_errors, "{l:?}");
    }
    assert_eq!(
        flatten_use("a::{b, c::{d as e, self}, *}").0,
        [
            ("a".into(), Some("b".into())),
            ("a::c".into(), Some("d".into())),
            ("a::c".into(), None),
            ("a".into(), None)
        ]
    );
}

/// The languages added after the first six, as above: C (prototypes and
/// `extern` declarations are no definitions), C++ (out-of-class methods are
/// top-level, as Go's), C#, Ruby (a bare identifier is a call unless the file
/// has a local so named: `sum` here) and PHP.
#[test]
fn definitions_imports_and_references_in_c_cpp_csharp_ruby_php() {
    let samples: Vec<(Language, &str)> = vec![
        (Language::C, "#include \"util.h\"\n#include <stdio.h>\n#define LIMIT 3\nstatic int count = 0;\nextern int shared;\nstruct node { struct node *next; };\ntypedef struct node node_t;\nint run(node_t *n) { helper(count); n->visit(LIMIT); return 0; }\nstatic void helper(int x) {}\nint proto(int);\n"),
        (Language::Cpp, "#include \"shape.hpp\"\nnamespace geo {\nint limit = 3;\nclass Square : public Shape, private base::Named<int> {\n  int side;\n  double area() { return helper(side) + this->scale(); }\n  void run();\n};\nvoid Square::run() { geo::helper(limit); auto *s = new Square(); }\n}\n"),
        (Language::CSharp, "using System.Text;\nusing M = App.Models.User;\nnamespace App.Web {\n  class Shop : Base, IShop<int> {\n    int count = 0;\n    public void Run(User u) { Helper(count); this.Stop(); new Cart(); u.Save(); }\n    void Stop() { }\n  }\n  interface IShop<T> : IBase { }\n}\n"),
        (Language::Ruby, "require 'json'\nrequire_relative 'models/user'\nLIMIT = 3\nmodule Shop\n  class Cart < Base\n    include Comparable\n    def total(items)\n      sum = helper(items)\n      sum + LIMIT + validate\n    end\n    def self.build\n      Cart.new.total([])\n    end\n  end\nend\n"),
        (Language::Php, "<?php\nnamespace App\\Http;\nuse App\\Models\\User;\nuse App\\Support\\{Str, Arr as A};\nrequire_once __DIR__ . '/helpers.php';\nconst LIMIT = 3;\nclass Shop extends Base implements Named {\n    use Greets;\n    private $count = 0;\n    public function run(User $u) { helper($this->count); $this->stop(); User::find(LIMIT); }\n    function stop() {}\n}\n"),
    ];
    let expected: Vec<(&str, &str, &str)> = vec![
        (
            r#"[(Variable, "LIMIT", 3), (Variable, "count", 4), (Class, "node", 6), (Class, "node_t", 7), (Function, "run", 8), (Function, "helper", 9)]"#,
            r#"[("util.h", [], 1), ("<stdio.h>", [], 2)]"#,
            r#"[(Type, "node", 6, "node"), (Type, "node", 7, "node_t"), (Call, "helper", 8, "run"), (Call, "visit", 8, "run"), (Type, "node_t", 8, "run"), (Use, "LIMIT", 8, "run"), (Use, "count", 8, "run")]"#,
        ),
        (
            r#"[(Variable, "limit", 3), (Class, "Square", 4), (Variable, "side", 5), (Function, "area", 6), (Function, "run", 9)]"#,
            r#"[("shape.hpp", [], 1)]"#,
            r#"[(Inherit, "Named", 4, "Square"), (Inherit, "Shape", 4, "Square"), (Call, "helper", 6, "area"), (Call, "scale", 6, "area"), (Use, "side", 6, "area"), (Call, "helper", 9, "run"), (Type, "Square", 9, "run"), (Use, "limit", 9, "run")]"#,
        ),
        (
            r#"[(Class, "Shop", 4), (Variable, "count", 5), (Function, "Run", 6), (Function, "Stop", 7), (Class, "IShop", 9)]"#,
            r#"[("System.Text", [], 1), ("App.Models.User", [], 2)]"#,
            r#"[(Inherit, "Base", 4, "Shop"), (Inherit, "IShop", 4, "Shop"), (Call, "Helper", 6, "Run"), (Call, "Save", 6, "Run"), (Call, "Stop", 6, "Run"), (Type, "Cart", 6, "Run"), (Type, "User", 6, "Run"), (Use, "count", 6, "Run"), (Inherit, "IBase", 9, "IShop")]"#,
        ),
        (
            r#"[(Variable, "LIMIT", 3), (Class, "Shop", 4), (Class, "Cart", 5), (Function, "total", 7), (Function, "build", 11)]"#,
            r#"[("json", [], 1), ("./models/user", [], 2)]"#,
            r#"[(Call, "require", 1, "file"), (Call, "require_relative", 2, "file"), (Inherit, "Base", 5, "Cart"), (Call, "include", 6, "file"), (Inherit, "Comparable", 6, "Cart"), (Call, "helper", 8, "total"), (Call, "validate", 9, "total"), (Use, "LIMIT", 9, "total"), (Call, "Cart", 12, "build"), (Call, "new", 12, "build"), (Call, "total", 12, "build")]"#,
        ),
        (
            r#"[(Variable, "LIMIT", 6), (Class, "Shop", 7), (Variable, "count", 9), (Function, "run", 10), (Function, "stop", 11)]"#,
            r#"[("App\\Models\\User", [], 3), ("App\\Support", ["Str", "Arr"], 4), ("/helpers.php", [], 5)]"#,
            r#"[(Item, "Arr", 4, "import App\\Support"), (Item, "Str", 4, "import App\\Support"), (Inherit, "Base", 7, "Shop"), (Inherit, "Named", 7, "Shop"), (Inherit, "Greets", 8, "Shop"), (Call, "find", 10, "run"), (Call, "helper", 10, "run"), (Call, "stop", 10, "run"), (Type, "User", 10, "run"), (Use, "LIMIT", 10, "run"), (Use, "count", 10, "run")]"#,
        ),
    ];
    check_samples(samples, expected);
}

/// Kotlin (a constructor's `val` parameter is a field, `init` a function), Swift
/// (a computed property is a function; an extension is no class: its methods are
/// the file's, the type it extends a type reference) and Scala (objects are
/// classes; `import a.{b, c => d}` is one import per name), checked by hand;
/// calls on a declared or constructed receiver name its class.
#[test]
fn definitions_imports_and_references_in_kotlin_swift_scala() {
    let samples: Vec<(Language, &str)> = vec![
        (Language::Kotlin, "package com.shop.web\n\nimport com.shop.model.User\nimport com.shop.util.*\nimport kotlin.math.max as maximum\n\nconst val LIMIT = 3\n\ninterface Named {\n    fun name(): String\n}\n\nclass Cart(private val owner: User, seed: Int) : Base(1), Named {\n    var count: Int = 0\n    init { register(seed) }\n    override fun name(): String = owner.name\n    fun total(u: User?): Int {\n        val repo = Repo()\n        helper(LIMIT)\n        this.name()\n        u.save()\n        repo.find(count)\n        return maximum(count, 1)\n    }\n}\n\nobject Registry : Named {\n    override fun name() = \"r\"\n}\ntypealias Users = List<User>\nfun helper(n: Int) { println(n) }\n"),
        (Language::Swift, "import Foundation\n@testable import ShopCore\n\nlet limit = 3\n\nprotocol Named: AnyObject { func name() -> String }\n\nclass Cart: Base, Named {\n    var count: Int = 0\n    let owner: User\n    init(owner: User) { self.owner = owner; setUp() }\n    func name() -> String { return owner.name }\n    func total(u: User?) -> Int {\n        let repo = Repo()\n        helper(limit)\n        self.name()\n        u?.save()\n        repo.find(count)\n        return max(count, 1)\n    }\n    var label: String { format(count) }\n}\n\nstruct Point: Equatable { let x: Int }\nextension Cart: CustomStringConvertible {\n    func extra() { describe() }\n}\nfunc helper(_ n: Int) { print(n) }\nfinal class Model {\n    @Published var title: String = \"\"\n    @objc func tap() {}\n}\n"),
        (Language::Scala, "package com.shop.web\n\nimport com.shop.model.User\nimport com.shop.util._\nimport scala.collection.{mutable, immutable => im}\n\nobject Config {\n  val Limit = 3\n}\n\ntrait Named { def name(): String }\n\nclass Cart(owner: User) extends Base(1) with Named {\n  var count: Int = 0\n  def name(): String = owner.name\n  def total(u: User): Int = {\n    val repo = new Repo()\n    helper(Config.Limit)\n    this.name()\n    u.save()\n    repo.find(count)\n    count max 1\n  }\n}\n\ncase class Point(x: Int) extends Ordered[Point]\ntype Users = List[User]\ndef helper(n: Int): Unit = println(n)\n"),
    ];
    let expected: Vec<(&str, &str, &str)> = vec![
        (
            r#"[(Variable, "LIMIT", 7), (Class, "Named", 9), (Function, "name", 10), (Class, "Cart", 13), (Variable, "owner", 13), (Variable, "count", 14), (Function, "init", 15), (Function, "name", 16), (Function, "total", 17), (Class, "Registry", 27), (Function, "name", 28), (Class, "Users", 30), (Function, "helper", 31)]"#,
            r#"[("com.shop.model.User", [], 3), ("com.shop.util", [], 4), ("kotlin.math.max", [], 5)]"#,
            r#"[(Type, "String", 10, "name"), (Inherit, "Base", 13, "Cart"), (Inherit, "Named", 13, "Cart"), (Type, "Int", 13, "Cart"), (Type, "User", 13, "Cart"), (Call, "register", 15, "init"), (Type, "String", 16, "name"), (Use, "owner", 16, "name"), (Type, "Int", 17, "total"), (Type, "User", 17, "total"), (Call, "Repo", 18, "total"), (Call, "helper", 19, "total"), (Use, "LIMIT", 19, "total"), (Call, "name", 20, "total"), (Call, "save", 21, "total"), (Call, "find", 22, "total"), (Use, "count", 22, "total"), (Call, "max", 23, "total"), (Inherit, "Named", 27, "Registry"), (Type, "List", 30, "Users"), (Type, "User", 30, "Users"), (Call, "println", 31, "helper"), (Type, "Int", 31, "helper")]"#,
        ),
        (
            r#"[(Variable, "limit", 4), (Class, "Named", 6), (Function, "name", 6), (Class, "Cart", 8), (Variable, "count", 9), (Variable, "owner", 10), (Function, "init", 11), (Function, "name", 12), (Function, "total", 13), (Function, "label", 21), (Class, "Point", 24), (Variable, "x", 24), (Function, "extra", 26), (Function, "helper", 28), (Class, "Model", 29), (Variable, "title", 30), (Function, "tap", 31)]"#,
            r#"[("Foundation", [], 1), ("ShopCore", [], 2)]"#,
            r#"[(Inherit, "AnyObject", 6, "Named"), (Type, "String", 6, "name"), (Inherit, "Base", 8, "Cart"), (Inherit, "Named", 8, "Cart"), (Type, "Int", 9, "Cart"), (Type, "User", 10, "Cart"), (Call, "setUp", 11, "init"), (Type, "User", 11, "init"), (Use, "owner", 11, "init"), (Type, "String", 12, "name"), (Use, "owner", 12, "name"), (Type, "Int", 13, "total"), (Type, "User", 13, "total"), (Call, "Repo", 14, "total"), (Call, "helper", 15, "total"), (Use, "limit", 15, "total"), (Call, "name", 16, "total"), (Call, "save", 17, "total"), (Call, "find", 18, "total"), (Use, "count", 18, "total"), (Call, "max", 19, "total"), (Call, "format", 21, "label"), (Type, "String", 21, "label"), (Use, "count", 21, "label"), (Inherit, "Equatable", 24, "Point"), (Type, "Int", 24, "Point"), (Type, "Cart", 25, "file"), (Type, "CustomStringConvertible", 25, "file"), (Call, "describe", 26, "extra"), (Call, "print", 28, "helper"), (Type, "Int", 28, "helper"), (Type, "Published", 30, "Model"), (Type, "String", 30, "Model")]"#,
        ),
        (
            r#"[(Class, "Config", 7), (Variable, "Limit", 8), (Class, "Named", 11), (Function, "name", 11), (Class, "Cart", 13), (Variable, "owner", 13), (Variable, "count", 14), (Function, "name", 15), (Function, "total", 16), (Class, "Point", 26), (Variable, "x", 26), (Class, "Users", 27), (Function, "helper", 28)]"#,
            r#"[("com.shop.model.User", [], 3), ("com.shop.util", [], 4), ("scala.collection.mutable", [], 5), ("scala.collection.immutable", [], 5)]"#,
            r#"[(Type, "String", 11, "name"), (Inherit, "Base", 13, "Cart"), (Inherit, "Named", 13, "Cart"), (Type, "User", 13, "Cart"), (Type, "Int", 14, "Cart"), (Type, "String", 15, "name"), (Use, "owner", 15, "name"), (Type, "Int", 16, "total"), (Type, "User", 16, "total"), (Type, "Repo", 17, "total"), (Call, "helper", 18, "total"), (Use, "Limit", 18, "total"), (Call, "name", 19, "total"), (Call, "save", 20, "total"), (Call, "find", 21, "total"), (Use, "count", 21, "total"), (Call, "max", 22, "total"), (Inherit, "Ordered", 26, "Point"), (Type, "Int", 26, "Point"), (Type, "Point", 26, "Point"), (Type, "User", 27, "Users"), (Call, "println", 28, "helper"), (Type, "Int", 28, "helper"), (Type, "Unit", 28, "helper")]"#,
        ),
    ];
    check_samples(samples.clone(), expected);
    for (l, src) in samples {
        let s = extract(l, src.as_bytes());
        let receivers: Vec<(&str, Receiver)> = s
            .references
            .iter()
            .filter(|r| r.receiver != Receiver::Unknown)
            .map(|r| (&*r.name, r.receiver))
            .collect();
        let mut expected = vec![
            ("find", Receiver::Type(1)),
            ("name", Receiver::This),
            ("save", Receiver::Type(0)),
        ];
        if l == Language::Kotlin {
            // `maximum(...)` through `import kotlin.math.max as maximum`.
            expected.insert(1, ("max", Receiver::Named(2)));
        }
        assert_eq!(receivers, expected, "{l:?}");
        assert_eq!(s.types, ["User", "Repo"], "{l:?}");
    }
    let kotlin = extract(Language::Kotlin, b"import a.b.max as maximum\nimport a.C\n");
    assert_eq!(kotlin.imports[0].alias.as_deref(), Some("maximum"));
    assert_eq!(kotlin.imports[1].alias, None);
    // The package declared, Scala's chained clauses joined.
    let package = |l: Language, src: &str| extract(l, src.as_bytes()).package;
    assert_eq!(
        package(Language::Kotlin, "package com.shop.web\n\nfun f() {}\n").as_deref(),
        Some("com.shop.web")
    );
    assert_eq!(package(Language::Kotlin, "fun f() {}\n"), None);
    assert_eq!(
        package(Language::Scala, "package a.b\npackage c\n\nobject O\n").as_deref(),
        Some("a.b.c")
    );
    assert_eq!(package(Language::Java, "package a;\nclass A {}\n"), None);
}

/// Scala's import statements, as `scala_imports` reads them.
#[test]
fn scala_import_statements() {
    let modules = |statement: &str| -> Vec<String> {
        scala_imports(statement)
            .into_iter()
            .map(|(m, _)| m)
            .collect()
    };
    assert_eq!(modules("import a.b.C"), ["a.b.C"]);
    assert_eq!(modules("import a.b._"), ["a.b"]);
    assert_eq!(modules("import a.b.*"), ["a.b"]);
    assert_eq!(modules("import a.b.given"), ["a.b"]);
    assert_eq!(modules("import a.b.C as D"), ["a.b.C"]);
    assert_eq!(
        modules("import a.b.{C, D => E, given, _}"),
        ["a.b.C", "a.b.D"]
    );
    assert_eq!(modules("import a.b.{\n  C,\n  D\n}"), ["a.b.C", "a.b.D"]);
    assert_eq!(modules("import a.B, c.d.{E, F}"), ["a.B", "c.d.E", "c.d.F"]);
    assert_eq!(modules("import a.b.{_, given}"), ["a.b"]);
    assert!(modules("import").is_empty());
}

/// C's includes name no items: a name written as a macro is a use (linked to a
/// `#define` of the file or of what it includes), other names are not.
#[test]
fn c_names_written_as_macros_are_uses() {
    let source =
        "#include \"list.h\"\nint f(int n) { return n > LIST_MAX ? -EINVAL : X1 + x_max + A; }\n";
    let s = extract(Language::C, source.as_bytes());
    assert_eq!(
        format!("{:?}", refs(&s)),
        r#"[(Use, "EINVAL", 2, "f"), (Use, "LIST_MAX", 2, "f"), (Use, "X1", 2, "f")]"#
    );
    let python = extract(Language::Python, b"def f():\n    return LIST_MAX\n");
    assert!(python.references.is_empty());
    assert!(macro_like(b"O_RDONLY") && macro_like(b"X1"));
    assert!(
        !macro_like(b"A") && !macro_like(b"x_max") && !macro_like(b"__") && !macro_like(b"Foo")
    );
}

/// A file's symbols are held from its parse until the graph is linked: their
/// vectors take no more memory than their items, whatever their counts.
#[test]
fn extracted_vectors_hold_no_spare_capacity() {
    for n in 1..=20 {
        let (mut python, mut c) = (String::new(), String::new());
        for i in 0..n {
            python.push_str(&format!("import m{i}\nfrom p{i} import a{i}\n"));
            c.push_str(&format!("#include \"h{i}.h\"\n"));
        }
        for i in 0..n {
            python.push_str(&format!(
                "class C{i}(B):\n    def f{i}(self):\n        x = C{i}()\n        x.g()\n        a{i}()\n        m{i}.h(f{i}(1))\n"
            ));
            c.push_str(&format!(
                "struct s{i} {{ int v; }};\nint f{i}(struct s{i} *p) {{ return g(p->v) + MAX{i}; }}\n"
            ));
        }
        for (language, source) in [(Language::Python, &python), (Language::C, &c)] {
            let s = extract(language, source.as_bytes());
            assert!(!s.syntax_errors, "{language:?} {n}");
            assert!(s.definitions.len() >= 2 * n && s.references.len() >= 2 * n);
            assert_eq!(
                s.imports.len(),
                if language == Language::C { n } else { 2 * n }
            );
            assert_eq!(s.definitions.capacity(), s.definitions.len(), "{n}");
            assert_eq!(s.references.capacity(), s.references.len(), "{n}");
            assert_eq!(s.imports.capacity(), s.imports.len(), "{n}");
            assert_eq!(s.types.capacity(), s.types.len(), "{n}");
        }
    }
}

/// Lua (`local m = require "x"` binds `m`: `util.trim` is looked up in it) and
/// Bash (commands are calls; `source "$DIR/x.sh"` is the file `x.sh`).
#[test]
fn definitions_imports_and_references_in_lua_and_bash() {
    let samples: Vec<(Language, &str)> = vec![
        (Language::Lua, "local util = require(\"app.util\")\nrequire \"app.log\"\nlocal LIMIT = 3\nCount = 0\nlocal M = {}\nfunction M.run(x)\n  util.trim(x)\n  helper(LIMIT)\n  return x:upper()\nend\nlocal function helper(n) Count = Count + n end\nlocal f = function() end\nreturn M\n"),
        (Language::Bash, "#!/bin/bash\nsource ./lib/util.sh\n. \"$DIR/common.sh\"\nLIMIT=3\nrun() {\n  helper \"$LIMIT\"\n  echo done\n}\nfunction helper { trim \"$1\"; }\nrun\n"),
    ];
    let expected: Vec<(&str, &str, &str)> = vec![
        (
            r#"[(Variable, "util", 1), (Variable, "LIMIT", 3), (Variable, "Count", 4), (Variable, "M", 5), (Function, "run", 6), (Function, "helper", 11), (Function, "f", 12)]"#,
            r#"[("app.util", [], 1), ("app.log", [], 2)]"#,
            r#"[(Call, "require", 1, "file"), (Call, "require", 2, "file"), (Use, "M", 6, "run"), (Call, "trim", 7, "run"), (Use, "util", 7, "run"), (Call, "helper", 8, "run"), (Use, "LIMIT", 8, "run"), (Call, "upper", 9, "run"), (Use, "Count", 11, "helper")]"#,
        ),
        (
            r#"[(Variable, "LIMIT", 4), (Function, "run", 5), (Function, "helper", 9)]"#,
            r#"[("./lib/util.sh", [], 2), ("\"$DIR/common.sh\"", [], 3)]"#,
            r#"[(Call, "source", 2, "file"), (Call, ".", 3, "file"), (Call, "helper", 6, "run"), (Use, "LIMIT", 6, "run"), (Call, "echo", 7, "run"), (Call, "trim", 9, "helper"), (Call, "run", 10, "file")]"#,
        ),
    ];
    check_samples(samples, expected);
}

#[test]
fn deeply_nested_use_trees_are_cut_off_not_a_stack_overflow() {
    let nest = |depth: usize| format!("a::{}b{}", "{x::".repeat(depth), "}".repeat(depth));
    assert_eq!(flatten_use(&nest(200_000)), (vec![], true));
    let module = format!("a{}", "::x".repeat(MAX_USE_DEPTH));
    assert_eq!(
        flatten_use(&nest(MAX_USE_DEPTH)),
        (vec![(module, Some("b".into()))], false)
    );
    let source = format!("use {};\nfn f() {{}}\n", nest(50));
    let symbols = extract(Language::Rust, source.as_bytes());
    assert_eq!(symbols.definitions.len(), 1);
    assert_eq!(
        symbols.truncated,
        ["nesting deeper than 32 use-tree levels: truncated"]
    );
    let source = format!("use {};\nfn f() {{}}\n", nest(2_000));
    let symbols = extract(Language::Rust, source.as_bytes());
    assert_eq!(symbols.definitions.len(), 1);
    assert!(symbols.truncated.contains(&too_deep(MAX_TREE_DEPTH)));
}

fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
    format!("{}{middle}{}", open.repeat(depth), close.repeat(depth))
}

/// Hostile files of every language (deep nesting, long chains, huge import
/// lists): each is indexed (what lies within the limits is found) and says
/// whether it was cut. Without the limits they take minutes or overflow the
/// stack; the bound here is only that they finish (`examples/pathological.rs`
/// times them). Run on a thread with a small stack: nothing recurses over the
/// input.
/// The depth of the deepest node, by a walk of every node.
fn max_depth(tree: &tree_sitter::Tree) -> u32 {
    let mut cursor = tree.walk();
    let (mut depth, mut deepest) = (0u32, 0u32);
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            deepest = deepest.max(depth);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return deepest;
            }
            depth -= 1;
        }
    }
}

/// `deeper_than` skips nodes with too few descendants to reach past the limit:
/// it answers as a walk of every node does, at and around the limit, for
/// nesting alone, beside wide siblings, and after a deep node early in a file.
#[test]
fn deeper_than_agrees_with_a_full_walk() {
    let mut sources: Vec<(Language, String)> = Vec::new();
    for depth in [1, 40, 83, 84, 85, 86, 120, 127, 128, 129, 130, 300] {
        let deep = nested("f(", "x", ")", depth);
        sources.push((Language::Python, format!("{deep}\n")));
        sources.push((
            Language::C,
            format!("int a[] = {{1, 2, 3}};\nvoid g(void) {{ {deep}; h(1, 2, 3); }}\nint b;\n"),
        ));
        sources.push((
            Language::JavaScript,
            format!("{}\n{deep};\n", "let q = [1, [2, [3, [4]]]];\n".repeat(20)),
        ));
    }
    let mut checked = 0;
    for (language, source) in &sources {
        let tree = parse_tree(*language, source.as_bytes()).unwrap();
        let deepest = max_depth(&tree);
        for limit in deepest.saturating_sub(3)..deepest + 3 {
            assert_eq!(
                deeper_than(&tree, limit),
                deepest > limit,
                "{language:?} depth {deepest} limit {limit}"
            );
            checked += 1;
        }
        assert!(!deeper_than(&tree, deepest));
        assert!(deepest == 0 || deeper_than(&tree, deepest - 1));
    }
    assert_eq!(checked, sources.len() * 6);
}

#[test]
fn pathological_files_finish_and_say_what_was_cut() {
    let imports = (0..2_500)
        .map(|i| format!("a{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let deep = too_deep(MAX_TREE_DEPTH);
    let cases: Vec<(Language, String, usize, bool)> = vec![
        // (language, source, references at least, truncated)
        (
            Language::JavaScript,
            format!("import {{{imports}}} from \"./m\";\n"),
            2_500,
            false,
        ),
        (
            Language::TypeScript,
            format!("import {{{imports}}} from \"./m\";\n"),
            2_500,
            false,
        ),
        (Language::Python, nested("f(", "x", ")", 60_000), 50, true),
        (
            Language::Python,
            format!("a{}\n", ".b".repeat(200_000)),
            0,
            true,
        ),
        (Language::Python, nested("[", "", "]", 100_000), 0, true),
        (
            Language::Rust,
            format!("use a::{};\n", nested("b::{", "c", "}", 250_000)),
            0,
            true,
        ),
        (
            Language::Rust,
            format!("fn m() {{ {}; }}\n", nested("f(", "x", ")", 60_000)),
            50,
            true,
        ),
        (Language::JavaScript, nested("[", "", "]", 100_000), 0, true),
        (
            Language::JavaScript,
            nested("f(", "x", ")", 60_000),
            50,
            true,
        ),
        (
            Language::JavaScript,
            format!("a{}\n", ".b".repeat(200_000)),
            0,
            true,
        ),
        (Language::Tsx, nested("f(", "x", ")", 60_000), 50, true),
        (Language::TypeScript, nested("{", "", "}", 100_000), 0, true),
        (
            Language::Go,
            format!(
                "package p\nfunc m() {{ {} }}\n",
                nested("f(", "x", ")", 60_000)
            ),
            50,
            true,
        ),
        (
            Language::Java,
            format!(
                "class A {{ void m() {{ {}; }} }}\n",
                nested("f(", "x", ")", 60_000)
            ),
            50,
            true,
        ),
        (
            Language::Java,
            format!("class A {{ void m() {} }}\n", nested("{", "", "}", 100_000)),
            0,
            true,
        ),
        (
            Language::Python,
            (0..20_000)
                .map(|i| format!("def f{i}():\n    g{i}()\n"))
                .collect(),
            20_000,
            false,
        ),
        (
            Language::C,
            format!("int m() {{ {}; }}\n", nested("f(", "x", ")", 20_000)),
            50,
            true,
        ),
        (
            Language::C,
            format!("int m() {} \n", nested("{", "", "}", 30_000)),
            0,
            true,
        ),
        (
            Language::C,
            nested("#if X\n", "int x;\n", "#endif\n", 5_000),
            0,
            true,
        ),
        (
            Language::C,
            (0..20_000)
                .map(|i| format!("int f{i}(void) {{ return g{i}(); }}\n"))
                .collect(),
            20_000,
            false,
        ),
        (
            Language::Cpp,
            format!(
                "namespace n {{ void m() {{ {}; }} }}\n",
                nested("f(", "x", ")", 20_000)
            ),
            50,
            true,
        ),
        (
            Language::Cpp,
            nested("namespace a { ", "", "}", 20_000),
            0,
            true,
        ),
        (
            Language::CSharp,
            format!(
                "class A {{ void M() {{ {}; }} }}\n",
                nested("f(", "x", ")", 20_000)
            ),
            50,
            true,
        ),
        (
            Language::CSharp,
            nested("class A { ", "", "}", 20_000),
            0,
            true,
        ),
        (Language::Ruby, nested("f(", "x", ")", 20_000), 50, true),
        (Language::Ruby, nested("[", "", "]", 30_000), 0, true),
        (
            Language::Ruby,
            (0..20_000)
                .map(|i| format!("def f{i}\n  g{i}(1)\nend\n"))
                .collect(),
            20_000,
            false,
        ),
        (
            Language::Php,
            format!("<?php\n{};\n", nested("f(", "x", ")", 20_000)),
            50,
            true,
        ),
        (
            Language::Php,
            format!("<?php\n{}\n", nested("[", "", "]", 30_000)),
            0,
            true,
        ),
        (Language::Lua, nested("f(", "x", ")", 20_000), 50, true),
        (
            Language::Lua,
            format!("x = {}\n", nested("{", "", "}", 30_000)),
            0,
            true,
        ),
        (
            Language::Lua,
            (0..20_000)
                .map(|i| format!("function f{i}() g{i}() end\n"))
                .collect(),
            20_000,
            false,
        ),
        (Language::Bash, nested("$(f ", "x", ")", 30_000), 0, true),
        (
            Language::Cpp,
            (0..20_000)
                .map(|i| format!("void f{i}() {{ g{i}(); }}\n"))
                .collect(),
            20_000,
            false,
        ),
        (
            Language::CSharp,
            format!(
                "class A {{\n{}}}\n",
                (0..20_000)
                    .map(|i| format!("void F{i}() {{ G{i}(); }}\n"))
                    .collect::<String>()
            ),
            20_000,
            false,
        ),
        (
            Language::Php,
            format!(
                "<?php\n{}",
                (0..20_000)
                    .map(|i| format!("function f{i}() {{ g{i}(); }}\n"))
                    .collect::<String>()
            ),
            20_000,
            false,
        ),
        (
            Language::Bash,
            (0..20_000)
                .map(|i| format!("f{i}() {{ g{i}; }}\n"))
                .collect(),
            20_000,
            false,
        ),
        (
            Language::Bash,
            nested("f() { g; ", "true", "; }", 20_000),
            10,
            true,
        ),
        (
            Language::Kotlin,
            format!("fun m() {{ {} }}\n", nested("f(", "x", ")", 20_000)),
            50,
            true,
        ),
        (
            Language::Kotlin,
            format!("val x = {}\n", nested("listOf(", "", ")", 20_000)),
            50,
            true,
        ),
        (
            Language::Kotlin,
            nested("class A { ", "", "}\n", 20_000),
            0,
            true,
        ),
        (
            Language::Kotlin,
            format!("val x = a{}\n", ".b".repeat(100_000)),
            0,
            true,
        ),
        (
            Language::Kotlin,
            (0..20_000)
                .map(|i| format!("fun f{i}() {{ g{i}() }}\n"))
                .collect(),
            20_000,
            false,
        ),
        (
            Language::Swift,
            format!("func m() {{ {} }}\n", nested("f(", "x", ")", 20_000)),
            50,
            true,
        ),
        (
            Language::Swift,
            format!("let x = {}\n", nested("[", "", "]", 30_000)),
            0,
            true,
        ),
        (
            Language::Swift,
            nested("class A { ", "", "}\n", 20_000),
            0,
            true,
        ),
        (
            Language::Swift,
            (0..20_000)
                .map(|i| format!("func f{i}() {{ g{i}() }}\n"))
                .collect(),
            20_000,
            false,
        ),
        (
            Language::Scala,
            format!("def m = {}\n", nested("f(", "x", ")", 20_000)),
            50,
            true,
        ),
        (
            Language::Scala,
            nested("object A { ", "", "}\n", 20_000),
            0,
            true,
        ),
        (
            Language::Scala,
            format!("val x = a{}\n", ".b".repeat(100_000)),
            0,
            true,
        ),
        (
            Language::Scala,
            format!("import a.{{{imports}}}\n"),
            0,
            false,
        ),
        (
            Language::Scala,
            (0..20_000)
                .map(|i| format!("def f{i}() = g{i}()\n"))
                .collect(),
            20_000,
            false,
        ),
        (
            Language::Python,
            format!("import m\n{}", "m.f()\n".repeat(100_000)),
            1,
            false,
        ),
    ];
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            for (i, (language, source, references, cut)) in cases.into_iter().enumerate() {
                let s = extract(language, source.as_bytes());
                assert!(
                    s.references.len() >= references,
                    "case {i}: {}",
                    s.references.len()
                );
                assert_eq!(
                    s.truncated.contains(&deep),
                    cut,
                    "case {i}: {:?}",
                    s.truncated
                );
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Past its budget, the query stops, keeps what it found and says so.
#[test]
fn the_time_budget_cuts_extraction_off() {
    let source = "def f():\n    g()\n".repeat(50_000);
    let s = extract_within(
        Language::Python,
        source.as_bytes(),
        std::time::Duration::ZERO,
    );
    assert!(
        s.truncated.iter().any(|t| t.contains("budget")),
        "{:?}",
        s.truncated
    );
    let s = extract(Language::Python, source.as_bytes());
    assert!(s.truncated.is_empty());
    assert_eq!(s.definitions.len(), 50_000);
    // Every grammar's parse is given up past its budget (PHP's outside `<?php`
    // is one text token: no work to cut).
    let php = format!("<?php\n{source}");
    for language in Language::ALL {
        let source = if language == Language::Php {
            &php
        } else {
            &source
        };
        let s = extract_within(language, source.as_bytes(), std::time::Duration::ZERO);
        assert_eq!(s.truncated, [over_budget("parsing")], "{language:?}");
        assert!(s.definitions.is_empty() && s.syntax_errors, "{language:?}");
    }
}

/// One deadline covers every phase: a tree parsed in time but queried past the
/// deadline keeps what the query found first and says which phases ran out;
/// references past it are not resolved (the first 1,024 are), and random bytes
/// in Lua and Scala,
/// 500 KB of them, are parsed, queried and resolved within the budget.
#[test]
fn every_phase_stops_at_the_files_deadline() {
    let source = "def f():\n    g()\n".repeat(5_000);
    let tree = parse_tree(Language::Python, source.as_bytes()).unwrap();
    let past = std::time::Instant::now();
    let s = extract_tree(
        Language::Python,
        source.as_bytes(),
        &tree,
        &[],
        past,
        Matcher::Fastest,
    );
    assert_eq!(s.truncated.first(), Some(&over_budget("the query")));
    // What the query matched before its first look at the clock stays.
    assert!(s.definitions.len() < 5_000 && s.references.len() <= 1_024);
    let later = past + FILE_BUDGET;
    let s = extract_tree(
        Language::Python,
        source.as_bytes(),
        &tree,
        &[],
        later,
        Matcher::Fastest,
    );
    assert!(s.truncated.is_empty());
    assert_eq!((s.definitions.len(), s.references.len()), (5_000, 5_000));

    let found = || -> Vec<Found> {
        (0..3_000)
            .map(|i| Found {
                kind: RefKind::Call,
                name: format!("g{i}"),
                line: i + 1,
                byte: i * 10,
                receiver: None,
                bare: false,
            })
            .collect()
    };
    let (refs, _, cut) = resolve_origins(Language::Python, found(), &[], &[], &[], later);
    assert_eq!((refs.len(), cut), (3_000, false));
    let (refs, _, cut) = resolve_origins(Language::Python, found(), &[], &[], &[], past);
    assert_eq!((refs.len(), cut), (1_024, true));

    // Random bytes without NUL, were they not refused as binary first
    // (`scan::binary_reason`): within the budget, with a note if cut.
    let noise = crate::testing::noise(0x2545_f491_4f6c_dd1d, 500_000);
    for language in [Language::Lua, Language::Scala] {
        language.query(); // compiled once a process, outside any file's budget
        let start = std::time::Instant::now();
        let s = extract_within(language, &noise, std::time::Duration::from_secs(2));
        let took = start.elapsed();
        // Bounded by the budget, not a speed figure: a busy machine stretches
        // the wall clock the budget is counted in.
        assert!(
            took < std::time::Duration::from_secs(6),
            "{language:?}: {took:?}"
        );
        if took >= std::time::Duration::from_secs(2) {
            assert!(
                s.truncated.iter().any(|t| t.contains("budget")),
                "{language:?}: {:?}",
                s.truncated
            );
        }
    }
}

/// The patterns left out of a grammar's tags query are still in it (else a new
/// version of the crate changed them, and they would stay in unnoticed).
#[test]
fn dropped_tags_patterns_are_in_their_queries() {
    for (language, pattern) in DROPPED_TAGS {
        let tags = match language {
            Language::CSharp => tree_sitter_c_sharp::TAGS_QUERY,
            Language::Ruby => tree_sitter_ruby::TAGS_QUERY,
            Language::Php => tree_sitter_php::TAGS_QUERY,
            Language::Swift => tree_sitter_swift::TAGS_QUERY,
            _ => unreachable!("only these drop patterns"),
        };
        assert!(tags.contains(pattern), "{language:?}: {pattern}");
    }
}

#[test]
fn every_language_query_compiles() {
    for l in Language::ALL {
        let _ = l.query();
    }
}

/// TypeScript the grammar does not know (variance modifiers, `export type *`)
/// parses once blanked, with every byte at its place; look-alikes elsewhere
/// are left alone.
#[test]
fn typescript_the_grammar_lacks_parses_without_errors() {
    let source = "export interface A<out O = unknown, in I, in out T extends B> extends C<O> {\n  x: O;\n}\ntype F<in I, out O> = (i: I) => O;\nexport type * from \"./m\";\nexport function run(a: A<number, string, B>): void { helper(a); }\n";
    for language in [Language::TypeScript, Language::Tsx] {
        let s = extract(language, source.as_bytes());
        assert!(!s.syntax_errors, "{language:?}");
        assert_eq!(s.error_note, None);
        assert_eq!(
            format!("{:?}", summary(&s)),
            r#"[(Class, "A", 1), (Function, "run", 6)]"#
        );
        assert_eq!(
            &*s.definitions[0].signature,
            "interface A<out O = unknown, in I, in out T extends B> extends C<O> {"
        );
        assert_eq!(imports(&s), [("./m".to_string(), vec![], 5)]);
    }
    let patched = |s: &str| typescript_patched(s.as_bytes()).map(|p| String::from_utf8(p).unwrap());
    assert_eq!(
        patched("interface A<out O> {}").as_deref(),
        Some("interface A<    O> {}")
    );
    assert_eq!(
        patched("type B<in out T,>=T;").as_deref(),
        Some("type B<       T,>=T;")
    );
    assert_eq!(
        patched("export  type * as n from 'm';").as_deref(),
        Some("export       * as n from 'm';")
    );
    // Not a type parameter: no name after the word, a line break, or no `,`, `>`,
    // `=` or `extends` after the name; `export type {` and `exporter type *`.
    for same in [
        "f(a, out)",
        "x = a,\nout\nb",
        "for (const k in o) {}",
        "a < out b + c",
        "export type { A } from 'm';",
        "exporter type * 2",
        "let v = x < in_ ? 1 : 2",
    ] {
        assert_eq!(patched(same), None, "{same}");
    }
}

/// A syntax error's warning says which lines the parser skipped and whether
/// definitions there are missing; a file that lost nothing (a MISSING token, an
/// `extern "C" {` guard, stray punctuation) has none.
#[test]
fn syntax_errors_say_what_was_skipped() {
    let note = |l: Language, src: &str| {
        let s = extract(l, src.as_bytes());
        assert_eq!(s.syntax_errors, s.error_note.is_some());
        s.error_note
    };
    // A `)` the parser supplied: `broken` is indexed whole.
    let missing = "def ok():\n    pass\n\ndef broken(:\n    pass\n";
    assert_eq!(note(Language::Python, missing), None);
    assert_eq!(
        summary(&extract(Language::Python, missing.as_bytes())),
        [
            (DefKind::Function, "ok", 1),
            (DefKind::Function, "broken", 4)
        ]
    );
    assert_eq!(note(Language::Python, "x = 1\n"), None);
    // Stray punctuation the parser skipped names nothing.
    assert_eq!(
        note(Language::TypeScript, "let a = 1;\nlet b = (;\nlet c = 2;\n"),
        None
    );
    assert_eq!(
        note(
            Language::Java,
            "class A {\n  void m() {\n    int x = ;\n  }\n}\n"
        ),
        None
    );
    // tree-sitter-python fails on a line inside brackets indented less than the
    // block (valid Python): the names on lines 6 and 7 are lost.
    let dedent = "import os\n\nclass T:\n    def f(self):\n        def g():\n            (bar.\n        baz)\n        return g\n";
    assert_eq!(
        note(Language::Python, dedent).as_deref(),
        Some("syntax errors: lines 6-7 not indexed")
    );
    let garbage = "def ok():\n    pass\n\n)))\nfoo bar baz\ndef after():\n    pass\n";
    assert_eq!(
        note(Language::Python, garbage).as_deref(),
        Some("syntax errors: line 5 not indexed")
    );
    // A byte that is no character of a name: the name is cut there.
    let latin1 = extract(Language::Python, b"def caf\xe9():\n    pass\n");
    assert_eq!(
        latin1.error_note.as_deref(),
        Some("syntax errors: line 1 not indexed")
    );
    // C++ read as C: the template's head is lost, its body left alone.
    let template =
        "template <typename T> T twice(T x) { return x + x; }\nint g(void) { return 1; }\n";
    assert_eq!(
        note(Language::C, template).as_deref(),
        Some("syntax errors: line 1 not indexed (definitions there are missing or incomplete)")
    );
    // The standard guard: the C grammar wants an `#endif` it does not find (a
    // MISSING node): nothing is lost, there is no warning.
    let guard = "#ifndef A_H\n#define A_H\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\nint f(int x);\nint g(void) { return 1; }\n\n#ifdef __cplusplus\n}\n#endif\n#endif\n";
    for language in [Language::C, Language::Cpp] {
        assert!(parse_tree(language, guard.as_bytes())
            .unwrap()
            .root_node()
            .has_error());
        let s = extract(language, guard.as_bytes());
        assert_eq!(
            (s.syntax_errors, s.error_note.clone()),
            (false, None),
            "{language:?}"
        );
        assert_eq!(
            summary(&s),
            [(DefKind::Variable, "A_H", 2), (DefKind::Function, "g", 8)]
        );
    }
    // Ranges merge and are listed up to five.
    let broken: String = (0..8)
        .map(|i| format!("x{i} = 1\nfoo bar{i}\n\n"))
        .collect();
    assert_eq!(
        note(Language::Python, &broken).as_deref(),
        Some("syntax errors: lines 2, 5, 8, 11, 14, and 3 more not indexed")
    );
}

#[test]
fn broken_and_binary_input_does_not_panic() {
    let s = extract(
        Language::Python,
        b"def ok():\n    pass\n\ndef broken(:\nfoo bar\n",
    );
    assert!(s.syntax_errors);
    assert_eq!(&*s.definitions[0].name, "ok");
    let junk: Vec<u8> = (0..5000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for l in Language::ALL {
        let _ = extract(l, &junk);
    }
    let latin1 = extract(Language::Python, b"def caf\xe9():\n    pass\n");
    assert_eq!(latin1.definitions.len(), 1);
}

mod containers {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `Definition::containers` is the latest earlier definition that
        /// contains each, nested or overlapping, equal or not, in start order or
        /// not.
        #[test]
        fn containers_are_the_latest_that_contain(
            spans in proptest::collection::vec((0u32..40, 0u32..12, 0u8..3, any::<bool>()), 0..40),
            sort in any::<bool>(),
        ) {
            let mut defs: Vec<Definition> = spans
                .iter()
                .map(|&(start, len, name, function)| Definition {
                    kind: if function { DefKind::Function } else { DefKind::Class },
                    name: format!("n{name}").into(),
                    signature: "".into(),
                    line: 1,
                    end_line: 1,
                    start_byte: start,
                    end_byte: start + len,
                    owner: None,
                })
                .collect();
            if sort {
                defs.sort_by_key(|d| d.start_byte);
            }
            let slow: Vec<Option<usize>> = (0..defs.len())
                .map(|i| (0..i).rev().find(|&j| defs[j].contains(&defs[i])))
                .collect();
            prop_assert_eq!(Definition::containers(&defs), slow);
        }
    }
}

#[test]
fn fstring_specs_starting_with_equals_parse() {
    // tree-sitter-python reads `:=` in a replacement field as the walrus operator.
    let source = "def show(x):\n    return f\"{x:=}\" + f'{x:=^10}' + f\"{x!r:=>4}\" + f\"{ {'a': 1}['a']:=}\"\n\ndef after(y):\n    return (z := y) and f\"{z=}\"\n";
    let patched = python_patched(source.as_bytes()).expect("specs to blank");
    assert_eq!(
        String::from_utf8(patched).unwrap(),
        source
            .replace("{x:=}", "{x: }")
            .replace("{x:=^10}", "{x: ^10}")
            .replace("{x!r:=>4}", "{x!r: >4}")
            .replace("['a']:=}", "['a']: }")
    );
    let s = extract(Language::Python, source.as_bytes());
    assert!(!s.syntax_errors);
    assert_eq!(
        summary(&s),
        [
            (DefKind::Function, "show", 1),
            (DefKind::Function, "after", 4)
        ]
    );
    // A walrus outside f-strings, in strings and comments: nothing to blank.
    assert_eq!(
        python_patched(b"if (n := 3):\n    s = '{x:=}'  # f\"{x:=}\"\n"),
        None
    );
    assert_eq!(python_patched(b"s = f'{{x:=}}'\n"), None);
}

#[test]
fn overload_stubs_fold_into_the_implementation() {
    let source = "from typing import overload\n\nclass C:\n    @overload\n    def f(self, x: int) -> int: ...\n    @typing.overload\n    def f(self, x: str) -> str: ...\n    def f(self, x):\n        def inner():\n            pass\n        return x\n\n    def g(self):\n        pass\n\n@overload\ndef h(x: int) -> int: ...\n@overload\ndef h(x: str) -> str: ...\n\ndef f(y):\n    pass\n";
    let s = extract(Language::Python, source.as_bytes());
    let spans: Vec<_> = s
        .definitions
        .iter()
        .map(|d| (&*d.name, d.line, d.end_line, &*d.signature))
        .collect();
    assert_eq!(
        spans,
        [
            ("C", 3, 14, "class C:"),
            ("f", 5, 11, "def f(self, x):"),
            ("inner", 9, 10, "def inner():"),
            ("g", 13, 14, "def g(self):"),
            ("h", 17, 19, "def h(x: int) -> int: ..."),
            ("f", 21, 22, "def f(y):"),
        ]
    );
    // The stubs' annotations are the implementation's references.
    assert!(refs(&s)
        .iter()
        .all(|(_, _, line, origin)| !(5..=11).contains(line) || origin == "f"));
}

/// `typedef struct X {...} X;` is one type: the typedef (spanning the whole) is
/// its definition, not the struct too. A typedef giving another name keeps both.
#[test]
fn a_typedef_of_a_struct_by_its_own_name_is_one_definition() {
    let source = "typedef struct point {\n    int x;\n} point;\n\
        typedef struct list_s {\n    int n;\n} list_t;\n\
        typedef struct {\n    int y;\n} anon;\n\
        typedef enum color { RED } color, *color_p;\n\
        typedef union value value;\n\
        struct plain { int z; };\n";
    for language in [Language::C, Language::Cpp] {
        let s = extract(language, source.as_bytes());
        let classes: Vec<(&str, u32, u32)> = s
            .definitions
            .iter()
            .filter(|d| d.kind == DefKind::Class)
            .map(|d| (&*d.name, d.line, d.end_line))
            .collect();
        assert_eq!(
            classes,
            [
                ("point", 1, 3),
                ("list_t", 4, 6),
                ("list_s", 4, 6),
                ("anon", 7, 9),
                ("color", 10, 10),
                ("value", 11, 11),
                ("plain", 12, 12)
            ],
            "{language:?}"
        );
        assert!(!s.syntax_errors, "{language:?}");
    }
}

/// A macro before a C++ declaration (`FMT_CONSTEXPR size_padding(...) : ... {}` in
/// a class body, `FMT_API void f()`, `class FMT_API X`) or alone on a line
/// (`FMT_BEGIN_NAMESPACE`) is parsed as a blank: the class ends at its closing
/// brace and the functions after it are free functions (tree-sitter's error
/// recovery made one definition of the whole file). The macros stay in the
/// signatures and are uses of their `#define`s.
#[test]
fn macros_before_cpp_declarations_are_read_as_attributes() {
    let source = "#define FMT_CONSTEXPR constexpr\n#define FMT_API\nFMT_BEGIN_NAMESPACE\n\
        template <typename Char> struct size_padding {\n  size_t size;\n  size_t padding;\n\n\
        \x20 FMT_CONSTEXPR size_padding(int num_digits, unsigned prefix)\n\
        \x20     : size((prefix >> 24) + num_digits), padding(0) {\n\
        \x20   if (prefix > 0) {\n      padding = prefix;\n    }\n  }\n};\n\n\
        class FMT_API format_error : public std::runtime_error {\n public:\n\
        \x20 FMT_API ~format_error() noexcept override;\n};\n\n\
        FMT_CONSTEXPR inline auto write(int n) -> int { return n; }\n\n\
        FMT_API std::string vformat(string_view fmt) { return write(1); }\n\n\
        template <typename T> FMT_CONSTEXPR T twice(T x) { return x + x; }\n\
        FMT_END_NAMESPACE\n";
    let s = extract(Language::Cpp, source.as_bytes());
    let defs: Vec<(DefKind, &str, u32, u32)> = s
        .definitions
        .iter()
        .map(|d| (d.kind, &*d.name, d.line, d.end_line))
        .collect();
    assert_eq!(
        defs,
        [
            (DefKind::Variable, "FMT_CONSTEXPR", 1, 1),
            (DefKind::Variable, "FMT_API", 2, 2),
            (DefKind::Class, "size_padding", 4, 14),
            (DefKind::Variable, "size", 5, 5),
            (DefKind::Variable, "padding", 6, 6),
            (DefKind::Function, "size_padding", 8, 13),
            (DefKind::Class, "format_error", 16, 19),
            (DefKind::Function, "write", 21, 21),
            (DefKind::Function, "vformat", 23, 23),
            (DefKind::Function, "twice", 25, 25),
        ]
    );
    assert!(!s.syntax_errors);
    assert_eq!(
        &*s.definitions[5].signature,
        "FMT_CONSTEXPR size_padding(int num_digits, unsigned prefix)"
    );
    assert_eq!(
        &*s.definitions[7].signature,
        "FMT_CONSTEXPR inline auto write(int n) -> int { return n; }"
    );
    let uses: Vec<_> = refs(&s)
        .into_iter()
        .filter(|r| matches!(r.0, RefKind::Use | RefKind::Call))
        .collect();
    assert_eq!(
        format!("{uses:?}"),
        r#"[(Use, "FMT_CONSTEXPR", 8, "size_padding"), (Use, "padding", 11, "size_padding"), (Use, "FMT_API", 16, "format_error"), (Use, "FMT_CONSTEXPR", 21, "write"), (Call, "write", 23, "vformat"), (Use, "FMT_API", 23, "vformat"), (Use, "FMT_CONSTEXPR", 25, "twice")]"#
    );
    // The same file as C (a `.h` header that reads as C): the macros alone and
    // before declarations go the same way.
    let c = "#define API\nBEGIN_DECLS\nAPI int run(int n) { return n; }\nSTATIC_INLINE int twice(int n) { return n + n; }\nEND_DECLS\nUINT8 const limit = 3;\nDWORD count;\n";
    let s = extract(Language::C, c.as_bytes());
    let defs: Vec<(DefKind, &str, u32)> = s
        .definitions
        .iter()
        .map(|d| (d.kind, &*d.name, d.line))
        .collect();
    assert_eq!(
        defs,
        [
            (DefKind::Variable, "API", 1),
            (DefKind::Function, "run", 3),
            (DefKind::Function, "twice", 4),
            (DefKind::Variable, "limit", 6),
            (DefKind::Variable, "count", 7),
        ]
    );
    assert!(!s.syntax_errors);
}

/// Which macros are blanked: before a declaration, alone after a statement, between
/// `class` and the name; not a type before a name (`DWORD count;`), a call, a
/// macro in a preprocessor line, a comment or an expression spanning lines.
#[test]
fn attribute_macros_are_found_where_declarations_start() {
    let found = |source: &str| -> Vec<String> {
        macros::attribute_macros(source.as_bytes())
            .into_iter()
            .map(|r| source[r].to_string())
            .collect()
    };
    assert_eq!(found("FMT_API void f();\n"), ["FMT_API"]);
    assert_eq!(
        found("FMT_CONSTEXPR FMT_INLINE auto f() -> int;\n"),
        ["FMT_CONSTEXPR", "FMT_INLINE"]
    );
    assert_eq!(
        found("template <typename T> FMT_CONSTEXPR T f(T x);\n"),
        ["FMT_CONSTEXPR"]
    );
    assert_eq!(
        found("struct S {\n  FMT_CONSTEXPR20 ~S();\n};\n"),
        ["FMT_CONSTEXPR20"]
    );
    assert_eq!(
        found("struct S {\n  FMT_CONSTEXPR S(int n);\n};\n"),
        ["FMT_CONSTEXPR"]
    );
    assert_eq!(
        found("class FMT_API format_error : public E {};\n"),
        ["FMT_API"]
    );
    assert_eq!(
        found("int x;\nFMT_BEGIN_NAMESPACE\n"),
        ["FMT_BEGIN_NAMESPACE"]
    );
    assert_eq!(
        found("#include \"f.h\"\nFMT_BEGIN_NAMESPACE\nFMT_EXPORT_BEGIN\n\nenum class color { red };\n"),
        ["FMT_BEGIN_NAMESPACE", "FMT_EXPORT_BEGIN"]
    );
    assert_eq!(
        found("FMT_API std::string vformat(string_view f);\n"),
        ["FMT_API"]
    );
    assert!(found("DWORD count;\nUINT8 const limit = 3;\nBOOL ok(void);\n").is_empty());
    assert!(found("void f() {\n  FMT_ASSERT(x, \"\");\n}\n").is_empty());
    assert!(found("#define X \\\n  FMT_API int f();\n").is_empty());
    assert!(found("/*\nFMT_API void f();\n*/\n// FMT_API void g();\n").is_empty());
    assert!(found("enum e { A,\n  LAST\n};\nint y = a +\n  LIMIT\n  ;\n").is_empty());
}

/// `extract` of `source` (by the language's walk), checked against
/// `extract_by_query`.
fn walked_as_queried(language: Language, source: &str) -> FileSymbols {
    let walked = extract(language, source.as_bytes());
    let queried = extract_by_query(language, source.as_bytes());
    assert_eq!(walked, queried, "{language:?}: {source}");
    walked
}

/// The definitions of `symbols` as "Kind name", joined.
fn defined(symbols: &FileSymbols) -> String {
    (symbols.definitions.iter())
        .map(|d| format!("{:?} {}", d.kind, d.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// 300 files spliced from pieces of `text` (cut after each of `cuts`) in the
/// order of a generator seeded with `seed`, each checked by `walked_as_queried`.
fn splices_walked_as_queried(language: Language, text: &str, cuts: &[char], seed: u64) {
    let pieces: Vec<&str> = text.split_inclusive(cuts).collect();
    let mut pick = crate::testing::test_rng(seed);
    for _ in 0..300 {
        let source: String = (0..pick(40) + 1)
            .map(|_| pieces[pick(pieces.len() as u64) as usize])
            .collect();
        walked_as_queried(language, &source);
    }
}

/// C files, each shape of `queries/c.scm` in it and beside it, in code that parses
/// and code that does not.
const C_SHAPES: &[&str] = &[
    "#include \"a.h\"\n#include <sys/b.h>\n#include MACRO_PATH\n#include \"\"\n",
    "int f(void) { return g(1); }\nint *p(void) { return 0; }\nint **pp(void) { return 0; }\nint ***ppp(void) { return 0; }\nint (*fp(void))(int) { return 0; }\n",
    "#define LIMIT 3\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n#define EMPTY\n#undef LIMIT\n",
    "struct s { int v; };\nstruct s;\nunion u { int i; float f; };\nunion u;\nenum e { A, B };\nenum e x;\nstruct { int anon; } a;\n",
    "typedef int count_t, *count_p;\ntypedef struct s s_t;\ntypedef struct t { int v; } t;\ntypedef int (*cb_t)(int);\ntypedef enum { X } y_t;\n",
    "int a, b = 1, *c, d[3], *e = 0, f[] = {1}, **g, (*h)(void);\nextern int x, *y;\nstatic const char *name = \"n\";\n",
    "#if A\nint in_if = 1;\n#elif B\nint in_elif;\n#else\nint in_else[2];\n#endif\n#ifdef C\nint *in_ifdef;\nextern int not_this;\n#endif\n",
    "void run(struct s *p, s_t q, enum e r, union u *w) { p->visit(q); (*p).go(); p->f.g(r); cb(w); }\n",
    "size_t n = sizeof(struct s) + sizeof(s_t);\nvoid f(void) { s_t *x = (s_t *)malloc(sizeof(s_t)); struct s local; count_t c; }\n",
    "struct outer { struct inner { s_t v; } in; union { int a; } any; enum e kind; count_t n; };\n",
    "int broken( { return ;\nstruct s { int v\nint ok(void) { return f(; }\n#if\nint x =\n",
    "typedef struct node { struct node *next; } node_t;\nint run(node_t *n) { helper(count); n->visit(LIMIT); return 0; }\nstatic void helper(int x) {}\nint proto(int);\n",
    "extern \"C\" { int in_c(void); int v; }\nint __attribute__((unused)) marked = 0;\nint main(int argc, char **argv) { return main(argc - 1, argv); }\n",
];

/// C's walk (`walk_c`) finds what the query cursor finds, file for file: each shape
/// above, the shapes run together, nested past `MAX_TREE_DEPTH`, and fragments of
/// them in random order (most of which do not parse).
#[test]
fn the_c_walk_finds_what_the_query_finds() {
    let all = C_SHAPES.concat();
    let s = walked_as_queried(Language::C, &all);
    assert_eq!(
        defined(&s),
        "Function f, Function p, Function pp, Variable LIMIT, Function MAX, Variable EMPTY, \
         Class s, Class u, Class e, Variable x, Variable a, Class count_t, Class s_t, Class t, \
         Class y_t, Variable a, Variable b, Variable c, Variable d, Variable e, Variable f, \
         Variable name, Variable in_if, Variable in_elif, Variable in_else, Variable in_ifdef, \
         Function run, Variable n, Function f, Class outer, Class inner, Class s, Class node, \
         Function run, Function helper, Variable v, Function main"
    );
    assert_eq!((s.references.len(), s.imports.len()), (34, 2));
    let deep = format!(
        "int deep(void) {{ return {}g(x){}; }}\nint after(s_t v) {{ return f(v); }}\n",
        "(".repeat(400),
        ")".repeat(400)
    );
    assert!(!walked_as_queried(Language::C, &deep).truncated.is_empty());
    splices_walked_as_queried(
        Language::C,
        &all,
        &[';', '{', '}', '\n'],
        0x9e37_79b9_7f4a_7c15,
    );
}

/// The walks know every kind and field of the grammars they read and every
/// capture of the queries they stand for: a grammar or query that renamed one
/// would send the language back to the query cursor without a word.
#[test]
fn the_walks_know_their_grammars() {
    let far = std::time::Instant::now() + FILE_BUDGET;
    let tree = parse_tree(Language::C, b"int x;").unwrap();
    let names = Language::C.query().capture_names();
    let captures = walk_c::Captures::of(names).expect("C's captures");
    assert!(walk_c::walk(&tree, b"int x;", &captures, far).is_some());
    let tree = parse_tree(Language::Python, b"x = 1").unwrap();
    let names = Language::Python.query().capture_names();
    let captures = walk_py::Captures::of(names).expect("Python's captures");
    assert!(walk_py::walk(&tree, b"x = 1", &captures, far).is_some());
}

/// C's walk stops at the file's deadline as the query cursor does, with its note.
#[test]
fn the_c_walk_stops_at_the_deadline() {
    let source = "int f(void) { return g(1); }\n".repeat(20_000);
    let tree = parse_tree(Language::C, source.as_bytes()).unwrap();
    let past = std::time::Instant::now();
    let s = extract_tree(
        Language::C,
        source.as_bytes(),
        &tree,
        &[],
        past,
        Matcher::Fastest,
    );
    assert_eq!(s.truncated.first(), Some(&over_budget("the query")));
    assert!(s.definitions.len() < 20_000);
}

/// Python files, each shape of its tags query and `queries/python.scm` in it and
/// beside it.
const PYTHON_SHAPES: &[&str] = &[
    "import os\nimport a.b as c, d\nfrom m import x, y as z\nfrom . import rel\nfrom .pkg.mod import (p, q as r)\nfrom m import *\n",
    "LIMIT = 3\nA = B = 2\nx: int = 1\na, b = 1, 2\nname = make()\n",
    "class C(Base, mod.Other, Generic[T], typing.Generic[K, V], metaclass=Meta):\n    size: int\n    kind: mod.Kind = None\n    plain = 1\n    def f(self, x: Thing, y: mod.Type = None, *args: int, z: List[int] = []) -> Result:\n        self.v = Value(1)\n        self.w: mod.W = make()\n        other.v = Value(2)\n        v = mod.Value()\n        w: Widget = build()\n        self.v.run(); v.go(); w.go(); x.go(); self.w.go(); self.size.go()\n        return g(x).h(y)\n",
    "from typing import overload\n@overload\ndef f(x: int) -> int: ...\n@typing.overload\ndef f(x: str) -> str: ...\n@other\n@overload\ndef f(x): return x\n@property\ndef g(self): pass\n",
    "def outer():\n    def inner(a: Dict[str, Item]):\n        return inner(a)\n    lambda: call()\n    return [f(i) for i in items]\n",
    "class Broken(:\n    def f(self\n        x = Thing(\nimport\nfrom . import\ndef g(): return h(\n",
];

/// Python's walk (`walk_py`) finds what the query cursor finds: each shape above,
/// the shapes run together, nested past `MAX_TREE_DEPTH`, and random splices.
#[test]
fn the_python_walk_finds_what_the_query_finds() {
    let all = PYTHON_SHAPES.concat();
    let s = walked_as_queried(Language::Python, &all);
    assert_eq!(
        defined(&s),
        "Variable LIMIT, Variable A, Variable x, Variable name, Class C, Function f, Function f, \
         Function g, Function outer, Function inner, Class Broken"
    );
    assert_eq!((s.references.len(), s.imports.len()), (44, 8));
    let deep = format!(
        "def deep():\n    return {}g(x){}\n",
        "(".repeat(400),
        ")".repeat(400)
    );
    assert!(!walked_as_queried(Language::Python, &deep)
        .truncated
        .is_empty());
    splices_walked_as_queried(
        Language::Python,
        &all,
        &['\n', ':', '(', ','],
        0x2545_f491_4f6c_dd1d,
    );
}
