package corpusgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// Record is one line of corpus.jsonl: the shape `bench corpus` reads, plus
// the original labels.
type Record struct {
	ID           string      `json:"id"`
	Model        string      `json:"model"`
	Source       string      `json:"source"`
	Raw          string      `json:"raw"`
	Tools        []chat.Tool `json:"tools"`
	Expected     []Expected  `json:"expected,omitempty"`
	ExpectNoCall bool        `json:"expect_no_call,omitempty"`
	Labels       Labels      `json:"labels"`
}

// Expected is an expected call, by name only.
type Expected struct {
	Name string `json:"name"`
}

// Labels are what the original benchmark recorded about the output.
type Labels struct {
	// Origin is "mikeveerman" or "hanxen".
	Origin string `json:"origin"`
	// Prompt is the user prompt (query).
	Prompt string `json:"prompt"`
	// Called and Names: did the original parser find calls, and which.
	Called bool     `json:"called"`
	Names  []string `json:"names,omitempty"`
	// Parser names who produced Called/Names: "mikeveerman harness",
	// "vllm" (the server's tool parser) or "hanxen classifier".
	Parser string `json:"parser"`
	// ValidArgs is mikeveerman's harness_valid_args.
	ValidArgs *bool `json:"valid_args,omitempty"`
	// Backend (mikeveerman) or strategy (hanxen) of the run.
	Backend  string `json:"backend,omitempty"`
	Strategy string `json:"strategy,omitempty"`
	// DetectedFormat is hanxen's output classifier.
	DetectedFormat string `json:"detected_format,omitempty"`
	// Leftover marks records whose raw is the content a server left after
	// extracting the calls itself (vLLM's parser for hanxen, Ollama's native
	// tool calling for mikeveerman's "ollama" backend).
	Leftover bool `json:"leftover,omitempty"`
	// ReasoningOnly marks records whose raw ends with the </think> block:
	// whatever the model wrote after its reasoning is not in the record
	// (Qwen3-8B output_format runs), so no call can be expected of it.
	ReasoningOnly bool `json:"reasoning_only,omitempty"`
}

func reasoningOnly(raw string) bool {
	i := strings.LastIndex(raw, "</think>")
	return i >= 0 && strings.TrimSpace(raw[i+len("</think>"):]) == ""
}

// The conversational queries of hanXen's integration runs.
var hanxenRestraint = []string{
	"Hello!", "Who are you?", "I'm feeling great today!", "Thank you for your help!",
	"What's your favorite color?", "Tell me a joke", "What programming languages are you good at?",
	"How are you doing today?", "What can you do?", "Goodbye!",
}

