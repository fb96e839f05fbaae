import Foundation
import XCTest

@testable import QBJinja
@testable import QBText

/// A template construct, the variables it renders with (JSON), and what Python's jinja2
/// 3.1 renders for it with transformers' chat-template settings. The expected texts were
/// produced by Tests/QBTextTests/oracles/jinja_render.py; `JinjaOracleTests` checks them
/// against jinja2 again whenever it is installed, so they cannot drift.
struct JinjaCase {
    let name: String
    let template: String
    let context: String
    let expected: String

    init(_ name: String, _ template: String, _ context: String, _ expected: String) {
        self.name = name
        self.template = template
        self.context = context
        self.expected = expected
    }
}

/// A template that must fail, how, and with what message (jinja2 fails on each too).
struct JinjaFailureCase {
    enum Kind { case syntax, render, raised, unsupported }
    let name: String
    let template: String
    let context: String
    let kind: Kind
    let message: String

    init(_ name: String, _ template: String, _ context: String, _ kind: Kind, _ message: String) {
        self.name = name
        self.template = template
        self.context = context
        self.kind = kind
        self.message = message
    }
}

enum JinjaCases {
    /// What strftime_now formats in these cases: 2024-07-26, local midnight (the date
    /// llama.cpp's goldens were made with).
    static var now: Date {
        var c = DateComponents()
        (c.year, c.month, c.day) = (2024, 7, 26)
        return Calendar(identifier: .gregorian).date(from: c) ?? Date(timeIntervalSince1970: 0)
    }

    static let sample = "{\"d\": {\"a\": 1, \"b\": [2, 3], \"c\": {\"x\": \"y\"}}, \"l\": [{\"x\": 1, \"n\": \"b\"}, {\"x\": 2, \"n\": \"A\"}, {\"n\": \"c\"}], \"users\": [{\"name\": \"ann\", \"age\": 30, \"role\": \"admin\"}, {\"name\": \"Bob\", \"age\": 25}, {\"name\": \"cid\", \"age\": 35, \"role\": \"user\"}]}"

