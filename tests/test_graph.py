"""KnowledgeGraph.build on fixture repositories: exact nodes and edges per language,
and every kind of bad input."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import aircher_mem as am
import pytest
from aircher_mem import _core
from aircher_mem.engine import (
    Definition,
    DynamicContextManager,
    GraphView,
    KnowledgeGraph,
    TokenCounter,
    find_relevant_to_query,
    graph_code_provider,
)
from aircher_mem.errors import FileMissingError, UnknownItemError
from aircher_mem.retrieval import search_params


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


# One small repository per language, with known definitions, calls, imports,
# inheritance and variables; EDGES holds every edge, checked by hand.
FIXTURES: dict[str, dict[str, str]] = {
    "python": {
        "app/models.py": "LIMIT = 10\n\nclass Base:\n    pass\n\nclass User(Base):\n    def save(self):\n        return store(self)[:LIMIT]\n\ndef store(obj):\n    return obj\n",
        "app/views.py": "from app.models import User\nfrom .util import slug\n\ndef create(name: str) -> User:\n    user = User()\n    user.save()\n    return slug(name)\n",
        "app/util.py": "def slug(s):\n    return s.lower()\n",
    },
    "typescript": {
        "web/main.ts": "import { fmt } from './fmt';\nimport { Shape } from './shapes';\nexport class Square extends Shape {\n  area(): string { return fmt(this.name); }\n}\n",
        "web/fmt.ts": "export function fmt(s: string): string {\n  return s.trim();\n}\n",
        "web/shapes.ts": "export interface Named { name: string }\nexport abstract class Shape implements Named {\n  name = 'shape';\n}\n",
    },
    "rust": {
        "core/src/lib.rs": "mod cache;\nuse crate::cache::Cache;\n\npub trait Store: Named {}\npub trait Named {}\n\npub fn make() -> Cache { Cache::new() }\n",
        "core/src/cache.rs": "pub const SIZE: usize = 8;\npub struct Cache;\nimpl Cache {\n    pub fn new() -> Cache { compute(); Cache }\n}\nfn compute() -> usize { SIZE }\n",
    },
    "go": {
        "svc/main.go": 'package main\n\nimport "example.com/svc/store"\n\ntype Server struct {\n\tstore.Base\n}\n\nfunc main() { store.Open() }\n',
        "svc/store/store.go": "package store\n\nvar Limit = 3\n\ntype Base struct{}\n\nfunc Open() int { return Limit }\n",
    },
    "java": {
        "svc/App.java": "package svc;\nimport svc.model.User;\nclass App extends Base {\n  void start() { init(); new User(); }\n  void init() {}\n}\n",
        "svc/Base.java": "package svc;\nclass Base {}\n",
        "svc/model/User.java": "package svc.model;\npublic class User {\n  static int count = 0;\n  void touch() { count++; }\n}\n",
    },
    "javascript": {
        "ui/widget.jsx": "import { label } from './label';\nexport function Widget() { return <b>{label()}</b>; }\n",
        "ui/label.js": "export const PREFIX = '>';\nexport function label() { return PREFIX; }\n",
    },
    "c": {
        "cli/main.c": '#include "util/list.h"\n#include <stdio.h>\n\nint main(void) { list_t *l = list_new(); return list_len(l); }\n',
        "cli/util/list.h": "#define LIST_MAX 8\ntypedef struct list { int len; } list_t;\nlist_t *list_new(void);\nint list_len(list_t *l);\n",
        "cli/util/list.c": '#include "list.h"\n#include <stdlib.h>\n\nstatic int created = 0;\n\nlist_t *list_new(void) { created++; return calloc(1, LIST_MAX); }\nint list_len(list_t *l) { return l->len; }\n',
    },
    "cpp": {
        "geo/shape.hpp": "#pragma once\nnamespace geo {\nclass Shape {\n public:\n  virtual double area() const { return 0; }\n};\n}\n",
        "geo/square.cpp": '#include "shape.hpp"\nnamespace geo {\nint corners = 4;\nclass Square : public Shape {\n  double width;\n  double area() const override { return width * corners; }\n  double twice() const { return 2 * this->area(); }\n};\nSquare *make_square() { return new Square(); }\n}\n',
    },
    "csharp": {
        "Shop/Models/Cart.cs": "namespace Shop.Models {\n  public class Cart : Entity {\n    public int Count;\n    public void Add() { Count++; }\n  }\n  public class Entity { }\n}\n",
        "Shop/Web/Checkout.cs": "using Shop.Models;\nnamespace Shop.Web {\n  class Checkout {\n    void Run() { var c = new Cart(); c.Add(); Log(); }\n    static void Log() { }\n  }\n}\n",
    },
    "ruby": {
        "lib/cart.rb": "require_relative 'item'\nTAX = 3\nclass Cart < Item\n  def total\n    price + TAX\n  end\nend\n",
        "lib/item.rb": "class Item\n  def price\n    1\n  end\nend\n",
        "bin/run.rb": "require 'cart'\nCart.new.total\n",
    },
    "php": {
        "src/Models/Invoice.php": "<?php\nnamespace App\\Models;\nclass Invoice extends Model {\n    private $total = 0;\n    public function add($n) { $this->total += $n; return helper($n); }\n}\n",
        "src/Models/Model.php": "<?php\nnamespace App\\Models;\nabstract class Model {}\n",
        "src/helpers.php": "<?php\nfunction helper($n) { return $n; }\n",
        "src/Http/Billing.php": "<?php\nnamespace App\\Http;\nuse App\\Models\\Invoice;\nrequire_once __DIR__ . '/../helpers.php';\nclass Billing {\n    public function charge(Invoice $i) { $i->add(1); }\n}\n",
    },
    "lua": {
        "game/init.lua": 'local board = require("game.board")\nlocal M = {}\nfunction M.play() return board.draw() end\nreturn M\n',
        "game/board.lua": "local SIZE = 3\nlocal B = {}\nfunction B.draw() return SIZE end\nreturn B\n",
    },
    "bash": {
        "bin/deploy.sh": '#!/bin/bash\nsource "$(dirname "$0")/../lib/common.sh"\nmain() { log_line "deploying"; }\nmain\n',
        "lib/common.sh": 'LEVEL=info\nlog_line() { echo "[$LEVEL] $1"; }\n',
    },
    "kotlin": {
        "shop/src/main/kotlin/com/shop/model/Item.kt": (
            "package com.shop.model\n\nconst val MAX_ITEMS = 5\n\nopen class Item(val price: Int) {\n"
            "    fun total(): Int = price * MAX_ITEMS\n}\n"
        ),
        "shop/src/main/kotlin/com/shop/Basket.kt": (
            "package com.shop\n\nimport com.shop.model.Item\nimport com.shop.text.money as cash\n\n"
            "class Basket : Item(0) {\n"
            "    fun tally(i: Item): Int {\n        return i.total()\n    }\n"
            "    fun label(): String = cash(total())\n}\n"
        ),
        # In a folder that leaves its package out: found by its `package` line.
        "shop/src/main/kotlin/text/Money.kt": 'package com.shop.text\n\nfun money(n: Int): String = "$n EUR"\n',
    },
    "swift": {
        "Sources/Cart/Cart.swift": (
            "import Foundation\n\nlet taxRate = 2\n\nclass Cart: Pricing {\n    var lines: [Int] = []\n"
            "    func checkout() -> Int { return price(lines.count) * taxRate }\n}\n"
        ),
        "Sources/Cart/Pricing.swift": (
            "protocol Pricing {\n    func price(_ n: Int) -> Int\n}\nextension Pricing {\n"
            "    func price(_ n: Int) -> Int { n }\n}\n"
        ),
        "Tests/CartTests/CartTests.swift": (
            "@testable import Cart\n\nfunc testCheckout() { let c = Cart(); _ = c.checkout() }\n"
        ),
    },
    "scala": {
        "core/src/main/scala/shop/Prices.scala": (
            "package shop\n\nobject Prices {\n  val Base = 10\n  def of(n: Int): Int = n * Base\n}\n"
        ),
        "core/src/main/scala/shop/app/Main.scala": (
            "package shop.app\n\nimport shop.Prices\n\ntrait Runner\n\n"
            "class Main extends Runner {\n  def run(): Int = Prices.of(2)\n}\n"
        ),
    },
}
EDGES: dict[str, list[tuple[str, str, str]]] = {
    "python": [
        ("app/models.py", "contains", "app/models.py:Base"),
        ("app/models.py", "contains", "app/models.py:LIMIT"),
        ("app/models.py", "contains", "app/models.py:User"),
        ("app/models.py", "contains", "app/models.py:store"),
        ("app/models.py:User", "contains", "app/models.py:save"),
        ("app/models.py:User", "inherits", "app/models.py:Base"),
        ("app/models.py:save", "calls", "app/models.py:store"),
        ("app/models.py:save", "uses", "app/models.py:LIMIT"),
        ("app/util.py", "contains", "app/util.py:slug"),
        ("app/views.py", "contains", "app/views.py:create"),
        ("app/views.py", "contains", "app/views.py:import .util"),
        ("app/views.py", "contains", "app/views.py:import app.models"),
        ("app/views.py:create", "calls", "app/models.py:User"),
        ("app/views.py:create", "calls", "app/models.py:save"),
        ("app/views.py:create", "calls", "app/util.py:slug"),
        ("app/views.py:create", "references", "app/models.py:User"),
        ("app/views.py:import .util", "imports", "app/util.py"),
        ("app/views.py:import .util", "references", "app/util.py:slug"),
        ("app/views.py:import app.models", "imports", "app/models.py"),
        ("app/views.py:import app.models", "references", "app/models.py:User"),
    ],
    "typescript": [
        ("web/fmt.ts", "contains", "web/fmt.ts:fmt"),
        ("web/main.ts", "contains", "web/main.ts:Square"),
        ("web/main.ts", "contains", "web/main.ts:import ./fmt"),
        ("web/main.ts", "contains", "web/main.ts:import ./shapes"),
        ("web/main.ts:Square", "contains", "web/main.ts:area"),
        ("web/main.ts:Square", "inherits", "web/shapes.ts:Shape"),
        ("web/main.ts:area", "calls", "web/fmt.ts:fmt"),
        ("web/main.ts:import ./fmt", "imports", "web/fmt.ts"),
        ("web/main.ts:import ./fmt", "references", "web/fmt.ts:fmt"),
        ("web/main.ts:import ./shapes", "imports", "web/shapes.ts"),
        ("web/main.ts:import ./shapes", "references", "web/shapes.ts:Shape"),
        ("web/shapes.ts", "contains", "web/shapes.ts:Named"),
        ("web/shapes.ts", "contains", "web/shapes.ts:Shape"),
        ("web/shapes.ts:Shape", "inherits", "web/shapes.ts:Named"),
    ],
    "rust": [
        ("core/src/cache.rs", "contains", "core/src/cache.rs:Cache"),
        ("core/src/cache.rs", "contains", "core/src/cache.rs:SIZE"),
        ("core/src/cache.rs", "contains", "core/src/cache.rs:compute"),
        ("core/src/cache.rs", "contains", "core/src/cache.rs:new"),
        ("core/src/cache.rs", "references", "core/src/cache.rs:Cache"),
        ("core/src/cache.rs:compute", "uses", "core/src/cache.rs:SIZE"),
        ("core/src/cache.rs:new", "calls", "core/src/cache.rs:compute"),
        ("core/src/lib.rs", "contains", "core/src/lib.rs:Named"),
        ("core/src/lib.rs", "contains", "core/src/lib.rs:Store"),
        ("core/src/lib.rs", "contains", "core/src/lib.rs:import cache"),
        ("core/src/lib.rs", "contains", "core/src/lib.rs:import crate::cache"),
        ("core/src/lib.rs", "contains", "core/src/lib.rs:make"),
        ("core/src/lib.rs:Store", "inherits", "core/src/lib.rs:Named"),
        ("core/src/lib.rs:import cache", "imports", "core/src/cache.rs"),
        ("core/src/lib.rs:import crate::cache", "imports", "core/src/cache.rs"),
        ("core/src/lib.rs:import crate::cache", "references", "core/src/cache.rs:Cache"),
        ("core/src/lib.rs:make", "calls", "core/src/cache.rs:new"),
    ],
    "go": [
        ("svc/main.go", "contains", "svc/main.go:Server"),
        ("svc/main.go", "contains", "svc/main.go:import example.com/svc/store"),
        ("svc/main.go", "contains", "svc/main.go:main"),
        ("svc/main.go:Server", "inherits", "svc/store/store.go:Base"),
        ("svc/main.go:import example.com/svc/store", "imports", "svc/store/store.go"),
        ("svc/main.go:main", "calls", "svc/store/store.go:Open"),
        ("svc/store/store.go", "contains", "svc/store/store.go:Base"),
        ("svc/store/store.go", "contains", "svc/store/store.go:Limit"),
        ("svc/store/store.go", "contains", "svc/store/store.go:Open"),
        ("svc/store/store.go:Open", "uses", "svc/store/store.go:Limit"),
    ],
    "java": [
        ("svc/App.java", "contains", "svc/App.java:App"),
        ("svc/App.java", "contains", "svc/App.java:import svc.model.User"),
        ("svc/App.java:App", "contains", "svc/App.java:init"),
        ("svc/App.java:App", "contains", "svc/App.java:start"),
        ("svc/App.java:App", "inherits", "svc/Base.java:Base"),
        ("svc/App.java:import svc.model.User", "imports", "svc/model/User.java"),
        ("svc/App.java:start", "calls", "svc/App.java:init"),
        ("svc/App.java:start", "references", "svc/model/User.java:User"),
        ("svc/Base.java", "contains", "svc/Base.java:Base"),
        ("svc/model/User.java", "contains", "svc/model/User.java:User"),
        ("svc/model/User.java:User", "contains", "svc/model/User.java:count"),
        ("svc/model/User.java:User", "contains", "svc/model/User.java:touch"),
        ("svc/model/User.java:touch", "uses", "svc/model/User.java:count"),
    ],
    "javascript": [
        ("ui/label.js", "contains", "ui/label.js:PREFIX"),
        ("ui/label.js", "contains", "ui/label.js:label"),
        ("ui/label.js:label", "uses", "ui/label.js:PREFIX"),
        ("ui/widget.jsx", "contains", "ui/widget.jsx:Widget"),
        ("ui/widget.jsx", "contains", "ui/widget.jsx:import ./label"),
        ("ui/widget.jsx:Widget", "calls", "ui/label.js:label"),
        ("ui/widget.jsx:import ./label", "imports", "ui/label.js"),
        ("ui/widget.jsx:import ./label", "references", "ui/label.js:label"),
    ],
}
# C: prototypes are no definitions (calls go to list.c), `<stdio.h>` stays unresolved,
# LIST_MAX (written as a macro) is found in the header list.c includes.
EDGES.update(
    {
        "c": [
            ("cli/main.c", "contains", "cli/main.c:import <stdio.h>"),
            ("cli/main.c", "contains", "cli/main.c:import util/list.h"),
            ("cli/main.c", "contains", "cli/main.c:main"),
            ("cli/main.c:import util/list.h", "imports", "cli/util/list.h"),
            ("cli/main.c:main", "calls", "cli/util/list.c:list_len"),
            ("cli/main.c:main", "calls", "cli/util/list.c:list_new"),
            ("cli/main.c:main", "references", "cli/util/list.h:list_t"),
            ("cli/util/list.c", "contains", "cli/util/list.c:created"),
            ("cli/util/list.c", "contains", "cli/util/list.c:import <stdlib.h>"),
            ("cli/util/list.c", "contains", "cli/util/list.c:import list.h"),
            ("cli/util/list.c", "contains", "cli/util/list.c:list_len"),
            ("cli/util/list.c", "contains", "cli/util/list.c:list_new"),
            ("cli/util/list.c:import list.h", "imports", "cli/util/list.h"),
            ("cli/util/list.c:list_len", "references", "cli/util/list.h:list_t"),
            ("cli/util/list.c:list_new", "references", "cli/util/list.h:list_t"),
            ("cli/util/list.c:list_new", "uses", "cli/util/list.c:created"),
            ("cli/util/list.c:list_new", "uses", "cli/util/list.h:LIST_MAX"),
            ("cli/util/list.h", "contains", "cli/util/list.h:LIST_MAX"),
            ("cli/util/list.h", "contains", "cli/util/list.h:list_t"),
            ("cli/util/list.h", "references", "cli/util/list.h:list_t"),
            ("cli/util/list.h:list_t", "contains", "cli/util/list.h:list"),
        ],
        "cpp": [
            ("geo/shape.hpp", "contains", "geo/shape.hpp:Shape"),
            ("geo/shape.hpp:Shape", "contains", "geo/shape.hpp:area"),
            ("geo/square.cpp", "contains", "geo/square.cpp:Square"),
            ("geo/square.cpp", "contains", "geo/square.cpp:corners"),
            ("geo/square.cpp", "contains", "geo/square.cpp:import shape.hpp"),
            ("geo/square.cpp", "contains", "geo/square.cpp:make_square"),
            ("geo/square.cpp:Square", "contains", "geo/square.cpp:area"),
            ("geo/square.cpp:Square", "contains", "geo/square.cpp:twice"),
            ("geo/square.cpp:Square", "contains", "geo/square.cpp:width"),
            ("geo/square.cpp:Square", "inherits", "geo/shape.hpp:Shape"),
            ("geo/square.cpp:area", "uses", "geo/square.cpp:corners"),
            ("geo/square.cpp:area", "uses", "geo/square.cpp:width"),
            ("geo/square.cpp:import shape.hpp", "imports", "geo/shape.hpp"),
            ("geo/square.cpp:make_square", "references", "geo/square.cpp:Square"),
            ("geo/square.cpp:twice", "calls", "geo/square.cpp:area"),
        ],
        "csharp": [
            ("Shop/Models/Cart.cs", "contains", "Shop/Models/Cart.cs:Cart"),
            ("Shop/Models/Cart.cs", "contains", "Shop/Models/Cart.cs:Entity"),
            ("Shop/Models/Cart.cs:Add", "uses", "Shop/Models/Cart.cs:Count"),
            ("Shop/Models/Cart.cs:Cart", "contains", "Shop/Models/Cart.cs:Add"),
            ("Shop/Models/Cart.cs:Cart", "contains", "Shop/Models/Cart.cs:Count"),
            ("Shop/Models/Cart.cs:Cart", "inherits", "Shop/Models/Cart.cs:Entity"),
            ("Shop/Web/Checkout.cs", "contains", "Shop/Web/Checkout.cs:Checkout"),
            ("Shop/Web/Checkout.cs", "contains", "Shop/Web/Checkout.cs:import Shop.Models"),
            ("Shop/Web/Checkout.cs:Checkout", "contains", "Shop/Web/Checkout.cs:Log"),
            ("Shop/Web/Checkout.cs:Checkout", "contains", "Shop/Web/Checkout.cs:Run"),
            ("Shop/Web/Checkout.cs:Run", "calls", "Shop/Models/Cart.cs:Add"),
            ("Shop/Web/Checkout.cs:Run", "calls", "Shop/Web/Checkout.cs:Log"),
            ("Shop/Web/Checkout.cs:Run", "references", "Shop/Models/Cart.cs:Cart"),
            ("Shop/Web/Checkout.cs:import Shop.Models", "imports", "Shop/Models/Cart.cs"),
        ],
        "ruby": [
            ("bin/run.rb", "contains", "bin/run.rb:import cart"),
            ("bin/run.rb", "calls", "lib/cart.rb:Cart"),
            ("bin/run.rb", "calls", "lib/cart.rb:total"),
            ("bin/run.rb:import cart", "imports", "lib/cart.rb"),
            ("lib/cart.rb", "contains", "lib/cart.rb:Cart"),
            ("lib/cart.rb", "contains", "lib/cart.rb:TAX"),
            ("lib/cart.rb", "contains", "lib/cart.rb:import ./item"),
            ("lib/cart.rb:Cart", "contains", "lib/cart.rb:total"),
            ("lib/cart.rb:Cart", "inherits", "lib/item.rb:Item"),
            ("lib/cart.rb:import ./item", "imports", "lib/item.rb"),
            ("lib/cart.rb:total", "calls", "lib/item.rb:price"),
            ("lib/cart.rb:total", "uses", "lib/cart.rb:TAX"),
            ("lib/item.rb", "contains", "lib/item.rb:Item"),
            ("lib/item.rb:Item", "contains", "lib/item.rb:price"),
        ],
        "php": [
            ("src/Http/Billing.php", "contains", "src/Http/Billing.php:Billing"),
            ("src/Http/Billing.php", "contains", "src/Http/Billing.php:import /../helpers.php"),
            ("src/Http/Billing.php", "contains", "src/Http/Billing.php:import App\\Models\\Invoice"),
            ("src/Http/Billing.php:Billing", "contains", "src/Http/Billing.php:charge"),
            ("src/Http/Billing.php:charge", "calls", "src/Models/Invoice.php:add"),
            ("src/Http/Billing.php:charge", "references", "src/Models/Invoice.php:Invoice"),
            ("src/Http/Billing.php:import /../helpers.php", "imports", "src/helpers.php"),
            ("src/Http/Billing.php:import App\\Models\\Invoice", "imports", "src/Models/Invoice.php"),
            ("src/Models/Invoice.php", "contains", "src/Models/Invoice.php:Invoice"),
            ("src/Models/Invoice.php:Invoice", "contains", "src/Models/Invoice.php:add"),
            ("src/Models/Invoice.php:Invoice", "contains", "src/Models/Invoice.php:total"),
            ("src/Models/Invoice.php:Invoice", "inherits", "src/Models/Model.php:Model"),
            ("src/Models/Invoice.php:add", "calls", "src/helpers.php:helper"),
            ("src/Models/Invoice.php:add", "uses", "src/Models/Invoice.php:total"),
            ("src/Models/Model.php", "contains", "src/Models/Model.php:Model"),
            ("src/helpers.php", "contains", "src/helpers.php:helper"),
        ],
    }
)
# Lua: `local board = require(...)` pins `board.draw()` to the file it imports.
EDGES.update(
    {
        "lua": [
            ("game/board.lua", "contains", "game/board.lua:B"),
            ("game/board.lua", "contains", "game/board.lua:SIZE"),
            ("game/board.lua", "contains", "game/board.lua:draw"),
            ("game/board.lua:draw", "uses", "game/board.lua:B"),
            ("game/board.lua:draw", "uses", "game/board.lua:SIZE"),
            ("game/init.lua", "contains", "game/init.lua:M"),
            ("game/init.lua", "contains", "game/init.lua:board"),
            ("game/init.lua", "contains", "game/init.lua:import game.board"),
            ("game/init.lua", "contains", "game/init.lua:play"),
            ("game/init.lua:import game.board", "imports", "game/board.lua"),
            ("game/init.lua:play", "calls", "game/board.lua:draw"),
            ("game/init.lua:play", "uses", "game/init.lua:M"),
            ("game/init.lua:play", "uses", "game/init.lua:board"),
        ],
        "bash": [
            ("bin/deploy.sh", "contains", 'bin/deploy.sh:import "$(dirname "$0")/../lib/common.sh"'),
            ("bin/deploy.sh", "contains", "bin/deploy.sh:main"),
            ("bin/deploy.sh", "calls", "bin/deploy.sh:main"),
            ('bin/deploy.sh:import "$(dirname "$0")/../lib/common.sh"', "imports", "lib/common.sh"),
            ("bin/deploy.sh:main", "calls", "lib/common.sh:log_line"),
            ("lib/common.sh", "contains", "lib/common.sh:LEVEL"),
            ("lib/common.sh", "contains", "lib/common.sh:log_line"),
            ("lib/common.sh:log_line", "uses", "lib/common.sh:LEVEL"),
        ],
    }
)
# Kotlin (shares Java's module family: `import a.b.C` finds `a/b/C.kt` under any
# source root, `import com.shop.text.money as cash` the file declaring `package
# com.shop.text` in `text/`, and `cash(...)` calls `money`), Swift (`@testable import Cart` is every file under a folder `Cart`; a
# protocol's requirement and its extension's default are two definitions, the call
# goes to both at 1/2) and Scala (`Prices.of` goes through the import binding
# `Prices`).
EDGES.update(
    {
        "kotlin": [
            ("shop/src/main/kotlin/com/shop/Basket.kt", "contains", "shop/src/main/kotlin/com/shop/Basket.kt:Basket"),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt",
                "contains",
                "shop/src/main/kotlin/com/shop/Basket.kt:import com.shop.model.Item",
            ),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt",
                "contains",
                "shop/src/main/kotlin/com/shop/Basket.kt:import com.shop.text.money",
            ),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt:Basket",
                "contains",
                "shop/src/main/kotlin/com/shop/Basket.kt:label",
            ),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt:Basket",
                "contains",
                "shop/src/main/kotlin/com/shop/Basket.kt:tally",
            ),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt:Basket",
                "inherits",
                "shop/src/main/kotlin/com/shop/model/Item.kt:Item",
            ),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt:import com.shop.model.Item",
                "imports",
                "shop/src/main/kotlin/com/shop/model/Item.kt",
            ),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt:import com.shop.text.money",
                "imports",
                "shop/src/main/kotlin/text/Money.kt",
            ),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt:label",
                "calls",
                "shop/src/main/kotlin/com/shop/model/Item.kt:total",
            ),
            ("shop/src/main/kotlin/com/shop/Basket.kt:label", "calls", "shop/src/main/kotlin/text/Money.kt:money"),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt:tally",
                "calls",
                "shop/src/main/kotlin/com/shop/model/Item.kt:total",
            ),
            (
                "shop/src/main/kotlin/com/shop/Basket.kt:tally",
                "references",
                "shop/src/main/kotlin/com/shop/model/Item.kt:Item",
            ),
            (
                "shop/src/main/kotlin/com/shop/model/Item.kt",
                "contains",
                "shop/src/main/kotlin/com/shop/model/Item.kt:Item",
            ),
            (
                "shop/src/main/kotlin/com/shop/model/Item.kt",
                "contains",
                "shop/src/main/kotlin/com/shop/model/Item.kt:MAX_ITEMS",
            ),
            (
                "shop/src/main/kotlin/com/shop/model/Item.kt:Item",
                "contains",
                "shop/src/main/kotlin/com/shop/model/Item.kt:price",
            ),
            (
                "shop/src/main/kotlin/com/shop/model/Item.kt:Item",
                "contains",
                "shop/src/main/kotlin/com/shop/model/Item.kt:total",
            ),
            (
                "shop/src/main/kotlin/com/shop/model/Item.kt:total",
                "uses",
                "shop/src/main/kotlin/com/shop/model/Item.kt:MAX_ITEMS",
            ),
            (
                "shop/src/main/kotlin/com/shop/model/Item.kt:total",
                "uses",
                "shop/src/main/kotlin/com/shop/model/Item.kt:price",
            ),
            ("shop/src/main/kotlin/text/Money.kt", "contains", "shop/src/main/kotlin/text/Money.kt:money"),
        ],
        "swift": [
            ("Sources/Cart/Cart.swift", "contains", "Sources/Cart/Cart.swift:Cart"),
            ("Sources/Cart/Cart.swift", "contains", "Sources/Cart/Cart.swift:import Foundation"),
            ("Sources/Cart/Cart.swift", "contains", "Sources/Cart/Cart.swift:taxRate"),
            ("Sources/Cart/Cart.swift:Cart", "contains", "Sources/Cart/Cart.swift:checkout"),
            ("Sources/Cart/Cart.swift:Cart", "contains", "Sources/Cart/Cart.swift:lines"),
            ("Sources/Cart/Cart.swift:Cart", "inherits", "Sources/Cart/Pricing.swift:Pricing"),
            ("Sources/Cart/Cart.swift:checkout", "calls", "Sources/Cart/Pricing.swift:price"),
            ("Sources/Cart/Cart.swift:checkout", "calls", "Sources/Cart/Pricing.swift:price"),
            ("Sources/Cart/Cart.swift:checkout", "uses", "Sources/Cart/Cart.swift:lines"),
            ("Sources/Cart/Cart.swift:checkout", "uses", "Sources/Cart/Cart.swift:taxRate"),
            ("Sources/Cart/Pricing.swift", "contains", "Sources/Cart/Pricing.swift:Pricing"),
            ("Sources/Cart/Pricing.swift", "contains", "Sources/Cart/Pricing.swift:price"),
            ("Sources/Cart/Pricing.swift", "references", "Sources/Cart/Pricing.swift:Pricing"),
            ("Sources/Cart/Pricing.swift:Pricing", "contains", "Sources/Cart/Pricing.swift:price"),
            ("Tests/CartTests/CartTests.swift", "contains", "Tests/CartTests/CartTests.swift:import Cart"),
            ("Tests/CartTests/CartTests.swift", "contains", "Tests/CartTests/CartTests.swift:testCheckout"),
            ("Tests/CartTests/CartTests.swift:import Cart", "imports", "Sources/Cart/Cart.swift"),
            ("Tests/CartTests/CartTests.swift:import Cart", "imports", "Sources/Cart/Pricing.swift"),
            ("Tests/CartTests/CartTests.swift:testCheckout", "calls", "Sources/Cart/Cart.swift:Cart"),
            ("Tests/CartTests/CartTests.swift:testCheckout", "calls", "Sources/Cart/Cart.swift:checkout"),
        ],
        "scala": [
            ("core/src/main/scala/shop/Prices.scala", "contains", "core/src/main/scala/shop/Prices.scala:Prices"),
            ("core/src/main/scala/shop/Prices.scala:Prices", "contains", "core/src/main/scala/shop/Prices.scala:Base"),
            ("core/src/main/scala/shop/Prices.scala:Prices", "contains", "core/src/main/scala/shop/Prices.scala:of"),
            ("core/src/main/scala/shop/Prices.scala:of", "uses", "core/src/main/scala/shop/Prices.scala:Base"),
            ("core/src/main/scala/shop/app/Main.scala", "contains", "core/src/main/scala/shop/app/Main.scala:Main"),
            ("core/src/main/scala/shop/app/Main.scala", "contains", "core/src/main/scala/shop/app/Main.scala:Runner"),
            (
                "core/src/main/scala/shop/app/Main.scala",
                "contains",
                "core/src/main/scala/shop/app/Main.scala:import shop.Prices",
            ),
            ("core/src/main/scala/shop/app/Main.scala:Main", "contains", "core/src/main/scala/shop/app/Main.scala:run"),
            (
                "core/src/main/scala/shop/app/Main.scala:Main",
                "inherits",
                "core/src/main/scala/shop/app/Main.scala:Runner",
            ),
            (
                "core/src/main/scala/shop/app/Main.scala:import shop.Prices",
                "imports",
                "core/src/main/scala/shop/Prices.scala",
            ),
            ("core/src/main/scala/shop/app/Main.scala:run", "calls", "core/src/main/scala/shop/Prices.scala:of"),
        ],
    }
)
REPO = {path: text for files in FIXTURES.values() for path, text in files.items()}


@pytest.mark.parametrize("language", sorted(FIXTURES))
def test_exact_graph_per_language(tmp_path: Path, language: str) -> None:
    g = KnowledgeGraph.build(write(tmp_path, FIXTURES[language]))
    assert g.skipped == [] and g.warnings == []
    assert g.edges() == EDGES[language]


GO_TESTS = {
    "go.mod": "module example.com/m\n",
    "store/store.go": "package store\n\nfunc Open() int { return 1 }\n\nfunc Close() { helper() }\n",
    "store/store_test.go": (
        'package store\n\nimport "testing"\n\nfunc helper() {}\n\nfunc TestOpen(t *testing.T) { Open(); helper() }\n'
    ),
    "main.go": 'package main\n\nimport "example.com/m/store"\n\nfunc main() { store.Open(); helper() }\n',
}


def test_go_test_files_belong_to_the_test_build_only(tmp_path: Path) -> None:
    root = write(tmp_path, GO_TESTS)
    g = KnowledgeGraph.build(root)
    # The test file sees its package (Open, helper); the package's other files and its
    # importers see neither the test file nor what it defines (helper).
    assert g.edges() == [
        ("main.go", "contains", "main.go:import example.com/m/store"),
        ("main.go", "contains", "main.go:main"),
        ("main.go:import example.com/m/store", "imports", "store/store.go"),
        ("main.go:main", "calls", "store/store.go:Open"),
        ("store/store.go", "contains", "store/store.go:Close"),
        ("store/store.go", "contains", "store/store.go:Open"),
        ("store/store_test.go", "contains", "store/store_test.go:TestOpen"),
        ("store/store_test.go", "contains", "store/store_test.go:helper"),
        ("store/store_test.go", "contains", "store/store_test.go:import testing"),
        ("store/store_test.go:TestOpen", "calls", "store/store.go:Open"),
        ("store/store_test.go:TestOpen", "calls", "store/store_test.go:helper"),
    ]
    assert g.get_dependencies("main.go") == ["store/store.go"]
    assert g.get_dependents("store/store_test.go") == []
    assert [c.symbol.path for c in g.get_callers("helper")] == ["store/store_test.go"]
    # Incrementally the same: the test file removed and written again.
    (root / "store/store_test.go").unlink()
    g.update_file("store/store_test.go")
    (root / "store/store_test.go").write_text(GO_TESTS["store/store_test.go"])
    g.update_file("store/store_test.go")
    assert g.edges() == KnowledgeGraph.build(root).edges()


def test_languages_side_by_side_do_not_mix(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(write(tmp_path, REPO))
    # edges() sorts by kind in EdgeKind order (contains first), not by its name
    assert sorted(g.edges()) == sorted(e for edges in EDGES.values() for e in edges)
    assert g.file_count == len(REPO)


def test_queries_return_typed_symbols(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(write(tmp_path, REPO))
    user, java_user = g.find_symbol("User")  # by path: Python's, then Java's
    assert (user.kind, user.path, user.language, user.line, user.end_line) == ("class", "app/models.py", "python", 6, 8)
    assert (user.signature, user.scope, java_user.path) == ("class User(Base):", "", "svc/model/User.java")
    # by path, then line
    assert [s.name for s in g.find_symbol("s", prefix=True)] == ["save", "store", "slug", "start"]
    assert g.find_symbol("save")[0].scope == "User"
    assert [s.name for s in g.find_symbol("USR", fuzzy=True)] == ["User", "User"]  # letters in order, any case
    assert [s.name for s in g.find_symbol("stor", fuzzy=True)] == ["store", "Store"]  # then by length, path
    with pytest.raises(am.InvalidInputError, match="exclusive"):
        g.find_symbol("x", prefix=True, fuzzy=True)
    [call] = g.get_callers("store")
    assert (call.symbol.name, call.kind, call.line, call.confidence) == ("save", "calls", 8, 1.0)
    # named as the results that carry them (aircher_mem.results.Definition, .Reference)
    assert isinstance(call.symbol, Definition)
    assert repr(call.symbol) == 'Definition(function "save" at app/models.py:7-8)'
    assert repr(call) == 'Reference(calls "save" at line 8, confidence 1)'
    assert [c.symbol.name for c in g.get_callees("create")] == ["User", "save", "slug"]
    assert [s.name for s in g.get_file_contents("app/models.py")] == ["LIMIT", "Base", "User", "save", "store"]
    assert g.find_symbol("nothing") == [] and g.get_callers("nothing") == []
    with pytest.raises(UnknownItemError, match="no file"):
        g.get_file_contents("app/absent.py")


def test_module_qualified_names(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(write(tmp_path, REPO))

    def where(found: list[Definition]) -> list[tuple[str, str, str]]:
        return [(s.path, s.scope, s.name) for s in found]

    assert where(g.find_symbol("models.store")) == [("app/models.py", "", "store")]
    assert where(g.find_symbol("app.models.store")) == [("app/models.py", "", "store")]
    assert where(g.find_symbol("app/models.store")) == [("app/models.py", "", "store")]
    assert where(g.find_symbol("app.models.User.save")) == [("app/models.py", "User", "save")]
    assert where(g.find_symbol("User.save")) == [("app/models.py", "User", "save")]
    assert g.find_symbol("views.store") == [] and g.find_symbol("other.models.store") == []
    assert [c.symbol.name for c in g.get_callers("models.store")] == ["save"]
    assert where(g.find_symbol("models.st", prefix=True)) == [("app/models.py", "", "store")]


GIN = (
    "package gin\n\n"
    "type Engine struct{}\n\n"
    "type List[T any] struct{}\n\n"
    "func (engine *Engine) addRoute(method, path string) {}\n\n"
    'func (engine *Engine) Handle(path string) {\n\tengine.addRoute("GET", path)\n}\n\n'
    'func (Engine) Name() string { return "gin" }\n\n'
    "func (l *List[T]) Push(v T) {}\n\n"
    "func addRoute() {}\n"
)
GITIGNORE = (
    "pub struct Gitignore;\n"
    "pub struct Matcher<T>(T);\n"
    "pub trait Match {\n    fn matched(&self) -> bool;\n}\n"
    "impl Gitignore {\n    pub fn new() -> Gitignore {\n        Gitignore\n    }\n"
    "    pub fn matched(&self) -> bool {\n        true\n    }\n}\n"
    "impl<T> Matcher<T> {\n    pub fn new(t: T) -> Self {\n        Matcher(t)\n    }\n}\n"
    "impl Match for Matcher<u8> {\n    fn matched(&self) -> bool {\n        false\n    }\n}\n"
    "fn matched() {}\n"
)


def test_go_and_rust_methods_are_scoped_by_their_type(tmp_path: Path) -> None:
    """A Go method's scope is its receiver's type (pointer, value, generic); a Rust
    method's the type of its impl block (impl<T> Foo<T>, impl Trait for Foo)."""
    g = KnowledgeGraph.build(write(tmp_path, {"gin/gin.go": GIN, "ignore/src/gitignore.rs": GITIGNORE}))

    def where(found: list[Definition]) -> list[tuple[str, int, str, str]]:
        return [(s.path, s.line, s.scope, s.name) for s in found]

    assert where(g.find_symbol("Engine.addRoute")) == [("gin/gin.go", 7, "Engine", "addRoute")]
    assert where(g.find_symbol("addRoute")) == [
        ("gin/gin.go", 7, "Engine", "addRoute"),
        ("gin/gin.go", 17, "", "addRoute"),
    ]
    assert where(g.find_symbol("Engine.", prefix=True)) == [
        ("gin/gin.go", 7, "Engine", "addRoute"),
        ("gin/gin.go", 9, "Engine", "Handle"),
        ("gin/gin.go", 13, "Engine", "Name"),
    ]
    assert where(g.find_symbol("List.Push")) == [("gin/gin.go", 15, "List", "Push")]
    assert where(g.find_symbol("gin.Engine.addRoute")) == [("gin/gin.go", 7, "Engine", "addRoute")]
    assert [(c.symbol.scope, c.symbol.name, c.line) for c in g.get_callers("Engine.addRoute")] == [
        ("Engine", "Handle", 10)
    ]
    assert g.find_symbol("List.addRoute") == []

    assert where(g.find_symbol("Gitignore.matched")) == [("ignore/src/gitignore.rs", 10, "Gitignore", "matched")]
    assert where(g.find_symbol("Gitignore::new")) == [("ignore/src/gitignore.rs", 7, "Gitignore", "new")]
    assert where(g.find_symbol("Matcher::new")) == [("ignore/src/gitignore.rs", 15, "Matcher", "new")]
    assert where(g.find_symbol("matched")) == [
        ("ignore/src/gitignore.rs", 10, "Gitignore", "matched"),
        ("ignore/src/gitignore.rs", 20, "Matcher", "matched"),
        ("ignore/src/gitignore.rs", 24, "", "matched"),
    ]
    assert where(g.find_symbol("gitignore.Gitignore.matched")) == [
        ("ignore/src/gitignore.rs", 10, "Gitignore", "matched")
    ]


