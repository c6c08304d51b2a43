package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolharness/toolharness/chat"
)

// Record is one line of results.jsonl: one attempt at one case in one cell
// of the matrix (or one recorded output scored offline).
type Record struct {
	// ID is the case id (or the corpus record's id).
	ID     string `json:"id"`
	Model  string `json:"model"`
	Format string `json:"format"`
	// FormatUsed is the format actually prompted when Format is Native
	// ("auto" in results made before).
	FormatUsed string `json:"format_used,omitempty"`
	Mode       string `json:"mode"`
	Category   string `json:"category,omitempty"`
	Endpoint   string `json:"endpoint,omitempty"`
	Repeat     int    `json:"repeat"`
	// Attempt is 0 for the first try, k for the k-th retry.
	Attempt int `json:"attempt"`
	// Final marks the last attempt of the case; its Retries and Success
	// describe the whole case.
	Final bool   `json:"final"`
	Raw   string `json:"raw"`
	// Strict and Lenient are the two parsers' readings of Raw.
	Strict  ParseResult `json:"strict"`
	Lenient ParseResult `json:"lenient"`
	// FailureKind is the lenient parser's first error kind ("" if none).
	FailureKind  string    `json:"failure_kind,omitempty"`
	SchemaErrors []Problem `json:"schema_errors,omitempty"`
	// Expected says what the case wanted, for reading the file alone.
	Expected     []ExpectedCall `json:"expected,omitempty"`
	ExpectNoCall bool           `json:"expect_no_call,omitempty"`
	Verdict      Verdict        `json:"verdict"`
	Success      bool           `json:"success"`
	// Retries is the number of retries the case needed (on the final
	// record: Attempt of the final record).
	Retries int `json:"retries"`
	// Tokens and timings, where the server reports them.
	PromptTokens    int  `json:"prompt_tokens,omitempty"`
	GeneratedTokens int  `json:"generated_tokens,omitempty"`
	CachedTokens    int  `json:"cached_tokens,omitempty"`
	CachedKnown     bool `json:"cached_known,omitempty"`
	// ReusedPromptTokens is the prompt prefix the server reused from its
	// KV cache and NewPromptTokens the prompt tokens it evaluated, for
	// this request, where the server says (llama.cpp timings.cache_n and
	// prompt_n, OpenAI-compatible cached_tokens); absent where it does not
	// (Ollama).
	ReusedPromptTokens *int    `json:"reused_prompt_tokens,omitempty"`
	NewPromptTokens    *int    `json:"new_prompt_tokens,omitempty"`
	TTFTMillis         float64 `json:"ttft_ms,omitempty"`
	TotalMillis        float64 `json:"total_ms,omitempty"`
	// StopReason is how the server said the generation ended ("length":
	// cut by the token limit, verdict truncated); absent for recorded
	// outputs.
	StopReason string `json:"stop_reason,omitempty"`
	// Error is a harness or server failure of the attempt.
	Error string `json:"error,omitempty"`
}

// setReuse fills the reuse figures from an attempt's usage.
func (r *Record) setReuse(a AttemptRun) {
	if !a.CachedKnown {
		return
	}
	reused, fresh := a.CachedTokens, a.PromptTokens-a.CachedTokens
	r.ReusedPromptTokens, r.NewPromptTokens = &reused, &fresh
}

// Key identifies a case within a run: resume skips keys already final.
type Key struct {
	Model, Format, Mode, ID string
	Repeat                  int
}

// Key returns the record's case key.
func (r Record) Key() Key {
	return Key{Model: r.Model, Format: r.Format, Mode: r.Mode, ID: r.ID, Repeat: r.Repeat}
}

// ResultsFile is the name of the results file inside an output directory.
const ResultsFile = "results.jsonl"

// ResultsWriter appends records to results.jsonl. A case's records are
// written together and fsynced before WriteCase returns, so after a crash
// the file holds whole cases plus at most one torn last line, which
// ReadResults drops and OpenResults truncates.
type ResultsWriter struct {
	mu sync.Mutex
	f  *os.File
}