    /// One case per construct: whitespace control, expressions, statements, filters,
    /// tests, methods, globals and the patterns real chat templates use.
    static let constructs: [JinjaCase] = [
        JinjaCase(
            "ws_trim_blocks", "{% if true %}\n  yes\n{% endif %}\nafter\n",
            "{}",
            "  yes\nafter"),
        JinjaCase(
            "ws_lstrip", "  {% if true %}\n    x\n  {% endif %}\nend",
            "{}",
            "    x\nend"),
        JinjaCase(
            "ws_minus", "a  {%- if true -%}  b  {%- endif -%}  c",
            "{}",
            "abc"),
        JinjaCase(
            "ws_vars_untrimmed", "{{ 'x' }}\n{{ 'y' }}\n  {{ 'z' }}\n",
            "{}",
            "x\ny\n  z"),
        JinjaCase(
            "ws_comments", "{# c1 #}\nA\n  {# c2 #}\nB {#- c3 -#} C",
            "{}",
            "A\nBC"),
        JinjaCase(
            "ws_plus_lstrip", "  {%+ if true %}x{% endif %}|",
            "{}",
            "  x|"),
        JinjaCase(
            "ws_plus_trim", "{% if true +%}\nx{% endif %}",
            "{}",
            "\nx"),
        JinjaCase(
            "ws_raw", "{% raw %}{{ not }} {% if %}{% endraw %}|  {%- raw -%}  a  {%- endraw %}|",
            "{}",
            "{{ not }} {% if %}|a|"),
        JinjaCase(
            "ws_newlines", "a\r\nb\rc\n\n",
            "{}",
            "a\nb\nc\n"),
        JinjaCase(
            "ws_var_minus", "x  {{- ' y ' -}}  z\n\n{{- 'w' }}",
            "{}",
            "x y zw"),
        JinjaCase(
            "ws_tabs", "\t{% if true %}t\n\t{% endif %}\n",
            "{}",
            "t\n"),
        JinjaCase(
            "ws_set_minus", "x\n\n{%- set a = 1 %}\n  y",
            "{}",
            "x  y"),
        JinjaCase(
            "ws_inline_block", "a {% if true %}b{% endif %} c\n{% for i in [1,2] %}\n{{ i }}\n{% endfor %}\n",
            "{}",
            "a b c\n1\n2\n"),
        JinjaCase(
            "ws_line_start_after_block", "{% if true %}\n    {% if true %}\n  deep\n    {% endif %}\n{% endif %}",
            "{}",
            "  deep\n"),
        JinjaCase(
            "ws_trailing_single_newline", "A\n",
            "{}",
            "A"),
        JinjaCase(
            "ws_only_text", "  plain text  ",
            "{}",
            "  plain text  "),
        JinjaCase(
            "arith", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 1.5 + 1 }} {{ 10 / 5 }} {{ 0.1 + 0.2 }} {{ -3 }} {{ - -3 }} {{ 2 ** 3 ** 2 }}",
            "{}",
            "7 9 3.5 3 -4 1 2 1024 0.5 2.5 2.0 0.30000000000000004 -3 3 64"),
        JinjaCase(
            "strings", "{{ 'a' + 'b' }} {{ 'ab' * 3 }} {{ 3 * '-' }} {{ 'a' ~ 1 ~ none ~ true ~ missing ~ 2.0 }} {{ \"x\" 'y' }}",
            "{}",
            "ab ababab --- a1NoneTrue2.0 xy"),
        JinjaCase(
            "lists", "{{ [1, 2] + [3] }} {{ [1, 'a', none, true, 1.0, [2]] }} {{ {'a': 1, 'b': [2], 'c': {'d': none}} }} {{ () }} {{ [] }} {{ {} }}",
            "{}",
            "[1, 2, 3] [1, 'a', None, True, 1.0, [2]] {'a': 1, 'b': [2], 'c': {'d': None}} () [] {}"),
        JinjaCase(
            "compare", "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' < 'b' }} {{ [1,2] < [1,3] }} {{ none == none }} {{ 'a' != 'b' }} {{ {'a':1,'b':2} == {'b':2,'a':1} }} {{ 'B' < 'a' }}",
            "{}",
            "True False True True True True True True True True"),
        JinjaCase(
            "in_ops", "{{ 'a' in 'cat' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'abc' }} {{ not 'x' in ['x'] }} {{ 'a' in missing }}",
            "{}",
            "True True True True False False"),
        JinjaCase(
            "logic", "{{ 1 and 'x' }} {{ 0 or 'y' }} {{ not none }} [{{ '' or [] }}] {{ none and 1 }} {{ missing or 'dflt' }} {{ 'a' and 0 }}",
            "{}",
            "x y True [[]] None dflt 0"),
        JinjaCase(
            "conditional", "{{ 'a' if true else 'b' }} [{{ 'a' if false }}] {{ 'x' if none else 'y' if 0 else 'z' }}",
            "{}",
            "a [] z"),
        JinjaCase(
            "slicing", "{{ 'hello'[1:3] }} {{ 'hello'[::-1] }} {{ [1,2,3,4][::2] }} {{ [1,2,3][-1] }} {{ 'abc'[-2:] }} {{ [1,2,3][5:] }} {{ 'abc'[0] }} {{ [1,2,3,4,5][-2:0:-1] }} {{ 'héllo'[1] }} [{{ [1][5] }}]",
            "{}",
            "el olleh [1, 3] 3 bc [] a [4, 3, 2] é []"),
        JinjaCase(
            "attrs_items", "{{ d.a }} {{ d['b'] }} {{ d.missing is defined }} {{ l[0].x }} {{ d.get('a') }} {{ d.get('zz', 'dflt') }} {{ d.get('zz') }} {{ d.c.x }} {{ d['c']['x'] }} {{ d.b.1 }} {{ l[2].x is defined }}",
            sample,
            "1 [2, 3] False 1 1 dflt None y y 3 False"),
        JinjaCase(
            "floats", "{{ 1.0 }} {{ 1e20 }} {{ 1.5e-7 }} {{ 3.14159 }} {{ 100.0 / 3 }} {{ 2.50 }} {{ 1e16 }} {{ 123456789.0 }} {{ 0.0001 }} {{ -0.0 }}",
            "{}",
            "1.0 1e+20 1.5e-07 3.14159 33.333333333333336 2.5 1e+16 123456789.0 0.0001 -0.0"),
        JinjaCase(
            "int_literals", "{{ 0x1F }} {{ 1_000 }} {{ 0b101 }} {{ 0o17 }} {{ 1e3 }} {{ 1_0.5 }}",
            "{}",
            "31 1000 5 15 1000.0 10.5"),
        JinjaCase(
            "escapes", "{{ 'a\\nb' }}|{{ 'tab\\there' }}|{{ '\\u00e9\\U0001F600' }}|{{ 'it\\'s' }}|{{ \"q\\\"\" }}|{{ '\\x41' }}|{{ '\\d\\w' }}|{{ '\\\\' }}|{{ '\\101' }}",
            "{}",
            "a\nb|tab\there|é😀|it's|q\"|A|\\d\\w|\\|A"),
        JinjaCase(
            "repr", "{{ ['it\\'s', \"a\\\"b\", 'a\\nb', 'é', 'both\\'\"', '\\t\\x00\\x7f'] }} {{ {'k': 'v', 'n': none} }}",
            "{}",
            "[\"it's\", 'a\"b', 'a\\nb', 'é', 'both\\'\"', '\\t\\x00\\x7f'] {'k': 'v', 'n': None}"),
        JinjaCase(
            "consts", "{{ none }} {{ true }} {{ false }} {{ None }} {{ True }} {{ False }} [{{ missing }}]",
            "{}",
            "None True False None True False []"),
        JinjaCase(
            "dict_order", "{{ {'z': 1, 'a': 2, 'm': 3} }} {% for k in {'z': 1, 'a': 2} %}{{ k }}{% endfor %}",
            "{}",
            "{'z': 1, 'a': 2, 'm': 3} za"),
        JinjaCase(
            "unicode_len", "{{ 'héllo wörld'|length }} {{ '🎉'|length }} {{ 'é'|length }} {{ 'naïve'|upper }}",
            "{}",
            "11 1 2 NAÏVE"),
        JinjaCase(
            "loop_vars", "{% for x in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.depth }};{% endfor %}",
            "{}",
            "1032TrueFalse3b1;2121FalseFalse3ac1;3210FalseTrue3b1;"),
        JinjaCase(
            "for_else", "{% for x in [] %}x{% else %}empty{% endfor %} {% for x in missing %}x{% else %}undef{% endfor %}",
            "{}",
            "empty undef"),
        JinjaCase(
            "for_filter", "{% for x in range(10) if x is odd %}{{ x }}{{ loop.index }}/{{ loop.length }},{% endfor %}",
            "{}",
            "11/5,32/5,53/5,74/5,95/5,"),
        JinjaCase(
            "for_dict", "{% for k in d %}{{ k }}{% endfor %} {% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
            sample,
            "abc a=1;b=[2, 3];c={'x': 'y'};"),
        JinjaCase(
            "for_string", "{% for c in 'abc' %}{{ c }}-{% endfor %}",
            "{}",
            "a-b-c-"),
        JinjaCase(
            "break_continue", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}",
            "{}",
            "0134"),
        JinjaCase(
            "nested_loops", "{% for a in [1,2] %}{% for b in [3,4] %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }}|{% endfor %}",
            "{}",
            "113 214 1|123 224 2|"),
        JinjaCase(
            "loop_cycle", "{% for i in range(4) %}{{ loop.cycle('odd', 'even') }} {% endfor %}",
            "{}",
            "odd even odd even "),
        JinjaCase(
            "loop_changed", "{% for i in [1,1,2,2,3] %}{% if loop.changed(i) %}{{ i }}{% endif %}{% endfor %}",
            "{}",
            "123"),
        JinjaCase(
            "recursive_loop", "{% for item in tree recursive %}{{ item.name }}{% if item.children %}({{ loop(item.children) }}){% endif %}{{ loop.depth }}{% endfor %}",
            "{\"tree\": [{\"name\": \"a\", \"children\": [{\"name\": \"b\"}, {\"name\": \"c\", \"children\": [{\"name\": \"d\"}]}]}, {\"name\": \"e\"}]}",
            "a(b2c(d3)2)1e1"),
        JinjaCase(
            "set_scoping", "{% set x = 1 %}{% for i in [1,2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}",
            "{}",
            "231"),
        JinjaCase(
            "set_in_loop_fresh", "{% for i in [1,2,3] %}[{{ y }}]{% set y = i %}{% endfor %}<{{ y }}>",
            "{}",
            "[][][]<>"),
        JinjaCase(
            "namespace", "{% set ns = namespace(count=0, found=false) %}{% for i in range(4) %}{% set ns.count = ns.count + i %}{% if i == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.count }} {{ ns.found }} {{ ns.missing is defined }}",
            "{}",
            "6 True False"),
        JinjaCase(
            "namespace_dict", "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}",
            "{}",
            "12"),
        JinjaCase(
            "set_in_if", "{% if true %}{% set y = 'leak' %}{% endif %}{{ y }}",
            "{}",
            "leak"),
        JinjaCase(
            "tuple_set", "{% set a, b = [1, 2] %}{{ a }}{{ b }} {% set c, d = 'xy' %}{{ d }}{{ c }}",
            "{}",
            "12 yx"),
        JinjaCase(
            "block_set", "{% set greeting %}Hello {{ name }}!{% endset %}[{{ greeting }}] {% set up | upper %}abc{% endset %}{{ up }}",
            "{\"name\": \"World\"}",
            "[Hello World!] ABC"),
        JinjaCase(
            "macros", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Bob') }} {{ greet('Al', punct='?') }} {{ greet(name='Z') }} [{{ greet() }}]",
            "{}",
            "Hi Bob! Hi Al? Hi Z! [Hi !]"),
        JinjaCase(
            "macro_recursion", "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}",
            "{}",
            "120"),
        JinjaCase(
            "macro_varargs", "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, x=4) }}",
            "{}",
            "1(2, 3){'x': 4}"),
        JinjaCase(
            "macro_closure", "{% macro m() %}{{ x }}{% endmacro %}{% set x = 1 %}{{ m() }}{% set x = 2 %}{{ m() }}",
            "{}",
            "12"),
        JinjaCase(
            "macro_local_set", "{% set x = 1 %}{% macro m() %}{{ x }}{% set x = 5 %}{{ x }}{% endmacro %}{{ m() }}{{ x }}",
            "{}",
            "151"),
        JinjaCase(
            "macro_default_uses_arg", "{% macro m(a, b=a * 2) %}{{ a }},{{ b }}{% endmacro %}{{ m(3) }} {{ m(3, 1) }}",
            "{}",
            "3,6 3,1"),
        JinjaCase(
            "call_block", "{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}inner{% endcall %} {% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) each([1,2]) %}[{{ x }}]{% endcall %}",
            "{}",
            "<inner> [1][2]"),
        JinjaCase(
            "filter_block", "{% filter upper %}hello {{ 'x' }}{% endfilter %}",
            "{}",
            "HELLO X"),
        JinjaCase(
            "with_block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a is defined }}",
            "{}",
            "3False"),
        JinjaCase(
            "if_chain", "{% for n in [1, 2, 3, 4] %}{% if n == 1 %}one{% elif n == 2 %}two{% elif n == 3 %}three{% else %}many{% endif %} {% endfor %}",
            "{}",
            "one two three many "),
        JinjaCase(
            "generation_tag", "A{% generation %}gen {{ 1 }}{% endgeneration %}B",
            "{}",
            "Agen 1B"),
        JinjaCase(
            "f_trim", "[{{ '  x  '|trim }}] [{{ 'xxaxx'|trim('x') }}] [{{ 5|trim }}] [{{ missing|trim }}]",
            "{}",
            "[x] [a] [5] []"),
        JinjaCase(
            "f_case", "{{ 'hello'|upper }} {{ 'HeLLo'|lower }} {{ 'hello WORLD'|capitalize }} {{ 'hello world-foo (bar) o\\'neil'|title }}",
            "{}",
            "HELLO hello Hello world Hello World-Foo (Bar) O'neil"),
        JinjaCase(
            "f_replace", "{{ 'aaa'|replace('a', 'b') }} {{ 'aaa'|replace('a', 'b', 2) }} {{ 123|replace('2', 'x') }}",
            "{}",
            "bbb bba 1x3"),
        JinjaCase(
            "f_indent", "[{{ 'a\\nb\\n\\nc'|indent(2) }}] [{{ 'a\\nb'|indent(2, true) }}] [{{ 'a\\n\\nb'|indent(2, blank=true) }}] [{{ 'a\\nb'|indent('> ') }}] [{{ 'x\\n'|indent }}] [{{ 'a\\r\\nb'|indent(1) }}]",
            "{}",
            "[a\n  b\n\n  c] [  a\n  b] [a\n  \n  b] [a\n> b] [x\n] [a\n b]"),
        JinjaCase(
            "f_length", "{{ 'abc'|length }} {{ [1,2]|length }} {{ {'a':1}|length }} {{ missing|length }} {{ [1,2,3]|count }}",
            "{}",
            "3 2 1 0 3"),
        JinjaCase(
            "f_join", "{{ [1, 2, 3]|join }} {{ ['a','b']|join(', ') }} {{ users|join(', ', attribute='name') }} {{ 'abc'|join('-') }} {{ [none, true]|join('/') }}",
            sample,
            "123 a, b ann, Bob, cid a-b-c None/True"),
        JinjaCase(
            "f_list", "{{ 'abc'|list }} {{ {'a': 1, 'b': 2}|list }} {{ range(3)|list }} {{ missing|list }}",
            "{}",
            "['a', 'b', 'c'] ['a', 'b'] [0, 1, 2] []"),
        JinjaCase(
            "f_first_last", "{{ [1,2,3]|first }} {{ [1,2,3]|last }} {{ 'abc'|first }} {{ 'abc'|last }} [{{ []|first }}] {{ {'x': 1}|first }}",
            "{}",
            "1 3 a c [] x"),
        JinjaCase(
            "f_default", "{{ missing|default('dflt') }} {{ none|default('dflt') }} {{ ''|default('dflt', true) }} {{ 0|d('zero', boolean=true) }} {{ 'set'|default('x') }} [{{ missing|default }}]",
            "{}",
            "dflt None dflt zero set []"),
        JinjaCase(
            "f_string", "{{ 1|string }} {{ none|string }} {{ [1,'a']|string }} {{ (1|string) ~ 'x' }} {{ true|string|length }}",
            "{}",
            "1 None [1, 'a'] 1x 4"),
        JinjaCase(
            "f_tojson", "{{ d|tojson }} {{ d|tojson(indent=2) }} {{ {'é': 'ü', 'q': '\"\\\\'}|tojson }} {{ [1.0, 2.5, none, true]|tojson }} {{ 'x'|tojson }}",
            sample,
            "{\"a\": 1, \"b\": [2, 3], \"c\": {\"x\": \"y\"}} {\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ],\n  \"c\": {\n    \"x\": \"y\"\n  }\n} {\"é\": \"ü\", \"q\": \"\\\"\\\\\"} [1.0, 2.5, null, true] \"x\""),
        JinjaCase(
            "f_tojson_args", "{{ {'b': 1, 'a': {'c': []}}|tojson(sort_keys=true) }} {{ {'a': [1, 2]}|tojson(separators=(',', ':')) }} {{ {'é': 1}|tojson(ensure_ascii=true) }} {{ {'a': 1}|tojson(indent='\\t') }} {{ [{}, [], ''] |tojson(indent=4) }} {{ 'line\\nbreak\\u0001'|tojson }}",
            "{}",
            "{\"a\": {\"c\": []}, \"b\": 1} {\"a\":[1,2]} {\"\\u00e9\": 1} {\n\t\"a\": 1\n} [\n    {},\n    [],\n    \"\"\n] \"line\\nbreak\\u0001\""),
        JinjaCase(
            "f_safe_escape", "{{ ('<b>'|safe) + '<i>' }} {{ '<b>' + ('<i>'|safe) }} {{ ('a'|safe) ~ '<' }} {{ '<x> & \"q\" \\'s\\''|escape }} {{ ('<x>'|safe)|trim }} {{ '<x>'|e|e }} {{ ('a'|safe) * 2 }} {{ ('<'|safe)|length }}",
            "{}",
            "<b>&lt;i&gt; &lt;b&gt;<i> a< &lt;x&gt; &amp; &#34;q&#34; &#39;s&#39; <x> &lt;x&gt; aa 1"),
        JinjaCase(
            "f_selectattr", "{{ users|selectattr('role')|map(attribute='name')|list }} {{ users|selectattr('role', 'equalto', 'admin')|map(attribute='name')|join }} {{ users|rejectattr('role', 'defined')|map(attribute='name')|list }} {{ users|selectattr('age', 'gt', 28)|list|length }} {{ l|selectattr('x', 'defined')|list|length }}",
            sample,
            "['ann', 'cid'] ann ['Bob'] 2 2"),
        JinjaCase(
            "f_select", "{{ [1,2,3,4]|select('odd')|list }} {{ [1,2,3,4]|reject('even')|list }} {{ [0, 1, '', 'a', none]|select|list }} {{ ['a', 1, 'b']|select('string')|list }} {{ [1, 5, 10]|select('>', 3)|list }} {{ [1,2]|select('in', [2, 3])|list }}",
            "{}",
            "[1, 3] [1, 3] [1, 'a'] ['a', 'b'] [5, 10] [2]"),
        JinjaCase(
            "f_map", "{{ users|map(attribute='name')|list }} {{ ['a', 'b']|map('upper')|list }} {{ users|map(attribute='role', default='none')|list }} {{ [' a ', 'b ']|map('trim')|join('|') }} {{ ['x', 'y']|map('replace', 'x', 'z')|list }} {{ none|map('upper')|list }}",
            sample,
            "['ann', 'Bob', 'cid'] ['A', 'B'] ['admin', 'none', 'user'] a|b ['z', 'y'] []"),
        JinjaCase(
            "f_items", "{{ d|items|list }} {% for k, v in {'x': 1, 'y': 2}|items %}{{ k }}{{ v }}{% endfor %} {{ missing|items|list }}",
            sample,
            "[('a', 1), ('b', [2, 3]), ('c', {'x': 'y'})] x1y2 []"),
        JinjaCase(
            "f_unique", "{{ ['a', 'A', 'b', 'a']|unique|list }} {{ ['a', 'A', 'b']|unique(case_sensitive=true)|list }} {{ users|unique(attribute='role')|map(attribute='name')|list }} {{ [1, 1.0, true, 2]|unique|list }}",
            sample,
            "['a', 'b'] ['a', 'A', 'b'] ['ann', 'Bob', 'cid'] [1, 2]"),
        JinjaCase(
            "f_sort", "{{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ users|sort(attribute='age')|map(attribute='name')|list }} {{ users|sort(attribute='name', reverse=true)|map(attribute='name')|list }}",
            sample,
            "[1, 2, 3] [3, 2, 1] ['A', 'b', 'c'] ['A', 'b', 'c'] ['Bob', 'ann', 'cid'] ['cid', 'Bob', 'ann']"),
        JinjaCase(
            "f_dictsort", "{{ {'b': 2, 'a': 1, 'C': 3}|dictsort }} {{ {'b': 2, 'a': 3}|dictsort(by='value') }} {{ {'b': 2, 'a': 1}|dictsort(reverse=true) }}",
            "{}",
            "[('a', 1), ('b', 2), ('C', 3)] [('b', 2), ('a', 3)] [('b', 2), ('a', 1)]"),
        JinjaCase(
            "f_minmax_sum", "{{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ ['b', 'A']|max }} {{ users|max(attribute='age')|attr('get') is defined }} {{ users|min(attribute='age') }} {{ [1, 2, 3]|sum }} {{ users|sum(attribute='age') }} {{ [1.5, 2]|sum(start=10) }} [{{ []|max }}]",
            sample,
            "1 3 b True {'name': 'Bob', 'age': 25} 6 90 13.5 []"),
        JinjaCase(
            "f_numbers", "{{ -3|abs }} {{ (-3.5)|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 3.14159|round(2) }} {{ 3.14159|round(2, 'floor') }} {{ 3.1|round(method='ceil') }} {{ 5|round }} {{ 2.675|round(2) }} {{ '42'|int }} {{ '4.7'|int }} {{ 'abc'|int }} {{ 'abc'|int(7) }} {{ 4.9|int }} {{ '0x1A'|int(base=16) }} {{ '3.5'|float }} {{ 'x'|float }} {{ 2|float }} {{ true|int }} {{ ' 12 '|int }}",
            "{}",
            "3 3.5 2.0 4.0 3.14 3.14 4.0 5 2.67 42 4 0 7 4 26 3.5 0.0 2.0 1 12"),
        JinjaCase(
            "f_reverse_batch", "{{ [1,2,3]|reverse|list }} {{ 'abc'|reverse }} {{ [1,2,3,4,5]|batch(2)|list }} {{ [1,2,3]|batch(2, 'x')|list }}",
            "{}",
            "[3, 2, 1] cba [[1, 2], [3, 4], [5]] [[1, 2], [3, 'x']]"),
        JinjaCase(
            "f_misc", "{{ 'one two  three'|wordcount }} [{{ 'ab'|center(6) }}] {{ '%s-%d'|format('a', 3) }} {{ '%5s|%-4s|'|format('ab', 'c') }} {{ '%.2f'|format(3.14159) }} {{ d|attr('items') is defined }} {{ d|attr('a') is defined }}",
            sample,
            "3 [  ab  ] a-3    ab|c   | 3.14 True False"),
        JinjaCase(
            "f_generators", "{{ 'yes' if []|select else 'no' }} {{ 'yes' if [] else 'no' }} {{ [1,2]|map('string')|join(',') }} {{ ([1]|select) is iterable }}",
            "{}",
            "yes no 1,2 True"),
        JinjaCase(
            "tests_types", "{{ 1 is number }} {{ 1.5 is float }} {{ 1 is integer }} {{ true is integer }} {{ true is number }} {{ true is boolean }} {{ 'a' is string }} {{ {} is mapping }} {{ [] is mapping }} {{ 'a' is sequence }} {{ {} is sequence }} {{ 1 is sequence }} {{ 'a' is iterable }} {{ 5 is iterable }} {{ missing is iterable }} {{ none is none }} {{ missing is none }}",
            "{}",
            "True True True False True True True True False True True False True False True True False"),
        JinjaCase(
            "tests_values", "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} {{ 3 is eq 3 }} {{ 3 is equalto(3.0) }} {{ 3 is ne 4 }} {{ 2 is lt 3 }} {{ 2 is ge 2 }} {{ 2 is greaterthan 1 }} {{ none is sameas none }} {{ 'a' is in 'abc' }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'Abc' is lower }}",
            "{}",
            "True False True False True True True False True True True True True True True True True True False"),
        JinjaCase(
            "tests_defined", "{{ x is defined }} {{ x is undefined }} {{ d is defined }} {{ d.a is defined }} {{ d.zz is not defined }} {{ d is not none }} {{ none is defined }}",
            sample,
            "False True True True True True True"),
        JinjaCase(
            "tests_callable", "{% macro m() %}{% endmacro %}{{ m is callable }} {{ range is callable }} {{ 'x' is callable }} {{ 'x'.upper is callable }} {{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }}",
            "{}",
            "True True False True True False True"),
        JinjaCase(
            "m_strip", "[{{ '  x  '.strip() }}] [{{ 'xxaxx'.strip('x') }}] [{{ '\\n a \\n'.lstrip() }}] [{{ 'a\\n\\n'.rstrip('\\n') }}] [{{ 'abcba'.lstrip('ab') }}] [{{ ' \\u00a0 x'.strip() }}]",
            "{}",
            "[x] [a] [a \n] [a] [cba] [x]"),
        JinjaCase(
            "m_split", "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a b c'.rsplit(' ', 1) }} {{ 'a\\nb\\r\\nc'.splitlines() }} {{ ''.split(',') }} {{ ''.split() }} {{ 'x</think>y</think>z'.split('</think>')[-1] }}",
            "{}",
            "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c'] ['a b', 'c'] ['a', 'b', 'c'] [''] [] z"),
        JinjaCase(
            "m_replace_find", "{{ 'aaa'.replace('a', 'b') }} {{ 'aaa'.replace('a', 'b', 1) }} {{ 'abc'.replace('', '-') }} {{ 'hello'.find('l') }} {{ 'hello'.rfind('l') }} {{ 'hello'.find('z') }} {{ 'hello'.count('l') }} {{ 'hello'.index('e') }}",
            "{}",
            "bbb baa -a-b-c- 2 3 -1 2 1"),
        JinjaCase(
            "m_startswith", "{{ 'hello'.startswith('he') }} {{ 'hello'.endswith('lo') }} {{ 'hello'.startswith(('x', 'h')) }} {{ 'hello'.startswith('l', 2) }} {{ '<tool_response>x'.startswith('<tool_response>') }} {{ 'é'.startswith('e') }}",
            "{}",
            "True True True True True False"),
        JinjaCase(
            "m_case", "{{ 'hello world'.title() }} {{ 'hello World'.capitalize() }} {{ 'Hi'.upper() }} {{ 'Hi'.lower() }} {{ 'Hi'.swapcase() }} {{ \"they're\".title() }}",
            "{}",
            "Hello World Hello world HI hi hI They'Re"),
        JinjaCase(
            "m_misc", "{{ '-'.join(['a', 'b']) }} [{{ 'ab'.center(6, '*') }}] [{{ 'ab'.ljust(4) }}] [{{ 'ab'.rjust(4, '0') }}] {{ '42'.zfill(5) }} {{ '-4'.zfill(4) }} {{ '123'.isdigit() }} {{ 'abc'.isalpha() }} {{ ' '.isspace() }} {{ ''.isdigit() }} {{ 'ab'.islower() }} {{ 'prefix_x'.removeprefix('prefix_') }} {{ 'a=b=c'.partition('=') }}",
            "{}",
            "a-b [**ab**] [ab  ] [00ab] 00042 -004 True True True False True x ('a', '=', 'b=c')"),
        JinjaCase(
            "m_dict", "{{ d.items()|list }} {{ d.keys()|list }} {{ d.values()|list }} {% for k, v in d.items() %}{{ k }};{% endfor %} {{ d.get('b')[0] }} {{ [1, 2, 1].count(1) }} {{ [1, 2].index(2) }}",
            sample,
            "[('a', 1), ('b', [2, 3]), ('c', {'x': 'y'})] ['a', 'b', 'c'] [1, [2, 3], {'x': 'y'}] a;b;c; 2 2 1"),
        JinjaCase(
            "m_format", "{{ '{} and {}'.format('a', 'b') }} {{ '{1}{0}'.format('a', 'b') }} {{ '{x}!'.format(x=3) }} {{ '{{literal}} {}'.format(1) }} {{ '{0[0]}'.format(['z']) }} {{ '{!r}'.format('q') }}",
            "{}",
            "a and b ba 3! {literal} 1 z 'q'"),
        JinjaCase(
            "g_range", "{{ range(3)|list }} {{ range(1, 4)|list }} {{ range(10, 0, -3)|list }} {{ range(0)|list }} {% for i in range(2) %}{{ i }}{% endfor %}",
            "{}",
            "[0, 1, 2] [1, 2, 3] [10, 7, 4, 1] [] 01"),
        JinjaCase(
            "g_dict", "{{ dict(a=1, b=2) }} {{ dict({'x': 1}) }} {{ dict() }}",
            "{}",
            "{'a': 1, 'b': 2} {'x': 1} {}"),
        JinjaCase(
            "g_strftime", "{{ strftime_now('%d %b %Y') }} {{ strftime_now('%Y-%m-%d %A %B %j %a %y %H:%M:%S %p %%') }} {{ strftime_now('%-d/%-m') }}",
            "{}",
            "26 Jul 2024 2024-07-26 Friday July 208 Fri 24 00:00:00 AM % 26/7"),
        JinjaCase(
            "g_joiner_cycler", "{% set j = joiner(' | ') %}{% for i in [1,2,3] %}{{ j() }}{{ i }}{% endfor %} {% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }}",
            "{}",
            "1 | 2 | 3 abab"),
        JinjaCase(
            "g_lookup_order", "{% set range = 5 %}{{ range }} {{ messages|length }}",
            "{\"messages\": [1, 2]}",
            "5 2"),
        JinjaCase(
            "p_messages_loop", "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}",
            "{\"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"hello\"}]}",
            "<s>[INST] hi [/INST]hello</s>"),
        JinjaCase(
            "p_loop_messages_slice", "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set sys = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% endif %}[{{ sys }}]{% for m in loop_messages %}{{ m.role }}:{{ m.content }};{% endfor %}",
            "{\"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
            "[S]user:U;"),
        JinjaCase(
            "p_message_equality", "{% set users = messages|selectattr('role', 'equalto', 'user')|list %}{% for m in messages %}{{ m == users[-1] }}{% endfor %}",
            "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": \"b\"}, {\"content\": \"c\", \"role\": \"user\"}]}",
            "FalseFalseTrue"),
        JinjaCase(
            "p_raise_guard", "{% for m in messages %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate') }}{% endif %}{% endfor %}ok",
            "{\"messages\": [{\"role\": \"user\"}, {\"role\": \"assistant\"}]}",
            "ok"),
    ]

    /// Each fails in jinja2 as well (with the Python exception noted).
    static let failures: [JinjaFailureCase] = [
        // TemplateError: Custom failure: 42
        JinjaFailureCase("raise_exception", "{{ raise_exception('Custom failure: ' ~ 42) }}", "{}", .raised, "Custom failure: 42"),
        // UndefinedError: 'missing' is undefined
        JinjaFailureCase("attribute of undefined", "{{ missing.attr }}", "{}", .render, "'missing' is undefined"),
        // UndefinedError: 'dict object' has no attribute 'zz'
        JinjaFailureCase("item of undefined", "{{ d.zz.y }}", sample, .render, "'d.zz' is undefined"),
        // TypeError: can only concatenate str (not "int") to str
        JinjaFailureCase("str + int", "{{ 'a' + 1 }}", "{}", .render, "can only concatenate str (not \"int\") to str"),
        // SecurityError: access to attribute 'append' of 'list' object is unsafe.
        JinjaFailureCase("list.append", "{% set l = [] %}{{ l.append(1) }}", "{}", .render, "access to attribute 'append' of 'list' object is unsafe."),
        // SecurityError: access to attribute 'update' of 'dict' object is unsafe.
        JinjaFailureCase("dict.update", "{% set d = {} %}{{ d.update({'a': 1}) }}", "{}", .render, "access to attribute 'update' of 'dict' object is unsafe."),
        // TypeError: object of type 'NoneType' has no len()
        JinjaFailureCase("length of none", "{{ none|length }}", "{}", .render, "object of type 'NoneType' has no len()"),
        // TypeError: 'NoneType' object is not iterable
        JinjaFailureCase("for over none", "{% for x in none %}{% endfor %}", "{}", .render, "'NoneType' object is not iterable"),
        // UndefinedError: 'nothing' is undefined
        JinjaFailureCase("call undefined", "{{ nothing() }}", "{}", .render, "'nothing' is undefined"),
        // TypeError: object of type 'generator' has no len()
        JinjaFailureCase("length of a generator", "{{ [1]|select|length }}", "{}", .render, "object of type 'generator' has no len()"),
        // ZeroDivisionError: division by zero
        JinjaFailureCase("division by zero", "{{ 1 / 0 }}", "{}", .render, "division by zero"),
        // TypeError: '<' not supported between instances of 'int' and 'str'
        JinjaFailureCase("int < str", "{{ 1 < 'a' }}", "{}", .render, "'<' not supported between instances of 'int' and 'str'"),
        // ValueError: too many values to unpack (expected 2)
        JinjaFailureCase("unpacking", "{% set a, b = [1, 2, 3] %}", "{}", .render, "too many values to unpack (expected 2)"),
        // TemplateRuntimeError: cannot assign attribute on non-namespace object
        JinjaFailureCase("set attribute of non-namespace", "{% set x = 1 %}{% set x.y = 2 %}", "{}", .render, "it is not a namespace()"),
        // TypeError: macro 'm' takes not more than 1 argument(s)
        JinjaFailureCase("macro arguments", "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", "{}", .render, "macro 'm' takes not more than 1 argument(s)"),
        // TemplateSyntaxError: expected token 'end of print statement', got 'integer'
        JinjaFailureCase("leading zeros", "{{ 007 }}", "{}", .syntax, "expected '}}' to end the expression, got integer 7"),
        // OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).
        JinjaFailureCase("huge range", "{{ range(1000000)|length }}", "{}", .render, "Range too big"),
    ]
}

