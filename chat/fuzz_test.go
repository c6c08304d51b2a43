package chat

import (
	"os"
	"strings"
	"testing"
)

func TestYAMLLimits(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("a: &a [x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g"} {
		bomb.WriteString(name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n")
		prev = name
	}
	deep := strings.Repeat("- ", 600) + "x\n"
	for name, in := range map[string]string{
		"alias bomb":      bomb.String(),
		"recursive alias": "a: &a [1, *a]\n",
		"too deep":        deep,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTools([]byte(in))
			if err == nil || !strings.Contains(err.Error(), "YAML") {
				t.Errorf("got %v, want a YAML limit error", err)
			}
		})
	}
}

// FuzzParseTools: any tools or messages file gives a result or an error,
// never a panic, and what parses survives a round trip.
func FuzzParseTools(f *testing.F) {
	for _, path := range []string{"../testdata/corpus/mikeveerman_tools.json", "../testdata/corpus/hanxen_tools.yaml"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1}"}}]}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`))
	f.Add([]byte("a: &a [1, *a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if tools, err := ParseTools(data); err == nil {
			out, err := MarshalTools(tools)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			back, err := ParseTools(out)
			if err != nil || len(back) != len(tools) {
				t.Fatalf("round trip: %v (%d tools, %d back)\n%s", err, len(tools), len(back), out)
			}
		}
		if c, err := ParseConversation(data); err == nil {
			if _, err := Marshal(c); err != nil {
				t.Fatalf("marshal conversation: %v", err)
			}
		}
	})
}
