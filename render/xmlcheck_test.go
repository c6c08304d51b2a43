package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/antchfx/xmlquery"

	"github.com/toolharness/toolharness/chat"
)

// xmlBlock cuts the element named tag, start to end tag, out of text.
func xmlBlock(t *testing.T, text, tag string) string {
	t.Helper()
	start := strings.Index(text, "<"+tag+">")
	end := strings.LastIndex(text, "</"+tag+">")
	if start < 0 || end < start {
		t.Fatalf("no <%s> block in:\n%s", tag, text)
	}
	return text[start : end+len("</"+tag+">")]
}

// TestXMLCatalogIsStrictXML checks the xml catalog with a strict XML parser:
// one <function> element per tool, in order, each holding the single-line
// JSON of the tool (description, name, parameters).
func TestXMLCatalogIsStrictXML(t *testing.T) {
	tools := testTools(t)[:2] // no '<' or '&' in these descriptions
	catalog, err := Catalog("xml", tools)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := xmlquery.Parse(strings.NewReader(xmlBlock(t, catalog, "functions")))
	if err != nil {
		t.Fatalf("catalog is not well-formed XML: %v", err)
	}
	fns := xmlquery.Find(doc, "/functions/function")
	if len(fns) != len(tools) {
		t.Fatalf("%d <function> elements, want %d", len(fns), len(tools))
	}
	for i, fn := range fns {
		text := fn.InnerText()
		if strings.Contains(text, "\n") {
			t.Errorf("function %d: JSON is not on one line: %q", i, text)
		}
		var got struct {
			Description string          `json:"description"`
			Name        string          `json:"name"`
			Parameters  json.RawMessage `json:"parameters"`
		}
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			t.Fatalf("function %d: %v in %q", i, err, text)
		}
		if got.Name != tools[i].Name || got.Description != tools[i].Description {
			t.Errorf("function %d: got %s %q, want %s %q", i, got.Name, got.Description, tools[i].Name, tools[i].Description)
		}
		if !strings.HasPrefix(text, `{"description": `) {
			t.Errorf("function %d: keys not in catalog order (description, name, parameters): %q", i, text)
		}
	}
}

// TestXMLResultsAreStrictXML checks the <function_results> block of the
// xml format with a strict parser, for plain results.
func TestXMLResultsAreStrictXML(t *testing.T) {
	calls := []chat.ToolCall{
		{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris"}`)},
		{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"/a"}`)},
	}
	results := []chat.ToolResult{
		{CallID: "call_0", Name: "get_weather", Content: "18 degrees"},
		{CallID: "call_1", Name: "read_file", Content: "no such file", IsError: true},
	}
	out, err := Results("xml", calls, results, false)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := xmlquery.Parse(strings.NewReader(xmlBlock(t, out, "function_results")))
	if err != nil {
		t.Fatalf("results are not well-formed XML: %v\n%s", err, out)
	}
	if n := len(xmlquery.Find(doc, "/function_results/*")); n != len(results) {
		t.Errorf("%d result elements, want %d:\n%s", n, len(results), out)
	}
	if !strings.Contains(xmlquery.Find(doc, "/function_results")[0].InnerText(), "18 degrees") {
		t.Errorf("result text missing:\n%s", out)
	}
}
