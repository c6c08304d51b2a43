package templates

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFormatFilter: Jinja2's format filter (Python's %-formatting), which
// the engine lacks; each want is what Jinja2 3.1.6 renders.
func TestFormatFilter(t *testing.T) {
	tests := []struct{ src, want, wantErr string }{
		{`{{ '%r' | format('alpha') }}`, `'alpha'`, ""},
		{`{{ '%r' | format("it's") }}`, `"it's"`, ""},
		{`{{ '%r' | format('a\nb\\') }}`, `'a\nb\\'`, ""},
		{`{{ '%r|%r|%r|%r' | format(4242, True, none, 0.25) }}`, `4242|True|None|0.25`, ""},
		{`{{ '%r' | format({'k': [1, 'x'], 'b': false}) }}`, `{'k': [1, 'x'], 'b': False}`, ""},
		{`{{ '%s=%s' | format('k', {'a': 'b'}) }}`, `k={'a': 'b'}`, ""},
		{`{{ '%d|%5d|%-5d|%05d|%+d|%x|%#X|%o' | format(42, 42, 42, -42, 7, 255, 255, 8) }}`, `42|   42|42   |-0042|+7|ff|0XFF|10`, ""},
		{`{{ '%.2f|%8.3f|%e|%g|%g|%g|%G' | format(3.14159, 2.5, 12345.678, 0.0001, 1e-5, 123456789.0, 1e20) }}`,
			`3.14|   2.500|1.234568e+04|0.0001|1e-05|1.23457e+08|1E+20`, ""},
		{`{{ '%(name)s is %(age)d' | format(name='Zoë', age=7) }}`, `Zoë is 7`, ""},
		{`{{ '100%% %s' | format('sure') }}`, `100% sure`, ""},
		{`{{ '%c%c' | format('x', 65) }}`, `xA`, ""},
		{`{{ '%.3s|%5s|%-5s|' | format('abcdef', 'ab', 'ab') }}`, `abc|   ab|ab   |`, ""},
		{`{{ '%s' | format(x) }}|{{ '%r' | format(3) }}`, `|3`, ""},
		{`{{ '%s %s' | format('a') }}`, "", "not enough arguments for format string"},
		{`{{ '%s' | format('a', 'b') }}`, "", "not all arguments converted during string formatting"},
		{`{{ '%d' | format('a') }}`, "", "a real number is required, not str"},
		{`{{ '%s %(a)s' | format('x', a=1) }}`, "", "can't handle positional and keyword arguments at the same time"},
	}
	for _, tt := range tests {
		j, err := CompileJinja("t", tt.src, SpecialTokens{})
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		got, err := j.Render(JinjaVars{Messages: json.RawMessage(`[]`)})
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: err = %v, want %q", tt.src, err, tt.wantErr)
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.src, err)
		case tt.wantErr == "" && got != tt.want:
			t.Errorf("%s = %q, want %q", tt.src, got, tt.want)
		}
	}
}