// Generate reads the corpus directory and returns corpus.jsonl.
func Generate(corpusDir string) ([]byte, error) {
	var recs []Record
	mv, err := mikeveerman(corpusDir)
	if err != nil {
		return nil, err
	}
	recs = append(recs, mv...)
	hx, err := hanxen(corpusDir)
	if err != nil {
		return nil, err
	}
	recs = append(recs, hx...)
	seen := map[string]bool{}
	var b bytes.Buffer
	for _, r := range recs {
		if seen[r.ID] {
			return nil, fmt.Errorf("corpusgen: duplicate id %s", r.ID)
		}
		seen[r.ID] = true
		data, err := chat.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("corpusgen: %s: %w", r.ID, err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

func readLines(path string, each func(line int, data []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("corpusgen: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := each(n, sc.Bytes()); err != nil {
			return fmt.Errorf("corpusgen: %s line %d: %w", filepath.Base(path), n, err)
		}
	}
	return sc.Err()
}

func mikeveerman(dir string) ([]Record, error) {
	cfgData, err := os.ReadFile(filepath.Join(dir, "mikeveerman_tools.json"))
	if err != nil {
		return nil, fmt.Errorf("corpusgen: %w", err)
	}
	var cfg struct {
		Source        string            `json:"source"`
		Prompts       []string          `json:"prompts"`
		Restraint     []int             `json:"restraint_indices"`
		ExpectedTools map[string]string `json:"expected_tools"`
	}
	if err := json.Unmarshal(cfgData, &cfg); err != nil {
		return nil, fmt.Errorf("corpusgen: mikeveerman_tools.json: %w", err)
	}
	tools, err := chat.ParseTools(cfgData)
	if err != nil {
		return nil, err
	}
	restraint := map[int]bool{}
	for _, i := range cfg.Restraint {
		restraint[i] = true
	}
	var out []Record
	err = readLines(filepath.Join(dir, "mikeveerman_raw.jsonl"), func(_ int, data []byte) error {
		var in struct {
			Source      string `json:"source"`
			Model       string `json:"model"`
			Backend     string `json:"backend"`
			Run         int    `json:"run"`
			PromptIndex int    `json:"prompt_index"`
			Raw         string `json:"raw"`
			Called      bool   `json:"harness_tool_called"`
			Name        string `json:"harness_tool_name"`
			ValidArgs   bool   `json:"harness_valid_args"`
			Calls       []struct {
				Name string `json:"name"`
			} `json:"harness_calls"`
		}
		if err := json.Unmarshal(data, &in); err != nil {
			return err
		}
		if in.PromptIndex < 0 || in.PromptIndex >= len(cfg.Prompts) {
			return fmt.Errorf("prompt_index %d out of range", in.PromptIndex)
		}
		r := Record{
			ID:     fmt.Sprintf("mikeveerman/%s/%s/run%d/p%d", in.Model, in.Backend, in.Run, in.PromptIndex),
			Model:  in.Model,
			Source: in.Source,
			Raw:    in.Raw,
			Tools:  tools,
			Labels: Labels{
				Origin: "mikeveerman", Prompt: cfg.Prompts[in.PromptIndex], Called: in.Called,
				Parser: "mikeveerman harness", Backend: in.Backend, ValidArgs: &in.ValidArgs,
			},
		}
		for _, c := range in.Calls {
			r.Labels.Names = append(r.Labels.Names, c.Name)
		}
		if len(r.Labels.Names) == 0 && in.Name != "" {
			r.Labels.Names = []string{in.Name}
		}
		// Backend "ollama" used Ollama's native tool calling: when it found
		// a call, the call came back structured and raw is only the content
		// left beside it.
		r.Labels.Leftover = in.Backend == "ollama" && in.Called
		if restraint[in.PromptIndex] && !r.Labels.Leftover {
			r.ExpectNoCall = true
		}
		if name, ok := cfg.ExpectedTools[strconv.Itoa(in.PromptIndex)]; ok && !r.Labels.Leftover {
			r.Expected = []Expected{{Name: name}}
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

type hanxenLine struct {
	Source         string   `json:"source"`
	Model          string   `json:"model"`
	Strategy       string   `json:"system_prompt_strategy"`
	Query          string   `json:"query"`
	Raw            string   `json:"raw"`
	DetectedFormat *string  `json:"detected_format"`
	ServerCalls    []hxCall `json:"server_parsed_tool_calls"`
	ParserSuccess  *bool    `json:"parser_success"`
	ToolNames      []string `json:"tool_names"`
}

type hxCall struct {
	Name string `json:"name"`
}

// labelNames returns the names vLLM's parser extracted and whether the
// record carries such a label at all.
func (h hanxenLine) labelNames() ([]string, bool) {
	if h.ParserSuccess != nil {
		return h.ToolNames, true
	}
	if h.ServerCalls != nil {
		var names []string
		for _, c := range h.ServerCalls {
			names = append(names, c.Name)
		}
		return names, true
	}
	return nil, false
}

func hanxen(dir string) ([]Record, error) {
	toolsData, err := os.ReadFile(filepath.Join(dir, "hanxen_tools.yaml"))
	if err != nil {
		return nil, fmt.Errorf("corpusgen: %w", err)
	}
	tools, err := chat.ParseTools(toolsData)
	if err != nil {
		return nil, err
	}
	var lines []hanxenLine
	err = readLines(filepath.Join(dir, "hanxen_qwen_raw.jsonl"), func(_ int, data []byte) error {
		var h hanxenLine
		if err := json.Unmarshal(data, &h); err != nil {
			return err
		}
		lines = append(lines, h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Consensus per query: the most frequent non-empty list of names.
	votes := map[string]map[string]int{}
	labelled := map[string]int{}
	for _, h := range lines {
		names, ok := h.labelNames()
		if !ok {
			continue
		}
		labelled[h.Query]++
		if len(names) == 0 {
			continue
		}
		if votes[h.Query] == nil {
			votes[h.Query] = map[string]int{}
		}
		votes[h.Query][strings.Join(names, ",")]++
	}
	restraint := map[string]bool{}
	for _, q := range hanxenRestraint {
		if labelled[q] == 0 || len(votes[q]) > 0 {
			return nil, fmt.Errorf("corpusgen: hanxen query %q is listed as conversational but its labels disagree", q)
		}
		restraint[q] = true
	}
	counter := map[string]int{}
	var out []Record
	for _, h := range lines {
		file := h.Source
		if i := strings.LastIndex(file, ":"); i >= 0 {
			file = file[i+1:]
		}
		file = strings.TrimSuffix(strings.TrimPrefix(file, "results/"), ".json")
		base := fmt.Sprintf("hanxen/%s/%s", file, h.Strategy)
		counter[base]++
		r := Record{
			ID: fmt.Sprintf("%s/%d", base, counter[base]), Model: h.Model, Source: h.Source, Raw: h.Raw, Tools: tools,
			Labels: Labels{Origin: "hanxen", Prompt: h.Query, Strategy: h.Strategy},
		}
		if h.DetectedFormat != nil {
			r.Labels.DetectedFormat = *h.DetectedFormat
		}
		names, ok := h.labelNames()
		switch {
		case ok:
			r.Labels.Parser = "vllm"
			r.Labels.Names = names
			r.Labels.Called = len(names) > 0
		default:
			r.Labels.Parser = "hanxen classifier"
			r.Labels.Called = h.DetectedFormat != nil && *h.DetectedFormat != "other"
		}
		// When vLLM extracted calls, raw is what it left as content (both
		// the integration and the output_format runs record it so).
		r.Labels.Leftover = ok && len(names) > 0
		r.Labels.ReasoningOnly = reasoningOnly(h.Raw)
		switch {
		case restraint[h.Query]:
			r.ExpectNoCall = true
		case !r.Labels.Leftover && !r.Labels.ReasoningOnly && len(votes[h.Query]) > 0:
			for _, n := range strings.Split(majority(votes[h.Query]), ",") {
				r.Expected = append(r.Expected, Expected{Name: n})
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// majority returns the most voted key, ties broken by the key.
func majority(v map[string]int) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if v[keys[i]] != v[keys[j]] {
			return v[keys[i]] > v[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys[0]
}
