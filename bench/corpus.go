package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/jsonerr"
)

// Parser reads one complete model output. The implementation over package
// parse lives with the caller (see ParseFunc); bench needs only this.
type Parser interface {
	Parse(raw string, tools []chat.Tool, strict bool) (ParseResult, error)
}

// ParseFunc adapts a function to Parser.
type ParseFunc func(raw string, tools []chat.Tool, strict bool) (ParseResult, error)

// Parse calls f.
func (f ParseFunc) Parse(raw string, tools []chat.Tool, strict bool) (ParseResult, error) {
	return f(raw, tools, strict)
}

// Validator checks a parsed call's arguments against its tool's schema
// (the registry). It returns nil for a valid call.
type Validator interface {
	Validate(tools []chat.Tool, call Call) []Problem
}

// CorpusRecord is one input line of `bench corpus`: the `parse --jsonl`
// record (raw, id, tools) plus optional model and expectations. Extra
// fields (the original benchmark's labels) are ignored.
type CorpusRecord struct {
	ID    string          `json:"id"`
	Model string          `json:"model,omitempty"`
	Raw   *string         `json:"raw"`
	Tools json.RawMessage `json:"tools,omitempty"`
	// Expected calls; matched by name only unless args are given, and
	// extra arguments are allowed.
	Expected     []ExpectedCall `json:"expected,omitempty"`
	ExpectNoCall bool           `json:"expect_no_call,omitempty"`
	Ordered      bool           `json:"ordered,omitempty"`
}

// CorpusOptions configure ScoreCorpus.
type CorpusOptions struct {
	// Format names the format the parser was built for; it is recorded.
	Format string
	Parser Parser
	// Validator may be nil: schema validity is then not checked.
	Validator Validator
	// Tools is the catalog for records without their own.
	Tools []chat.Tool
	// DefaultModel labels records without a model.
	DefaultModel string
}

// CorpusResult is a scored corpus.
type CorpusResult struct {
	Records []Record
	// Unreadable lists the input lines that were not a usable record
	// (not JSON, no "raw", bad tools): each is also a Record with Error
	// set, so reports count it, never a rate.
	Unreadable []LineError
	// NoCatalog counts records scored without any tool catalog (none of
	// their own and no CorpusOptions.Tools): every call they make names an
	// unknown tool.
	NoCatalog int
}

// LineError is one unreadable input line.
type LineError struct {
	Line    int
	Message string
}

// ErrNoRecords is returned (wrapped) by ScoreCorpus when the input has
// lines but none of them is a record.
var ErrNoRecords = errors.New("bench: no readable record")

// ScoreCorpus parses each recorded output strictly and leniently and
// judges it against its expectation. Each input line gives one Record
// (Mode "recorded", Attempt 0, Final). A line that cannot be read gives a
// record with Error set and is listed in Unreadable, never an aborted
// run; an input whose every line is unreadable (a binary file, the wrong
// file) is ErrNoRecords, and a read failure of r is an error.
func ScoreCorpus(r io.Reader, opts CorpusOptions) (CorpusResult, error) {
	var res CorpusResult
	if opts.Parser == nil {
		return res, errors.New("bench: ScoreCorpus needs a parser")
	}
	model := opts.DefaultModel
	if model == "" {
		model = "unknown"
	}
	rd := bufio.NewReader(r)
	for line := 1; ; line++ {
		text, err := rd.ReadBytes('\n')
		if len(bytes.TrimSpace(text)) > 0 {
			rec, unreadable, noCatalog := scoreLine(text, line, model, opts)
			res.Records = append(res.Records, rec)
			if unreadable {
				res.Unreadable = append(res.Unreadable, LineError{Line: line, Message: rec.Error})
			}
			if noCatalog {
				res.NoCatalog++
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return res, fmt.Errorf("bench: reading records: %w", err)
		}
	}
	if n := len(res.Records); n > 0 && len(res.Unreadable) == n {
		return res, inputError(ErrNoRecords, "none of the %d non-empty lines is a record (line %d: %s)", n, res.Unreadable[0].Line,
			strings.TrimPrefix(res.Unreadable[0].Message, fmt.Sprintf("input line %d: ", res.Unreadable[0].Line)))
	}
	return res, nil
}

// scoreLine scores one input line; unreadable says the line was not a
// usable record, noCatalog that it was scored without any tools.
func scoreLine(text []byte, line int, model string, opts CorpusOptions) (rec Record, unreadable, noCatalog bool) {
	rec = Record{ID: fmt.Sprintf("line-%d", line), Model: model, Format: opts.Format, Mode: "recorded", Final: true, Verdict: VerdictError}
	var in CorpusRecord
	if err := json.Unmarshal(text, &in); err != nil {
		rec.Error = fmt.Sprintf("input line %d: not a JSON record: %s", line, jsonerr.Describe(err))
		return rec, true, false
	}
	if in.ID != "" {
		rec.ID = in.ID
	}
	if in.Model != "" {
		rec.Model = in.Model
	}
	if in.Raw == nil {
		rec.Error = fmt.Sprintf("input line %d: no \"raw\" field", line)
		return rec, true, false
	}
	rec.Raw = *in.Raw
	tools := opts.Tools
	if hasJSON(in.Tools) {
		t, err := chat.ParseTools(in.Tools)
		if err != nil {
			rec.Error = fmt.Sprintf("input line %d: %v", line, err)
			return rec, true, false
		}
		tools = t
	}
	noCatalog = len(tools) == 0
	exp := Expectation{NoCall: in.ExpectNoCall, Calls: in.Expected, Ordered: in.Ordered, ExtraArgs: true}
	rec.Expected, rec.ExpectNoCall = exp.Calls, exp.NoCall
	var err error
	if rec.Strict, err = opts.Parser.Parse(rec.Raw, tools, true); err != nil {
		rec.Error = err.Error()
		return rec, false, noCatalog
	}
	if rec.Lenient, err = opts.Parser.Parse(rec.Raw, tools, false); err != nil {
		rec.Error = err.Error()
		return rec, false, noCatalog
	}
	rec.FailureKind = rec.Lenient.FailureKind()
	if opts.Validator != nil {
		for _, c := range rec.Lenient.Calls {
			if c.Error == nil {
				rec.SchemaErrors = append(rec.SchemaErrors, opts.Validator.Validate(tools, c)...)
			}
		}
	}
	rec.Verdict = Judge(exp, rec.Lenient, len(rec.SchemaErrors) > 0)
	rec.Success = rec.Verdict.Success()
	return rec, false, noCatalog
}
