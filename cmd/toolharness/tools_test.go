package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const toolsFixture = `[
{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"city name"},"days":{"type":"integer","minimum":1,"description":"forecast days"}},"required":["city"],"additionalProperties":false}}},
{"name":"set_alarm","description":"Set an alarm.","input_schema":{"type":"object","properties":{"at":{"type":"string","description":"time, HH:MM"}},"required":["at"]}}
]`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"toolharness"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestToolsCheck(t *testing.T) {
	tools := writeFile(t, "tools.json", toolsFixture)
	in := strings.Join([]string{
		`{"name":"get_weather","arguments":{"city":"Paris","days":2}}`,
		`{"name":"get_weather","arguments":"{\"days\":\"3\",\"city\":\"Oslo\"}"}`,
		`{"name":"get_weather","arguments":{"days":0}}`,
		`{"name":"get_wether","arguments":{}}`,
		`not json`,
		``,
	}, "\n")
	out, stderr, code := runCLI(t, in, "tools", "check", "--tools", tools, "--format", "xml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `{"ok":true,"arguments":{"city":"Paris","days":2}}
{"ok":true,"arguments":{"days":3,"city":"Oslo"},"coercions":[{"path":"days","from":"\"3\"","to":"3"}]}
{"ok":false,"kind":"invalid_arguments","error":"Invalid arguments for get_weather:\n- city: missing (required, expected string)\n- days: expected an integer >= 1, given 0\nA valid call looks like:\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"<city>\",\"days\":1}}"}
{"ok":false,"kind":"unknown_tool","error":"There is no tool named \"get_wether\". Did you mean: get_weather?\nA valid call looks like:\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"<city>\"}}"}
{"ok":false,"kind":"input","error":"not a JSON object: invalid character 'o' in literal null (expecting 'u')"}
`
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	// Without a text format, "3" stays a string and is refused.
	out, _, _ = runCLI(t, `{"name":"get_weather","arguments":{"city":"Oslo","days":"3"}}`, "tools", "check", "--tools", tools, "--format", "hermes")
	if !strings.HasPrefix(out, `{"ok":false,"kind":"invalid_arguments"`) {
		t.Errorf("hermes coerced: %s", out)
	}
}

func TestToolsLint(t *testing.T) {
	bad := writeFile(t, "bad.json", `[
{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"units":{"type":"string","enum":["c","f"],"description":"units"}}}},
{"name":"GetWeather","description":"Weather for a city.","parameters":{"type":"object","properties":{"x":{"type":"strng","description":"x"}}}}
]`)
	out, stderr, code := runCLI(t, "", "tools", "lint", "--tools", bad)
	want := `error: GetWeather: name differs from "get_weather" only in case or separators; a model will confuse them
error: GetWeather: schema does not compile at /properties/x/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'
warning: get_weather: one-word description "Weather": say what the tool does and when to use it
warning: get_weather.city: parameter has no description
warning: get_weather.units: enum values are not explained in the description
`
	if out != want || code != 1 || !strings.Contains(stderr, "2 error(s)") {
		t.Errorf("exit %d, stderr %q, got\n%s", code, stderr, out)
	}
	good := writeFile(t, "good.json", toolsFixture)
	if out, _, code := runCLI(t, "", "tools", "lint", "--tools", good); code != 0 || out != "" {
		t.Errorf("clean catalog: exit %d: %s", code, out)
	}
}

func TestToolsList(t *testing.T) {
	tools := writeFile(t, "tools.json", toolsFixture)
	out, stderr, code := runCLI(t, "", "tools", "list", "--tools", tools, "--builtin", "--workspace", t.TempDir(), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			Name        string `json:"name"`
			SideEffects bool   `json:"side_effects"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		names = append(names, v.Name)
		if v.Name == "write_file" && !v.SideEffects {
			t.Error("write_file listed as read-only")
		}
	}
	if got := strings.Join(names, ","); got != "get_weather,set_alarm,read_file,list_dir,glob,grep,write_file,edit_file" {
		t.Errorf("names %s", got)
	}
	out, _, _ = runCLI(t, "", "tools", "list", "--tools", tools)
	want := "get_weather (read-only)\n    Current weather for a city.\n    - city: string (required) — city name\n    - days: integer — forecast days\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("text list:\n%s", out)
	}
}