FMT_HEADER = (
    "#define FMT_CONSTEXPR constexpr\n"
    "FMT_BEGIN_NAMESPACE\n"
    "template <typename Char> struct size_padding {\n"
    "  size_t size;\n"
    "  size_t padding;\n"
    "\n"
    "  FMT_CONSTEXPR size_padding(int num_digits, unsigned prefix)\n"
    "      : size((prefix >> 24) + num_digits), padding(0) {\n"
    "    if (prefix > 0) padding = prefix;\n"
    "  }\n"
    "};\n"
    "\n"
    "FMT_CONSTEXPR inline auto write(int n) -> int { return n; }\n"
    "template <typename T> FMT_CONSTEXPR T twice(T x) { return write(x) + x; }\n"
    "FMT_END_NAMESPACE\n"
)


def test_a_macro_before_a_constructor_leaves_the_struct_its_own_extent(tmp_path: Path) -> None:
    """fmt's FMT_CONSTEXPR before a constructor made the struct span the rest of the
    header and its free functions its methods; the struct ends at its brace."""
    g = KnowledgeGraph.build(write(tmp_path, {"format.h": FMT_HEADER}))
    assert [(s.kind, s.scope, s.name, s.line, s.end_line) for s in g.get_file_contents("format.h")] == [
        ("variable", "", "FMT_CONSTEXPR", 1, 1),
        ("class", "", "size_padding", 3, 11),
        ("variable", "size_padding", "size", 4, 4),
        ("variable", "size_padding", "padding", 5, 5),
        ("function", "size_padding", "size_padding", 7, 10),
        ("function", "", "write", 13, 13),
        ("function", "", "twice", 14, 14),
    ]
    assert [(c.symbol.scope, c.symbol.name) for c in g.get_callers("write")] == [("", "twice")]
    assert g.warnings == []