// OpenResults opens DIR/results.jsonl for appending. With resume it keeps
// the records of the cases already measured there (cutting a torn last
// line, dropping cases that ended in an error so they run again) and
// returns them;
// without resume an existing non-empty file is an error rather than being
// overwritten.
func OpenResults(dir string, resume bool) (*ResultsWriter, []Record, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	path := filepath.Join(dir, ResultsFile)
	var kept []Record
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		if !resume {
			return nil, nil, fmt.Errorf("bench: %s already has results; use --resume to continue it or another --out", path)
		}
		recs, good, err := readResults(path)
		if err != nil {
			return nil, nil, err
		}
		if good < st.Size() {
			if err := os.Truncate(path, good); err != nil {
				return nil, nil, fmt.Errorf("bench: cutting the torn last line of %s: %w", path, err)
			}
		}
		kept = measuredCases(recs)
		if len(kept) != len(recs) {
			// Cases that ended in an error run again (an error is not a
			// measurement), and records of a case without its final record
			// cannot happen with WriteCase: rewrite without both rather
			// than duplicate them.
			if err := rewrite(path, kept); err != nil {
				return nil, nil, err
			}
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	return &ResultsWriter{f: f}, kept, nil
}

// hasResults reports whether DIR/results.jsonl holds anything.
func hasResults(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, ResultsFile))
	return err == nil && st.Size() > 0
}

// WriteCase appends the records of one case and syncs the file.
func (w *ResultsWriter) WriteCase(recs []Record) error {
	var b bytes.Buffer
	for _, r := range recs {
		data, err := chat.Marshal(r)
		if err != nil {
			return fmt.Errorf("bench: record %s: %w", r.ID, err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(b.Bytes()); err != nil {
		return fmt.Errorf("bench: writing results: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("bench: syncing results: %w", err)
	}
	return nil
}

// Close closes the file.
func (w *ResultsWriter) Close() error { return w.f.Close() }

// ReadResults reads DIR/results.jsonl (or a results file given directly).
// A torn last line (a crash mid-write) is ignored; a bad line elsewhere is
// an error naming its line.
func ReadResults(path string) ([]Record, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, ResultsFile)
	}
	recs, _, err := readResults(path)
	return recs, err
}

// readResults returns the records and the byte length of the good prefix.
func readResults(path string) ([]Record, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var recs []Record
	var good int64
	for line := 1; ; line++ {
		text, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// No newline: a torn write, unless it is a complete record.
			if len(bytes.TrimSpace(text)) > 0 {
				var rec Record
				if json.Unmarshal(text, &rec) == nil {
					recs = append(recs, rec)
					good += int64(len(text))
				}
			}
			return recs, good, nil
		}
		if err != nil {
			return nil, 0, fmt.Errorf("bench: %s: %w", path, err)
		}
		if len(bytes.TrimSpace(text)) > 0 {
			var rec Record
			if err := json.Unmarshal(text, &rec); err != nil {
				return nil, 0, fmt.Errorf("bench: %s line %d: %w", path, line, err)
			}
			recs = append(recs, rec)
		}
		good += int64(len(text))
	}
}

// measuredCases keeps the records of cases that have a final record
// without an error.
func measuredCases(recs []Record) []Record {
	final := map[Key]bool{}
	for _, r := range recs {
		if r.Final && r.Error == "" {
			final[r.Key()] = true
		}
	}
	var out []Record
	for _, r := range recs {
		if final[r.Key()] {
			out = append(out, r)
		}
	}
	return out
}

func rewrite(path string, recs []Record) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	w := &ResultsWriter{f: f}
	if len(recs) > 0 {
		if err := w.WriteCase(recs); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// WriteResults replaces DIR/results.jsonl with recs (for scoring runs that
// are recomputed whole, such as `bench corpus`).
func WriteResults(dir string, recs []Record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return rewrite(filepath.Join(dir, ResultsFile), recs)
}