final class JinjaConstructTests: XCTestCase {
    func testConstructsRenderAsJinja2Does() throws {
        for c in JinjaCases.constructs {
            guard case .object(let context) = try JinjaJSON.parse(c.context) else {
                XCTFail("\(c.name): context is not an object")
                continue
            }
            do {
                let template = try JinjaTemplate(source: c.template, name: c.name)
                XCTAssertEqual(try template.render(context, now: JinjaCases.now), c.expected, c.name)
            } catch {
                XCTFail("\(c.name): \(error)")
            }
        }
    }

    func testFailuresAreTypedAndSayWhatWentWrong() throws {
        for c in JinjaCases.failures {
            guard case .object(let context) = try JinjaJSON.parse(c.context) else {
                XCTFail("\(c.name): context is not an object")
                continue
            }
            do {
                let output = try JinjaTemplate(source: c.template, name: c.name).render(context)
                XCTFail("\(c.name): rendered \(output.debugDescription) instead of failing")
            } catch let error as ChatTemplateError {
                let text = error.description
                XCTAssertTrue(text.hasPrefix(c.name + ":1:"), "\(c.name): \(text) does not name the template and line")
                XCTAssertTrue(text.contains(c.message), "\(c.name): \(text)")
                switch (c.kind, error) {
                case (.syntax, .syntax), (.render, .render), (.raised, .raised), (.unsupported, .unsupported): break
                default: XCTFail("\(c.name): wrong kind of error: \(error)")
                }
            }
        }
    }
}