def test_a_typedef_struct_by_its_own_name_is_one_definition(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(
        write(
            tmp_path,
            {"list.h": "typedef struct node {\n    int n;\n} node;\ntypedef struct list_s { int n; } list_t;\n"},
        )
    )
    assert [(s.name, s.line, s.end_line) for s in g.get_file_contents("list.h")] == [
        ("node", 1, 3),
        ("list_t", 4, 4),
        ("list_s", 4, 4),
    ]


def test_a_syntax_warning_says_what_was_lost(tmp_path: Path) -> None:
    """An extern "C" guard loses nothing (the C grammar only misses an #endif): no
    warning. A file that lost text names its lines and its lost definitions."""
    guard = (
        '#ifndef A_H\n#define A_H\n#ifdef __cplusplus\nextern "C" {\n#endif\n\n'
        "int f(int x);\nint g(void) { return 1; }\n\n#ifdef __cplusplus\n}\n#endif\n#endif\n"
    )
    template = "template <typename T> T twice(T x) { return x + x; }\nint g(void) { return 1; }\n"
    g = KnowledgeGraph.build(write(tmp_path, {"a.h": guard, "b.c": template}))
    assert [s.name for s in g.get_file_contents("a.h")] == ["A_H", "g"]
    assert g.warnings == [("b.c", "syntax errors: line 1 not indexed (definitions there are missing or incomplete)")]


def test_imports_dependencies_and_references(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(write(tmp_path, REPO))
    imports = [s for s in g.get_file_contents("app/views.py") if s.kind == "import"]
    assert [(s.name, s.items, s.line, s.signature) for s in imports] == [
        ("app.models", ["User"], 1, "from app.models import User"),
        (".util", ["slug"], 2, "from .util import slug"),
    ]
    assert g.get_dependencies("app/views.py") == ["app/models.py", "app/util.py"]
    assert g.get_dependents("app/util.py") == ["app/views.py"] and g.get_dependencies("app/util.py") == []
    assert g.get_dependencies("svc/main.go") == ["svc/store/store.go"]
    assert g.get_dependents("core/src/cache.rs") == ["core/src/lib.rs"]
    for query in (g.get_dependencies, g.get_dependents):
        with pytest.raises(UnknownItemError, match="no file"):
            query("app/absent.py")
    refs = [(r.symbol.path, r.symbol.name, r.kind, r.line) for r in g.get_references("User")]
    assert refs == [
        ("app/views.py", "app.models", "references", 1),  # the import
        ("app/views.py", "create", "references", 4),  # the return annotation
        ("app/views.py", "create", "calls", 5),
        ("svc/App.java", "start", "references", 4),  # new User()
    ]
    assert [(r.symbol.name, r.kind) for r in g.get_references("Base", kind="inherits")] == [
        ("User", "inherits"),
        ("App", "inherits"),
        ("Server", "inherits"),
    ]
    assert [(r.symbol.name, r.line) for r in g.get_references("LIMIT", kind="uses")] == [("save", 8)]
    with pytest.raises(am.InvalidInputError, match="not one of"):
        g.get_references("User", kind="likes")


def test_bad_input_is_skipped_or_warned_never_fatal(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "ok.py": "def fine():\n    pass\n",
            "broken.py": "def good():\n    pass\n\ndef bad(:\n    pass\nfoo bar\n",
            "latin1.py": b"def caf\xe9():\n    pass\n",
            "blob.py": b"\x00\x01\x02binary",
            "huge.py": "x = 1\n" * 900_000,  # 5.4 MB
            "noise.py": bytes(random.Random(7).randrange(1, 256) for _ in range(4000)),  # random bytes, no NUL
            "ignored/skip.py": "def hidden():\n    pass\n",
            "node_modules/pkg/index.js": "function vendored() {}\n",
            ".gitignore": "ignored/\n",
            "notes.txt": "not code",
        },
    )
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    seen: list[tuple[int, int]] = []
    g = KnowledgeGraph.build(
        tmp_path, max_file_bytes=1_000_000, progress=lambda done, total: seen.append((done, total))
    )
    # broken.py keeps what parsed; an invalid UTF-8 byte ends an identifier
    assert [(s.path, s.name) for s in g.find_symbol("", prefix=True)] == [
        ("broken.py", "good"),
        ("broken.py", "bad"),
        ("latin1.py", "caf"),
        ("ok.py", "fine"),
    ]
    assert {p for p, _ in g.skipped} == {"blob.py", "huge.py"}
    assert dict(g.skipped)["blob.py"].startswith("binary") and "larger than" in dict(g.skipped)["huge.py"]
    assert g.warnings == [
        ("broken.py", "syntax errors: line 6 not indexed"),
        ("latin1.py", "syntax errors: line 1 not indexed"),
    ]
    # Reported every 100 ms and at the end: ok, broken, latin1, noise and blob (found
    # binary while parsing) are the 5 parsed.
    assert seen[-1] == (5, 5) and seen == sorted(seen) and {t for _, t in seen} == {5}
    assert g.files == ["broken.py", "latin1.py", "noise.py", "ok.py"]  # noise: indexed, nothing in it
    assert g.get_file_contents("noise.py") == []
    sources, skipped, unsupported = KnowledgeGraph.discover(tmp_path)  # the same walk, nothing parsed
    assert unsupported == {}
    assert sources == ["blob.py", "broken.py", "latin1.py", "noise.py", "ok.py"] and [p for p, _ in skipped] == [
        "huge.py"
    ]
    assert "huge.py" in KnowledgeGraph.discover(tmp_path, max_file_bytes=10**9)[0]


def test_bad_roots_and_callbacks(tmp_path: Path) -> None:
    for call in (KnowledgeGraph.build, KnowledgeGraph.discover):
        with pytest.raises(am.InvalidInputError, match="not a directory"):
            call(tmp_path / "absent")
    write(tmp_path, {"a.py": "def f():\n    pass\n"})

    def boom(done: int, total: int) -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        KnowledgeGraph.build(tmp_path, progress=boom)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert repr(KnowledgeGraph.build(empty)) == "KnowledgeGraph(files=0, nodes=0, edges=0, skipped=0)"


def test_update_and_remove_files(tmp_path: Path) -> None:
    root = write(tmp_path, REPO)
    g = KnowledgeGraph.build(root)
    (root / "app/jobs.py").write_text("def nightly():\n    store(None)\n")
    g.update_file("app/jobs.py")
    assert [c.symbol.name for c in g.get_callers("store")] == ["nightly", "save"]
    (root / "app/models.py").write_text("def store(obj):\n    return obj\n\ndef store_all(objs):\n    store(objs)\n")
    g.update_file(root / "app/models.py")  # absolute paths inside the root work too
    assert [c.symbol.name for c in g.get_callers("store")] == ["nightly", "store_all"]
    # User is gone from Python; Java's User is no candidate for a Python call
    assert [s.path for s in g.find_symbol("User")] == ["svc/model/User.java"]
    assert [c.symbol.name for c in g.get_callees("create")] == ["slug"]
    assert g.edges() == KnowledgeGraph.build(root).edges()  # same as a fresh build
    (root / "app/jobs.py").unlink()
    g.update_file("app/jobs.py")  # gone: removed
    assert [c.symbol.name for c in g.get_callers("store")] == ["store_all"]
    assert g.remove_file("web/fmt.ts") and not g.remove_file("web/fmt.ts")
    assert g.get_callees("area") == [] and g.get_dependencies("web/main.ts") == ["web/shapes.ts"]
    (root / "svc/main.go").write_bytes(b"\x00binary now")
    g.update_file("svc/main.go")
    assert ("svc/main.go", "binary (NUL byte)") in g.skipped and g.find_symbol("Server") == []
    assert g.get_dependents("svc/store/store.go") == []


def test_update_refuses_paths_outside_the_project(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {"a.py": "def f():\n    pass\n"})
    write(tmp_path, {"secret.py": "def s():\n    pass\n"})
    g = KnowledgeGraph.build(root)
    for bad in ("../secret.py", str(tmp_path / "secret.py"), "/etc/passwd.py", ""):
        with pytest.raises(am.InvalidInputError, match="outside the project root"):
            g.update_file(bad)
    with pytest.raises(am.InvalidInputError, match="not a source file"):
        g.update_file("notes.txt")
    assert g.file_count == 1


def test_save_and_load(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {**REPO, "blob.py": b"\x00"})
    g = KnowledgeGraph.build(root)
    path = tmp_path / "graph.bin"
    g.save(path)
    loaded = KnowledgeGraph.load(path)
    assert loaded.edges() == g.edges() and loaded.skipped == g.skipped and loaded.root == g.root
    assert [c.symbol.name for c in loaded.get_callers("store")] == ["save"]
    (root / "app/jobs.py").write_text("def nightly():\n    store(None)\n")
    loaded.update_file("app/jobs.py")  # a loaded graph updates like a built one
    assert [c.symbol.name for c in loaded.get_callers("store")] == ["nightly", "save"]
    assert not list(tmp_path.glob("graph.bin.tmp*"))
    nested = tmp_path / "new" / ".aircher" / "graph.bin"  # missing folders are created
    g.save(nested)
    assert KnowledgeGraph.load(nested).edges() == g.edges()
    with pytest.raises(FileMissingError, match="no such file") as missing:
        KnowledgeGraph.load(tmp_path / "absent" / "graph.bin")
    assert isinstance(missing.value, FileNotFoundError) and isinstance(missing.value, am.StoreError)


def test_a_loaded_graph_reads_its_lexical_index_when_first_needed(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", REPO)
    path = tmp_path / "graph.bin"
    KnowledgeGraph.build(root).save(path)
    query = "Why does store lose data when a User is saved?"
    loaded = KnowledgeGraph.load(path)
    eager = KnowledgeGraph.load(path)
    assert not loaded.lexical_read
    eager.embedding_texts()
    assert eager.lexical_read
    # Graph queries and updates leave it in its file; the updates wait beside it.
    assert [c.symbol.name for c in loaded.get_callers("store")] == ["save"]
    (root / "app/jobs.py").write_text("def nightly_store_flush():\n    store(None)\n")
    for graph in (loaded, eager):
        graph.update_file("app/jobs.py")
    assert not loaded.lexical_read
    found = [(c.file_path, c.line_range) for c in find_relevant_to_query(loaded, query, max_tokens=200)]
    assert loaded.lexical_read
    assert found == [(c.file_path, c.line_range) for c in find_relevant_to_query(eager, query, max_tokens=200)]
    assert loaded.embedding_texts() == eager.embedding_texts()
    assert any("nightly_store_flush" in text for _, text in loaded.embedding_texts())
    # A save reads it too (and writes the update).
    again = KnowledgeGraph.load(path)
    (root / "app/jobs.py").unlink()
    again.update_file("app/jobs.py")
    again.save(tmp_path / "copy.bin")
    assert again.lexical_read
    copy = KnowledgeGraph.load(tmp_path / "copy.bin")
    assert not any("nightly" in text for _, text in copy.embedding_texts())
    assert copy.edges() == again.edges()


def test_a_graph_loaded_to_search_reads_its_lexical_index_with_it(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", REPO)
    path = tmp_path / "graph.bin"
    KnowledgeGraph.build(root).save(path)
    with_graph = KnowledgeGraph.load(path, read_index="with_graph")
    assert with_graph.lexical_read
    when_needed = KnowledgeGraph.load(path, read_index="when_needed")
    assert not when_needed.lexical_read
    assert with_graph.embedding_texts() == when_needed.embedding_texts()
    for bad in ("now", "", "WITH_GRAPH"):
        with pytest.raises(am.InvalidInputError, match="invalid read_index: must be 'when_needed' or 'with_graph'"):
            KnowledgeGraph.load(path, read_index=bad)  # type: ignore[arg-type]


def test_a_lexical_file_written_in_place_after_the_load_is_store_corrupt(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", REPO)
    path = tmp_path / "graph.bin"
    KnowledgeGraph.build(root).save(path)
    loaded = KnowledgeGraph.load(path)
    query = "Why does store lose data when a User is saved?"
    found = [(c.file_path, c.line_range) for c in find_relevant_to_query(loaded, query, max_tokens=200)]
    lexical = tmp_path / "graph.lexical"
    data = lexical.read_bytes()
    with open(lexical, "r+b") as f:  # another program rewrites it in place
        f.write(data)
    os.utime(lexical, ns=(10**18, 10**18))
    with pytest.raises(am.StoreCorruptError, match=r"graph\.lexical was written in place"):
        find_relevant_to_query(loaded, query, max_tokens=200)
    (root / "app/jobs.py").write_text("def nightly():\n    store(None)\n")
    with pytest.raises(am.StoreCorruptError, match="load the store again"):
        loaded.update_file("app/jobs.py")
    with pytest.raises(am.StoreCorruptError):
        loaded.save(tmp_path / "copy" / "graph.bin")
    assert not (tmp_path / "copy" / "graph.bin").exists()
    # The graph itself is in memory: its queries go on.
    assert [c.symbol.name for c in loaded.get_callers("store")] == ["save"]
    again = KnowledgeGraph.load(path)
    assert [(c.file_path, c.line_range) for c in find_relevant_to_query(again, query, max_tokens=200)] == found


def test_a_lexical_file_damaged_where_a_search_reads_it_is_store_corrupt_never_fewer_hits(tmp_path: Path) -> None:
    from aircher_mem.config import Policy
    from aircher_mem.retrieval import search_code

    # enough files for a file of several checksummed blocks: a search reads some of them
    many = {f"pkg/mod{n}.py": f"def handler_{n}(request_{n}):\n    return store_{n}(request_{n})\n" for n in range(400)}
    root = write(tmp_path / "repo", {**REPO, **many})
    path = tmp_path / "graph.bin"
    KnowledgeGraph.build(root).save(path)
    query = "Why does store lose data when a User is saved?"
    want = [(h.path, h.name) for h in search_code(KnowledgeGraph.load(path), query, policy=Policy()).hits]
    assert want
    lexical = tmp_path / "graph.lexical"
    data = lexical.read_bytes()
    assert len(data) > 3 * 65_536
    outcomes = set()
    for at in range(0, len(data), max(1, len(data) // 97)):  # the loaded file is read in place
        damaged = bytearray(data)
        damaged[at] ^= 0xFF
        lexical.write_bytes(bytes(damaged))
        try:
            got = [(h.path, h.name) for h in search_code(KnowledgeGraph.load(path), query, policy=Policy()).hits]
        except am.StoreCorruptError as exc:
            assert "graph.lexical" in str(exc) and "rebuild it" in str(exc), exc
            outcomes.add("corrupt")
        else:
            assert got == want, at  # a byte the search never reads
            outcomes.add("same")
    assert "corrupt" in outcomes
    lexical.write_bytes(data)


def test_build_into_saves_what_build_saves(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {**REPO, "blob.py": b"\x00", "broken.py": "def h():\n    foo bar\n"})
    g = KnowledgeGraph.build(root)
    g.save(tmp_path / "held" / "graph.bin")
    calls: list[tuple[int, int]] = []
    streamed = tmp_path / "new" / "graph.bin"  # missing folders are created
    files, skipped, warnings = KnowledgeGraph.build_into(root, streamed, progress=lambda *a: calls.append(a))
    assert (files, skipped, warnings) == (g.file_count, g.skipped, g.warnings)
    assert skipped == [("blob.py", "binary (NUL byte)")] and [w[0] for w in warnings] == ["broken.py"]
    for name in ("graph.bin", "graph.lexical", "graph.view"):
        assert (streamed.parent / name).read_bytes() == (tmp_path / "held" / name).read_bytes(), name
    assert calls[-1] == (g.file_count + 1, g.file_count + 1)  # the skipped file is counted too
    loaded = KnowledgeGraph.load(streamed)
    assert loaded.edges() == g.edges()
    assert [c.symbol.name for c in loaded.get_callers("store")] == ["save"]
    with pytest.raises(am.InvalidInputError, match="progress must be callable"):
        KnowledgeGraph.build_into(root, streamed, progress=3)  # type: ignore[arg-type]


def test_a_graph_view_searches_as_the_loaded_graph(tmp_path: Path) -> None:
    """``GraphView`` answers ``search``, ``find_symbol``, ``get_file_contents`` and the
    edges' questions (callers, callees, references, dependencies, dependents,
    neighbourhood) from the files a save writes, without loading the graph: the hits, scores, channels and
    definitions of the loaded graph, at both levels; a view that is missing, or not of the graph file beside it, is refused."""
    root = write(tmp_path / "repo", REPO)
    g = KnowledgeGraph.build(root)
    path = tmp_path / "store" / "graph.bin"
    g.save(path)
    view = GraphView.open(path, root=root)
    loaded = KnowledgeGraph.load(path, root=root)
    params = search_params(am.Policy())
    assert (view.root, view.file_count, view.files) == (root, loaded.file_count, loaded.files)
    for suffixes in ([".js"], [".py", ".rs"], ["s"], ["models.py"], [""], []):
        ending = [f for f in g.files if f.endswith(tuple(suffixes))]
        assert view.files_ending(suffixes) == loaded.files_ending(suffixes) == g.files_ending(suffixes) == ending
    assert g.files_ending([".js"]) and g.files_ending([".py"])
    for bad in (".js", [1], ["\udcff"]):
        with pytest.raises(am.InvalidInputError):
            view.files_ending(bad)  # type: ignore[arg-type]

    def seen(found: tuple[list[_core.CodeHit], list[str], str]) -> list[object]:
        hits, mentioned, reason = found
        return [[(h.symbol, h.score, h.channels, h.matched, h.via, h.test) for h in hits], mentioned, reason]

    for text in ("store the user", "save in app/models.py", "create a user", "nothing matches zzz"):
        for level in ("definition", "file"):
            assert seen(view.search(text, params, level=level)) == seen(loaded.search(text, params, level=level))
    assert [h.symbol.name for h in view.search("store", params)[0]][:1] == ["store"]
    asked = [("save", False), ("User.save", False), ("User::save", False), ("app.models.store", False)]
    asked += [("s", True), ("User.", True), ("", True), ("nothing", False)]
    for name, prefix in asked:
        assert view.find_symbol(name, prefix=prefix) == loaded.find_symbol(name, prefix=prefix), name
        assert view.find_symbol(name, fuzzy=True) == loaded.find_symbol(name, fuzzy=True), name
    assert len(view.find_symbol("", prefix=True)) > 5 and view.find_symbol("nothing") == []
    assert [(d.path, d.line) for d in view.find_symbol("app.models.store")] == [("app/models.py", 10)]
    for file in g.files:
        assert view.get_file_contents(file) == loaded.get_file_contents(file), file
    with pytest.raises(UnknownItemError, match="no file"):
        view.get_file_contents("app/absent.py")
    with pytest.raises(am.InvalidInputError):
        view.find_symbol("save", prefix=True, fuzzy=True)
    # The edges: what calls, is called, refers, imports, and is near, as loaded.
    names = ["save", "User.save", "store", "User", "create", "app.models.store", "nothing", *g.files]
    for name in names:
        assert view.get_callers(name) == loaded.get_callers(name), name
        assert view.get_callees(name) == loaded.get_callees(name), name
        for kind in (None, "calls", "inherits", "references", "uses"):
            assert view.get_references(name, kind=kind) == loaded.get_references(name, kind=kind), name
        for hops in (0, 1, 3):
            assert view.neighbourhood(name, hops) == loaded.neighbourhood(name, hops), name
    for file in g.files:
        assert view.get_dependencies(file) == loaded.get_dependencies(file), file
        assert view.get_dependents(file) == loaded.get_dependents(file), file
    assert [(c.symbol.name, c.line) for c in view.get_callers("store")] == [("save", 8)]
    assert view.get_dependents("app/models.py") == ["app/views.py"]
    assert {d.name for d, _ in view.neighbourhood("app/views.py")} >= {"create", "app.models"}
    for unknown in (view.get_dependencies, view.get_dependents):
        with pytest.raises(UnknownItemError, match="no file"):
            unknown("app/absent.py")
    with pytest.raises(am.InvalidInputError, match="kind"):
        view.get_references("save", kind="contains")
    with pytest.raises(FileMissingError):
        GraphView.open(tmp_path / "absent" / "graph.bin", root=root)
    g.save(tmp_path / "other" / "graph.bin")
    other = (tmp_path / "other" / "graph.view").read_bytes()
    (tmp_path / "store" / "graph.view").write_bytes(other[:16] + bytes([other[16] ^ 1]) + other[17:])
    with pytest.raises(am.StoreCorruptError, match=r"graph\.view"):
        GraphView.open(path, root=root)


def test_damaged_or_foreign_graph_files(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(write(tmp_path / "repo", REPO))
    path = tmp_path / "graph.bin"
    g.save(path)
    data = path.read_bytes()
    header = 28  # magic, version, length, checksum; then the first chunk
    path.write_bytes(data[: header + 1] + bytes([data[header + 1] ^ 0xFF]) + data[header + 2 :])
    with pytest.raises(am.StoreCorruptError, match="checksum"):
        KnowledgeGraph.load(path)
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))  # the meta's length, last
    with pytest.raises(am.StoreCorruptError, match="rebuild"):
        KnowledgeGraph.load(path)
    path.write_bytes(data[:8] + (6).to_bytes(4, "little") + data[12:])  # the format before
    with pytest.raises(am.SchemaVersionError, match="version 6"):
        KnowledgeGraph.load(path)
    path.write_bytes(b"random bytes, not a graph at all")
    with pytest.raises(am.StoreCorruptError, match="rebuild"):
        KnowledgeGraph.load(path)
    with pytest.raises(am.StoreError, match="cannot read"):
        KnowledgeGraph.load(tmp_path / "absent.bin")


def test_relevant_code_for_a_message(tmp_path: Path) -> None:
    root = write(tmp_path, REPO)
    g = KnowledgeGraph.build(root)
    found = find_relevant_to_query(g, "Why does store lose data when a User is saved?", max_tokens=200)
    # Definitions whose words match first: Python's save ("saved" meets `save`, a word
    # form, in its name) inside User, then the Java User; Python's User is not taken
    # whole, as its method save already is; then what the graph puts around them.
    # Nothing below a tenth of the best score comes in, though budget is left.
    assert [(c.file_path, c.line_range) for c in found] == [
        ("app/models.py", (7, 8)),
        ("svc/model/User.java", (2, 5)),
        ("app/models.py", (10, 11)),
        ("app/views.py", (4, 7)),
        ("core/src/lib.rs", (4, 4)),
        ("svc/store/store.go", (7, 7)),
        ("svc/store/store.go", (5, 5)),
        ("svc/App.java", (4, 4)),
        ("svc/main.go", (9, 9)),
        ("svc/main.go", (5, 7)),
    ]
    assert found[2].content == "def store(obj):\n    return obj"
    assert found[0].relevance == 1.0 and all(0.1 <= c.relevance <= 1 for c in found)
    counter = TokenCounter()
    assert sum(counter.count(c.content) for c in found) <= 200
    assert all(not (c.file_path == "app/models.py" and c.line_range == (6, 8)) for c in found)  # holds save
    exact = counter.count("def store(obj):\n    return obj")
    tiny = find_relevant_to_query(g, "store", max_tokens=exact)  # room for the best snippet only
    assert [(c.file_path, c.line_range) for c in tiny] == [("app/models.py", (10, 11))]
    assert find_relevant_to_query(g, "quaternion slerp", max_tokens=500) == []
    by_file = find_relevant_to_query(g, "look at this", max_tokens=500, focus_files=["svc/main.go"])
    assert {c.file_path for c in by_file} == {"svc/main.go", "svc/store/store.go"}  # and what it imports


def test_graph_feeds_prepare_context(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(write(tmp_path, REPO))
    ctx = DynamicContextManager(am.Policy(max_tokens=4000), code_provider=graph_code_provider(g, max_tokens=300))
    messages = ctx.prepare_context("fetch() in core/src/cache.rs: what does compute return?")
    assert messages[1]["content"].startswith("[code: core/src/cache.rs lines 6-6]\nfn compute() -> usize { SIZE }")


def test_neighbourhood(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(write(tmp_path, REPO))
    assert [(s.name, d) for s, d in g.neighbourhood("store")] == [("store", 0), ("app/models.py", 1), ("save", 1)]
    two = {(s.name, d) for s, d in g.neighbourhood("store", hops=2)}
    assert ("User", 2) in two and ("create", 2) in two and ("Base", 2) in two and ("LIMIT", 2) in two
    assert [s.name for s, _ in g.neighbourhood("svc/main.go")] == [
        "svc/main.go",
        "example.com/svc/store",
        "Server",
        "main",
    ]
    assert g.neighbourhood("nothing") == []


# --- Reliability: hostile files, special files, symlinks, typed errors -----------


def test_pathological_files_index_with_a_warning(tmp_path: Path) -> None:
    """Deep nesting, long chains and huge import lists once took minutes (or
    overflowed the stack): each now indexes, cut at documented limits with a warning."""
    names = ", ".join(f"a{i}" for i in range(2_500))
    write(
        tmp_path,
        {
            "imports.js": f'import {{{names}}} from "./m";\n',
            "calls.py": "f(" * 60_000 + "x" + ")" * 60_000 + "\n",
            "chain.py": "a" + ".b" * 200_000 + "\n",
            "brackets.js": "[" * 100_000 + "]" * 100_000 + "\n",
            "uses.rs": "use a::" + "{b::" * 2_000 + "c" + "}" * 2_000 + ";\nfn f() {}\n",
        },
    )
    g = KnowledgeGraph.build(tmp_path)
    assert sorted(g.files) == ["brackets.js", "calls.py", "chain.py", "imports.js", "uses.rs"]
    warned = {p for p, w in g.warnings if "nesting deeper than" in w}
    assert warned == {"brackets.js", "calls.py", "chain.py", "uses.rs"}
    (imports,) = [s for s in g.get_file_contents("imports.js") if s.kind == "import"]
    assert len(imports.items) == 2_500
    assert [s.name for s in g.find_symbol("f")] == ["f"]


def test_special_files_are_never_opened(tmp_path: Path) -> None:
    import os

    root = write(tmp_path / "repo", {"a.py": "def f():\n    pass\n", "b.py": "def g():\n    pass\n"})
    os.mkfifo(root / "pipe.py")
    g = KnowledgeGraph.build(root)
    assert ("pipe.py", "not a regular file (a FIFO, socket or device): not read") in g.skipped
    assert "pipe.py" in dict(KnowledgeGraph.discover(root)[1])
    # An indexed file replaced by a FIFO: skipped, and no hang.
    (root / "b.py").unlink()
    os.mkfifo(root / "b.py")
    g.update_file("b.py")
    assert "b.py" not in g.files and "FIFO" in dict(g.skipped)["b.py"]


def test_update_file_never_reads_through_a_symlink(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {"a.py": "def f():\n    pass\n"})
    write(tmp_path, {"secret.py": "def secret():\n    pass\n"})
    (root / "out.py").symlink_to(tmp_path / "secret.py")
    (root / "outdir").symlink_to(tmp_path, target_is_directory=True)
    g = KnowledgeGraph.build(root)
    for path in ("out.py", "outdir/secret.py", root / "out.py"):
        with pytest.raises(am.InvalidInputError):
            g.update_file(path)
    assert g.find_symbol("secret") == []


def test_read_project_file(tmp_path: Path) -> None:
    import os

    root = write(tmp_path / "repo", {"a.py": "x = 1\n", "pkg/b.py": "y = 2\n"})
    write(tmp_path, {"secret.py": "s = 3\n"})
    (root / "out.py").symlink_to(tmp_path / "secret.py")
    os.mkfifo(root / "pipe.py")
    read = am._core.read_project_file
    assert read(root, "a.py", max_bytes=100) == b"x = 1\n"
    assert read(str(root), root / "pkg/b.py", max_bytes=6) == b"y = 2\n"
    for bad in ("../secret.py", tmp_path / "secret.py", "out.py", "\ud800.py"):
        with pytest.raises(am.InvalidInputError):
            read(root, bad, max_bytes=100)
    with pytest.raises(FileMissingError):
        read(root, "gone.py", max_bytes=100)
    with pytest.raises(am.StoreError, match="FIFO"):
        read(root, "pipe.py", max_bytes=100)
    with pytest.raises(am.StoreError, match="larger than 5"):
        read(root, "a.py", max_bytes=5)
    for max_bytes in (-1, 2**64, 2**70):
        with pytest.raises(am.InvalidInputError):
            read(root, "a.py", max_bytes=max_bytes)


def test_non_utf8_file_names_are_skipped(tmp_path: Path) -> None:
    import os

    root = tmp_path / "repo"
    root.mkdir()
    (root / "ok.py").write_text("def f():\n    pass\n")
    for name in (b"a\xff.py", b"a\xfe.py"):
        with open(os.path.join(os.fsencode(root), name), "wb") as out:
            out.write(b"def g():\n    pass\n")
    g = KnowledgeGraph.build(root)
    assert g.files == ["ok.py"] and g.find_symbol("g") == []
    assert [w for _, w in g.skipped] == ["file name is not valid UTF-8"] * 2
    g.save(tmp_path / "g.bin")
    loaded = KnowledgeGraph.load(tmp_path / "g.bin")
    assert loaded.files == g.files and loaded.file_count == g.file_count and loaded.skipped == g.skipped
    g.update_file(os.fsdecode(os.path.join(os.fsencode(root), b"a\xff.py")))
    assert g.files == ["ok.py"]


def test_graph_file_is_private_and_leftovers_go(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {"a.py": "def f():\n    pass\n"})
    out = tmp_path / "out"
    out.mkdir()
    (out / "graph.bin.tmp4242").write_bytes(b"crashed")
    (out / "graph.bin.tmp.keep").write_bytes(b"other")
    KnowledgeGraph.build(root).save(out / "graph.bin")
    assert (out / "graph.bin").stat().st_mode & 0o777 == 0o600
    assert (out / "graph.lexical").stat().st_mode & 0o777 == 0o600  # its lexical index
    assert (out / "graph.view").stat().st_mode & 0o777 == 0o600  # its view
    assert sorted(p.name for p in out.iterdir()) == ["graph.bin", "graph.bin.tmp.keep", "graph.lexical", "graph.view"]


def test_bad_values_raise_typed_errors(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(write(tmp_path, {"a.py": "def f():\n    g()\n"}))
    bad_calls = [
        lambda: g.neighbourhood("f", hops=-1),
        lambda: g.neighbourhood("f", hops=2**70),
        lambda: g.find_symbol("\ud800"),
        lambda: g.get_callers("\ud800"),
        lambda: g.get_callees("\udcff"),
        lambda: g.get_references("f", kind="\ud800"),
        lambda: g.get_file_contents("\ud800"),
        lambda: g.get_dependencies("\ud800"),
        lambda: g.update_file("\ud800.py"),
        lambda: g.remove_file("\ud800.py"),
        lambda: g.save("\ud800"),
        lambda: g.rank(["\ud800"]),
        lambda: g.rank(["f"], limit=-1),
        lambda: g.rank(["f"], damping=2**2000),
        lambda: KnowledgeGraph.build(tmp_path, max_file_bytes=-1),
        lambda: KnowledgeGraph.discover(tmp_path, max_file_bytes=2**64),
        lambda: KnowledgeGraph.load("\ud800"),
        lambda: am._core.relative_path(tmp_path, "\ud800"),
    ]
    for call in bad_calls:
        with pytest.raises(am.InvalidInputError):
            call()


class _Hostile:
    """A sequence whose every access raises."""

    def __len__(self) -> int:
        raise RuntimeError("no len")

    def __getitem__(self, i: int) -> object:
        raise RuntimeError("no item")


WRONG_TYPES: list[object] = ["f", "", 5, 0, 1.5, [1, 2], ["f"], [None], {"a": 1}, {}, None, object(), b"f", _Hostile()]


def test_wrong_argument_types_raise_invalid_input(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(write(tmp_path, {"a.py": "def f():\n    g()\n"}))
    bad_calls = [
        lambda: g.find_symbol("f", prefix="yes"),  # type: ignore[arg-type]
        lambda: g.find_symbol("f", prefix=1),  # type: ignore[arg-type]
        lambda: g.find_symbol("f", fuzzy=[1]),  # type: ignore[arg-type]
        lambda: g.find_symbol("f", fuzzy=None),  # type: ignore[arg-type]
        lambda: g.rank(5),  # type: ignore[arg-type]
        lambda: g.rank("f"),
        lambda: g.rank([1]),  # type: ignore[list-item]
        lambda: g.rank(["f"], 5),  # type: ignore[arg-type]
        lambda: g.rank(["f"], files=_Hostile()),  # type: ignore[arg-type]
        lambda: g.rank(["f"], files=None),  # type: ignore[arg-type]
        lambda: KnowledgeGraph.build(tmp_path, progress=5),  # type: ignore[arg-type]
        lambda: KnowledgeGraph.build(tmp_path, progress="x"),  # type: ignore[arg-type]
    ]
    for call in bad_calls:
        with pytest.raises(am.InvalidInputError) as info:
            call()
        assert not isinstance(info.value, TypeError)
    with pytest.raises(am.InvalidInputError, match=r"wrong type.*str"):
        g.rank("f")
    with pytest.raises(am.InvalidInputError, match="progress must be callable"):
        KnowledgeGraph.build(tmp_path, progress=5)  # type: ignore[arg-type]
    assert [s.name for s in g.find_symbol("f", prefix=True)] == ["f"]
    assert KnowledgeGraph.build(tmp_path, progress=None).file_count == 1


def test_hostile_values_raise_only_aircher_errors(tmp_path: Path) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    g = KnowledgeGraph.build(write(tmp_path, {"a.py": "def f():\n    g()\n"}))
    hostile = st.one_of(
        st.integers(min_value=-(2**80), max_value=2**80),
        st.sampled_from([2**63, -(2**63) - 1, 2**64, -1, 0, float("nan"), float("inf"), -float("inf")]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
        st.sampled_from(["\ud800", "a\x00b", "x" * 1_000_000, "\udcff.py", "", "../x.py", "/etc/passwd"]),
        st.sampled_from(WRONG_TYPES),
    )
    entry_points = [
        lambda v: g.find_symbol(v),
        lambda v: g.find_symbol(v, prefix=True),
        lambda v: g.find_symbol(v, fuzzy=True),
        lambda v: g.get_callers(v),
        lambda v: g.get_callees(v),
        lambda v: g.get_references(v),
        lambda v: g.get_references("f", kind=v),
        lambda v: g.get_references_from(v),
        lambda v: g.get_file_contents(v),
        lambda v: g.get_dependencies(v),
        lambda v: g.get_dependents(v),
        lambda v: g.neighbourhood(v),
        lambda v: g.neighbourhood("f", hops=v),
        lambda v: g.rank([v]),
        lambda v: g.rank(["f"], [v]),
        lambda v: g.rank(["f"], limit=v),
        lambda v: g.rank(["f"], damping=v),
        lambda v: g.rank(["f"], iterations=v if not isinstance(v, int) else min(v, 100)),
        lambda v: g.update_file(v),
        lambda v: g.remove_file(v),
        lambda v: am._core.relative_path(tmp_path, v),
        lambda v: am._core.read_project_file(tmp_path, v, max_bytes=100),
        lambda v: am._core.read_project_file(tmp_path, "a.py", max_bytes=v),
        lambda v: KnowledgeGraph.discover(tmp_path, max_file_bytes=v),
        lambda v: g.find_symbol("f", prefix=v),
        lambda v: g.find_symbol("f", fuzzy=v),
        lambda v: g.rank(v),
        lambda v: g.rank(["f"], v),
        lambda v: g.rank(["f"], files=v),
        lambda v: KnowledgeGraph.build(tmp_path, progress=v),
    ]

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(range(len(entry_points))), hostile)
    def check(which: int, value: object) -> None:
        try:
            entry_points[which](value)
        except am.AircherError:
            pass

    check()


def test_importing_leaves_the_process_its_huge_pages() -> None:
    """The extension stops mimalloc asking for transparent huge pages for its own
    memory; the process (and the children it starts) keep them."""
    status = Path("/proc/self/status")
    if not status.exists() or "THP_enabled:" not in status.read_text():
        pytest.skip("no THP_enabled in /proc/self/status on this system")
    code = (
        "import aircher_mem._core\n"
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('THP_enabled:')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['1']"


def _edges_of(g: KnowledgeGraph, kind: str) -> list[tuple[str, str, str]]:
    return [e for e in g.edges() if e[1] == kind]


def _callees(g: KnowledgeGraph, name: str) -> list[tuple[str, int, float]]:
    return [(f"{r.symbol.path}:{r.symbol.name}", r.line, round(r.confidence, 4)) for r in g.get_callees(name)]


def test_python_generic_bases_are_their_classes(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(
        write(
            tmp_path,
            {
                "models.py": "class Base:\n    pass\n\nclass Pair:\n    pass\n",
                "app.py": (
                    "import models\nfrom models import Base, Pair\n\n"
                    "class One(Base[int]):\n    pass\n\n"
                    "class Two(Pair[str, int], Base):\n    pass\n\n"
                    "class Three(models.Base[int]):\n    pass\n"
                ),
            },
        )
    )
    assert g.warnings == []
    assert _edges_of(g, "inherits") == [
        ("app.py:One", "inherits", "models.py:Base"),
        ("app.py:Three", "inherits", "models.py:Base"),
        ("app.py:Two", "inherits", "models.py:Base"),
        ("app.py:Two", "inherits", "models.py:Pair"),
    ]
    assert sorted(r.symbol.name for r in g.get_references("Base", kind="inherits")) == ["One", "Three", "Two"]


DELEGATION = {
    "python": {
        "dispatch.py": "class Dispatcher:\n    def handle(self, r):\n        return r\n",
        "app.py": (
            "class App:\n    def __init__(self, d):\n        self.dispatcher = d\n\n"
            "    def handle(self, r):\n        return self.dispatcher.handle(r)\n\n"
            "    def run(self, r):\n        return self.handle(r)\n\n"
            "class Node:\n    def walk(self):\n        return self.children[0].walk()\n"
        ),
    },
    "php": {
        "dispatch.php": "<?php\nclass Dispatcher {\n  function handle($r) { return $r; }\n}\n",
        "app.php": (
            "<?php\nclass App {\n"
            "  function handle($r) { return $this->dispatcher->handle($r); }\n"
            "  function run($r) { return $this->handle($r); }\n}\n"
            "class Node {\n  function walk() { return $this->child->walk(); }\n}\n"
        ),
    },
}


@pytest.mark.parametrize("language", sorted(DELEGATION))
def test_a_call_through_an_attribute_of_self_is_not_recursion(tmp_path: Path, language: str) -> None:
    g = KnowledgeGraph.build(write(tmp_path, DELEGATION[language]))
    ext = "py" if language == "python" else "php"
    handle_line, run_line, walk_line = (6, 9, 13) if language == "python" else (3, 4, 7)
    assert g.warnings == []
    # `self.dispatcher.handle(r)` is the dispatcher's; `self.handle(r)` stays App's.
    assert _edges_of(g, "calls") == [
        (f"app.{ext}:handle", "calls", f"dispatch.{ext}:handle"),
        (f"app.{ext}:run", "calls", f"app.{ext}:handle"),
        (f"app.{ext}:walk", "calls", f"app.{ext}:walk"),
    ]
    assert _callees(g, "handle") == [(f"dispatch.{ext}:handle", handle_line, 1.0)]
    assert _callees(g, "run") == [(f"app.{ext}:handle", run_line, 1.0)]
    # No other `walk` anywhere: the class's own, at low confidence.
    assert _callees(g, "walk") == [(f"app.{ext}:walk", walk_line, 0.1)]
    callers = sorted((r.symbol.path, r.line) for r in g.get_callers("handle"))
    assert callers == [(f"app.{ext}", handle_line), (f"app.{ext}", run_line)]


def test_overload_stubs_fold_into_their_implementation(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(
        write(
            tmp_path,
            {
                "api.py": (
                    "from typing import overload\nimport typing\n\n\n"
                    "class Conv:\n"
                    "    @overload\n    def to(self, x: int) -> int: ...\n"
                    "    @typing.overload\n    def to(self, x: str) -> str: ...\n"
                    "    def to(self, x):\n        return norm(x)\n\n\n"
                    "def norm(x):\n    return x\n\n\n"
                    "def use(c: Conv):\n    return c.to(1)\n"
                ),
                "stubs.pyi": (
                    "from typing import overload\n\n"
                    "@overload\ndef parse(x: int) -> int: ...\n"
                    "@overload\ndef parse(x: str) -> str: ...\n"
                ),
            },
        )
    )
    assert g.warnings == []
    # One `to`: the implementation's name and signature, its lines from the first stub.
    assert [(s.path, s.line, s.end_line, s.signature) for s in g.find_symbol("to")] == [
        ("api.py", 7, 11, "def to(self, x):")
    ]
    assert _callees(g, "use") == [("api.py:to", 19, 1.0)]
    assert _callees(g, "to") == [("api.py:norm", 11, 1.0)]
    # A stub file without an implementation: its first stub, spanning the others.
    assert [(s.path, s.line, s.end_line, s.signature) for s in g.find_symbol("parse")] == [
        ("stubs.pyi", 4, 6, "def parse(x: int) -> int: ...")
    ]


def test_valid_fstrings_and_escaped_quotes_parse(tmp_path: Path) -> None:
    g = KnowledgeGraph.build(
        write(
            tmp_path,
            {
                "fmt.py": (
                    'def show(x):\n    return f"{x:=}" + f"{x:=^10}" + f"{x=}" + f"{x!r:=>4}"\n\n\n'
                    "def after():\n    walrus = (y := 2)\n    return show(walrus + y)\n"
                ),
                "quotes.py": "s = '''not \\'%s\\'.''' % 1\nt = '''a \\''' b'''\n\n\ndef later():\n    return s\n",
            },
        )
    )
    assert g.warnings == []
    assert _edges_of(g, "calls") == [("fmt.py:after", "calls", "fmt.py:show")]
    assert _edges_of(g, "uses") == [("quotes.py:later", "uses", "quotes.py:s")]


SCRIPTS: dict[str, str | bytes] = {
    "lib.py": "def helper():\n    pass\n",
    "bin/tool": "#!/usr/bin/env python3\nfrom lib import helper\n\ndef main():\n    helper()\n",
    "bin/deploy": "#!/bin/sh\nstep() {\n  echo hi\n}\nstep\n",
    "bin/serve": "#!/usr/bin/env -S node --no-warnings\nfunction start() { return 1; }\nstart();\n",
    "bin/report": "#!/usr/bin/perl\nprint 1;\n",
    "bin/prompt": "#!/bin/zsh\necho hi\n",
    "bin/blob": b"\x7fELF\x02\x01\x01\x00\x00\x00",
    "bin/packed": b"#!/usr/bin/env python3\n\x00\x01\x02",
    "NOTES": "#! not a program\n",
}


def test_scripts_without_an_extension_are_indexed_by_their_shebang(tmp_path: Path) -> None:
    root = write(tmp_path, SCRIPTS)
    sources, skipped, unsupported = KnowledgeGraph.discover(root)
    assert sources == ["bin/deploy", "bin/packed", "bin/serve", "bin/tool", "lib.py"]
    assert skipped == []
    assert unsupported == {"Perl": 1, "Shell": 1}
    g = KnowledgeGraph.build(root)
    assert g.files == ["bin/deploy", "bin/serve", "bin/tool", "lib.py"]
    assert [path for path, _ in g.skipped] == ["bin/packed"]
    assert [(s.name, s.language) for s in g.get_file_contents("bin/tool") if s.kind == "function"] == [
        ("main", "python")
    ]
    assert _edges_of(g, "calls") == [
        ("bin/deploy", "calls", "bin/deploy:step"),
        ("bin/serve", "calls", "bin/serve:start"),
        ("bin/tool:main", "calls", "lib.py:helper"),
    ]
    # An update reads the `#!` line too.
    (root / "bin/tool").write_text("#!/usr/bin/env python3\nfrom lib import helper\n\ndef go():\n    helper()\n")
    g.update_file("bin/tool")
    assert _edges_of(g, "calls")[-1] == ("bin/tool:go", "calls", "lib.py:helper")
    (root / "bin/tool").write_text("#!/usr/bin/perl\nprint 1;\n")
    g.update_file("bin/tool")
    assert g.files == ["bin/deploy", "bin/serve", "lib.py"]
