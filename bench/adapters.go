package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/registry"
)

// NewParser returns the Parser over package parse for format (one of
// parse.Formats(), "auto" included).
func NewParser(format string) (Parser, error) {
	if _, err := parse.New(format, parse.Options{}); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return ParseFunc(func(raw string, tools []chat.Tool, strict bool) (ParseResult, error) {
		res, err := parse.String(format, raw, parse.Options{Tools: tools, Strict: strict})
		if err != nil {
			return ParseResult{}, fmt.Errorf("bench: %w", err)
		}
		return FromParse(res), nil
	}), nil
}

// FromParse converts a parse.Result.
func FromParse(res parse.Result) ParseResult {
	out := ParseResult{Content: res.Content, Calls: []Call{}}
	for _, c := range res.Calls {
		call := Call{Name: c.Name, Arguments: c.Arguments, Repairs: c.Repairs}
		if c.Err != nil {
			call.Error = &Problem{Kind: string(c.Err.Kind), Message: c.Err.Message}
		}
		out.Calls = append(out.Calls, call)
	}
	for _, e := range res.Errors {
		out.Errors = append(out.Errors, Problem{Kind: string(e.Kind), Message: e.Message})
	}
	if e := res.EndTurn; e != nil {
		out.EndTurn = &Problem{Kind: string(e.Kind), Message: e.Message}
	}
	return out
}

// notRun is the handler of tools registered only to validate calls.
func notRun(context.Context, json.RawMessage) (string, error) {
	return "", errors.New("bench: tool registered for validation only")
}

// RegistryValidator validates calls with package registry, one registry
// per distinct catalog (a corpus mixes a few).
type RegistryValidator struct {
	mu    sync.Mutex
	cache map[string]*registry.Registry
}

// NewRegistryValidator returns a Validator backed by the registry.
func NewRegistryValidator() *RegistryValidator {
	return &RegistryValidator{cache: map[string]*registry.Registry{}}
}

// Validate implements Validator.
func (v *RegistryValidator) Validate(tools []chat.Tool, call Call) []Problem {
	reg, err := v.registryFor(tools)
	if err != nil {
		return []Problem{{Kind: "catalog", Message: err.Error()}}
	}
	_, err = reg.Validate(chat.ToolCall{Name: call.Name, Arguments: call.Arguments})
	if err == nil {
		return nil
	}
	var re *registry.Error
	if errors.As(err, &re) {
		return []Problem{{Kind: string(re.Kind), Message: re.ModelMessage()}}
	}
	return []Problem{{Kind: "invalid", Message: err.Error()}}
}

func (v *RegistryValidator) registryFor(tools []chat.Tool) (*registry.Registry, error) {
	key, err := chat.MarshalTools(tools)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if r, ok := v.cache[string(key)]; ok {
		return r, nil
	}
	r := registry.New(registry.Options{})
	for _, t := range tools {
		if err := r.Register(registry.Spec{Tool: t, Handler: notRun}); err != nil {
			return nil, fmt.Errorf("bench: registering %s: %w", t.Name, err)
		}
	}
	v.cache[string(key)] = r
	return r, nil
}
