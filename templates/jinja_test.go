package templates

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestJinjaRender(t *testing.T) {
	now := time.Date(2025, 3, 4, 9, 26, 53, 0, time.UTC)
	msgs := json.RawMessage(`[{"role":"user","content":"héllo","z":1,"a":{"b":[1,2.5,null,true]}}]`)
	tests := []struct {
		name, src string
		vars      JinjaVars
		want      string
		wantErr   string
	}{
		{"trim and lstrip blocks", "{% for m in messages %}\n  {% if true %}\n[{{ m.role }}]\n  {% endif %}\n{% endfor %}", JinjaVars{Messages: msgs}, "[user]\n", ""},
		{"python tojson keeps order and non-ASCII", "{{ messages[0] | tojson }}", JinjaVars{Messages: msgs},
			`{"role": "user", "content": "héllo", "z": 1, "a": {"b": [1, 2.5, null, true]}}`, ""},
		{"tojson indent", "{{ messages[0].a | tojson(indent=2) }}", JinjaVars{Messages: msgs}, "{\n  \"b\": [\n    1,\n    2.5,\n    null,\n    true\n  ]\n}", ""},
		{"python printing", "{{ none }} {{ true }} {{ tools }} {{ 1.0 }}", JinjaVars{Messages: msgs}, "None True None 1.0", ""},
		{"special tokens and kwargs", "{{ bos_token }}|{{ eos_token is defined }}|{{ enable_thinking }}", JinjaVars{Messages: msgs,
			Extra: map[string]json.RawMessage{"enable_thinking": json.RawMessage(`false`)}}, "<s>|False|False", ""},
		{"strftime_now from the given clock", "{{ strftime_now('%d %b %Y %-d') }}", JinjaVars{Messages: msgs, Now: now}, "04 Mar 2025 4", ""},
		{"loop controls and generation", "{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}{% generation %}g{% endgeneration %}",
			JinjaVars{Messages: msgs}, "02g", ""},
		{"crlf normalised as Jinja2 does", "{% if true %}\r\na\r\n{% endif %}\r\nb", JinjaVars{Messages: msgs}, "a\nb", ""},
		{"strftime_now without a clock", "{{ strftime_now('%Y') }}", JinjaVars{Messages: msgs}, "", "no clock"},
		{"raise_exception", "{{ raise_exception('Conversation roles must alternate') }}", JinjaVars{Messages: msgs}, "", "t: Conversation roles must alternate"},
		{"endless macro recursion fails cleanly", "{% macro f(x) %}{{ f(x) }}{% endmacro %}{{ f(1) }}", JinjaVars{Messages: msgs}, "", "recursion"},
		{"macros keep their arguments", "{%- macro f(a, b='d') -%}\n{{ a }}{{ b }}{% if a is string %}{{ f(1, b='x') }}{% endif %}\n{%- endmacro -%}\n{{ f('s') }}|{{ f() }}", JinjaVars{Messages: msgs}, "sd1x|d", ""},
		{"sandbox range", "{{ range(3) }}{{ range(1, 7, 2) }}{{ range(5, 0, -2) }}{{ range(100000) | length }}", JinjaVars{Messages: msgs}, "[0, 1, 2][1, 3, 5][5, 3, 1]100000", ""},
		{"sandbox range limit", "{% for i in range(100001) %}{% endfor %}", JinjaVars{Messages: msgs}, "", "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."},
		{"a brace before a stripped tag stays text", "a:{\n  {%- if true %}x{% endif -%}\n}|{ {{- 'y' -}} }|{{ '{' }}{# c #}{{ 'z' }}|{\n{#- c -#}\n%",
			JinjaVars{Messages: msgs}, "a:{x}|{y}|{z|{%", ""},
		{"a macro's depth guard strips no text", "{%- macro f(x) -%}\n{{- x -}}\n{%- endmacro -%}\n{{ f('a') }}\nb\n{% if true -%}\n{{ 'c' }}\nd{% endif %}",
			JinjaVars{Messages: msgs}, "a\nb\nc\nd", ""},
		{"messages must be an array", "x", JinjaVars{Messages: json.RawMessage(`{}`)}, "", "array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := CompileJinja("t", tt.src, SpecialTokens{BOS: "<s>"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := j.Render(tt.vars)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q (output %q)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJinjaRaiseIsTemplateError(t *testing.T) {
	j, err := CompileJinja("gemma", "{{ raise_exception('roles must alternate') }}", SpecialTokens{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = j.Render(JinjaVars{Messages: json.RawMessage(`[]`)})
	var te *TemplateError
	if !errors.As(err, &te) || te.Message != "roles must alternate" || te.Family != "gemma" {
		t.Fatalf("err = %#v, want *TemplateError with the template's message", err)
	}
}

func TestCompileJinjaErrors(t *testing.T) {
	for _, src := range []string{"", "{% if %}", "{{ x "} {
		if _, err := CompileJinja("bad", src, SpecialTokens{}); err == nil || !strings.HasPrefix(err.Error(), "templates: bad: ") {
			t.Errorf("CompileJinja(%q) err = %v, want a templates: bad: … error", src, err)
		}
	}
}

// TestJinjaLexerWhitespace checks the source normalisation (whitespace
// control, comments, trailing newline, line continuations, undefined
// iterables) on small templates; each want is what Jinja2 3.1.6 renders
// under render.py's configuration.
func TestJinjaLexerWhitespace(t *testing.T) {
	tests := []struct{ src, want string }{
		{"a{% for x in [1] %}{% endfor %}\n\nb{% if true %}{% endif %}", "a\nb"},
		{"x\n  {% if true %}\n  y\n  {% endif %}\nz\n", "x\n  y\nz"},
		{"{{ 'a' }}\n  {% if true %}b{% endif %}", "a\nb"},
		{"{{ 'a' }}  {% if true %}b{% endif %}", "a  b"},
		{"a  {%- if true -%}  \n b {%- endif %}\n c", "ab c"},
		{"{# c #}\n  x {#- c -#}  y\n{% if true %}  {# c #}\nz{% endif %}", "  xy\n  z"},
		{"{%+ if true %}\n  a\n  {%+ endif +%}\nb", "  a\n  \nb"},
		{"{{ 'p\\\nq' }}|{{ \"r\\\\\ns\" }}", "pq|r\\\ns"},
		{"{% set d = {} %}{{ d.x is iterable }}{{ d.x is not iterable }}{{ 'a' is iterable }}", "TrueFalseTrue"},
		{"\t{% if true %}a{% endif %}\n\n", "a"},
		{"{%- macro f(x) -%}\n  [{{ x }}]\n{%- endmacro -%}\n{{ f(1) }} {{ f(2) }}\n", "[1] [2]"},
	}
	for _, tt := range tests {
		j, err := CompileJinja("t", tt.src, SpecialTokens{})
		if err != nil {
			t.Fatalf("%q: %v", tt.src, err)
		}
		got, err := j.Render(JinjaVars{Messages: json.RawMessage(`[]`)})
		if err != nil {
			t.Fatalf("%q: %v", tt.src, err)
		}
		if got != tt.want {
			t.Errorf("%q rendered %q, Jinja2 renders %q", tt.src, got, tt.want)
		}
	}
}
