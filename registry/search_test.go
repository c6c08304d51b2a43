package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/chat"
)

// manyTools registers 20 domains x 11 verbs = 220 deferred tools plus two
// core ones.
func manyTools(t *testing.T, opts Options) *Registry {
	t.Helper()
	r := New(opts)
	for _, core := range []string{"read_file", "write_file"} {
		if err := r.Register(Spec{Tool: chat.Tool{Name: core, Description: "Core " + core + ".", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}, Handler: nop}); err != nil {
			t.Fatal(err)
		}
	}
	domains := []string{"calendar", "email", "weather", "github", "slack", "jira", "database", "invoice", "customer", "inventory",
		"shipment", "payment", "dns", "kubernetes", "spotify", "maps", "translate", "stock", "flight", "hotel"}
	verbs := []string{"create", "list", "get", "update", "delete", "search", "export", "import", "archive", "share", "sync"}
	for _, d := range domains {
		for _, v := range verbs {
			name := d + "_" + v
			desc := fmt.Sprintf("%s a %s record. Use it to %s %s data for the user.", strings.ToUpper(v[:1])+v[1:], d, v, d)
			if name == "email_create" {
				desc = "Send an email message to one or more recipients."
			}
			schema := fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"id of the %s"}},"required":["%s_id"]}`, d, d, d)
			if err := r.Register(Spec{Tool: chat.Tool{Name: name, Description: desc, Parameters: json.RawMessage(schema)}, Handler: nop, Deferred: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return r
}

func TestToolSearch(t *testing.T) {
	r := manyTools(t, Options{})
	core := r.CoreTools()
	var names []string
	for _, c := range core {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"read_file", "write_file", ToolSearchName}, names); diff != "" {
		t.Fatalf("core tools (-want +got):\n%s", diff)
	}
	if n := len(r.Tools()); n != 223 {
		t.Fatalf("%d tools", n)
	}
	systemBefore, _ := r.renderCatalog(r.CoreTools())
	reminderBefore := r.DeferredReminder()
	if !strings.Contains(reminderBefore, "hotel_sync") || strings.Contains(systemBefore, "hotel_sync") {
		t.Fatal("deferred names belong in the reminder, not the system block")
	}

	search := func(q string) string {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"query": q, "max_results": 3})
		o := r.ExecuteOne(context.Background(), chat.ToolCall{ID: q, Name: ToolSearchName, Arguments: args})
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		return o.Result.Content
	}
	got := search("select:calendar_create, hotel_sync,nope")
	if !strings.HasPrefix(got, "Loaded 2 tool(s)") || !strings.Contains(got, `"name":"calendar_create"`) ||
		!strings.Contains(got, `"name":"hotel_sync"`) || !strings.HasSuffix(got, "Not found: nope.") {
		t.Errorf("select result:\n%s", got)
	}
	got = search("send email message")
	first := strings.SplitN(got, "\n", 3)
	if len(first) < 2 || !strings.Contains(first[1], `"name":"email_create"`) {
		t.Errorf("keyword search ranked wrong:\n%s", got)
	}
	if n := strings.Count(got, `{"type":"function"`); n != 3 {
		t.Errorf("max_results 3 gave %d tools", n)
	}
	if got := search("zebra"); !strings.HasPrefix(got, `No deferred tool matches "zebra".`) {
		t.Errorf("no match: %s", got)
	}
	if diff := cmp.Diff([]string{"calendar_create", "email_create", "email_delete", "email_archive", "hotel_sync"}, r.Loaded()); diff != "" {
		// Registration order; which ones: BM25 with name ties broken by name.
		t.Errorf("loaded (informational) (-want +got):\n%s", diff)
	}

	systemAfter, _ := r.renderCatalog(r.CoreTools())
	if systemAfter != systemBefore || r.DeferredReminder() != reminderBefore {
		t.Error("the system block or reminder changed after loading tools")
	}
	// A deferred tool is callable when its arguments are valid, loaded or not.
	if _, err := r.Validate(chat.ToolCall{Name: "stock_share", Arguments: json.RawMessage(`{"stock_id":"X"}`)}); err != nil {
		t.Errorf("deferred, never loaded: %v", err)
	}
	if _, err := r.Validate(chat.ToolCall{Name: "stock_share", Arguments: json.RawMessage(`{}`)}); err == nil {
		t.Error("deferred tool with invalid arguments accepted")
	}
	s, err := r.CatalogSavings()
	if err != nil {
		t.Fatal(err)
	}
	if s.DeferredTools != 220 || s.SavedTokens <= 0 || s.SavedTokens != (s.FullBytes-s.CoreBytes)/4 {
		t.Errorf("savings %+v", s)
	}
	t.Logf("catalog savings over 220 deferred tools (estimate, bytes/4): %+v", s)
}

func TestToolSearchUsesInjectedRenderer(t *testing.T) {
	r := manyTools(t, Options{RenderCatalog: func(ts []chat.Tool) (string, error) {
		var b strings.Builder
		for _, t := range ts {
			b.WriteString("<function>" + t.Name + "</function>")
		}
		return b.String(), nil
	}})
	o := r.ExecuteOne(context.Background(), chat.ToolCall{ID: "1", Name: ToolSearchName, Arguments: json.RawMessage(`{"query":"select:maps_get"}`)})
	if o.Result.Content != "Loaded 1 tool(s); you can call them now:\n<function>maps_get</function>" {
		t.Errorf("got %q", o.Result.Content)
	}
	if _, err := r.Validate(chat.ToolCall{Name: ToolSearchName, Arguments: json.RawMessage(`{"query":5}`)}); err == nil {
		t.Error("tool_search arguments are not validated")
	}
}

func TestNoToolSearchWithoutDeferred(t *testing.T) {
	r := newWeather(t, Options{})
	for _, tool := range r.CoreTools() {
		if tool.Name == ToolSearchName {
			t.Error("tool_search listed without deferred tools")
		}
	}
	if r.DeferredReminder() != "" {
		t.Error("reminder without deferred tools")
	}
	if _, err := r.Validate(chat.ToolCall{Name: ToolSearchName}); err == nil {
		t.Error("tool_search callable without deferred tools")
	}
}

func TestBM25Tokens(t *testing.T) {
	if diff := cmp.Diff([]string{"get", "weather", "now", "v2"}, tokens("getWeather_now-v2")); diff != "" {
		t.Error(diff)
	}
}
