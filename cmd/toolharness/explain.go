package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/internal/reach"
)

// The one line a command fails with is its name, then the cause in the
// user's terms, then the fix: "run: model "x" not found on URL: pull it
// first (ollama pull x)". The packages' own chained prefixes ("agent:
// generation 1: backend: ollama: server (HTTP 404): …") say where an
// error came from, which a user does not need; explainError reads the
// typed errors that a user can act on and says them again. Errors it does
// not know stay as they are.

// modelNotFoundError is a model the server does not have.
type modelNotFoundError struct {
	kind, host, model string
	err               error
}

func (e *modelNotFoundError) Error() string {
	if e.kind == "" || e.kind == "ollama" {
		return fmt.Sprintf("model %q not found on %s: pull it first (ollama pull %s)", e.model, e.host, e.model)
	}
	return fmt.Sprintf("model %q not found on %s: load it on the server, or pass the name the server lists", e.model, e.host)
}

func (e *modelNotFoundError) Unwrap() error { return e.err }

// explainError is err as the cause and the fix, for the command's line.
func explainError(c *cli.Context, err error) string {
	kind, host := c.String("backend"), serverHost(c)
	if re := reach.FromError(err, kind, host); re != nil {
		return re.Error()
	}
	var mnf *modelNotFoundError
	if errors.As(err, &mnf) {
		return mnf.Error()
	}
	var le *agent.LimitError
	if errors.As(err, &le) {
		return fmt.Sprintf("%s: %s", le.Stop, le.Detail)
	}
	var be *backend.Error
	if errors.As(err, &be) {
		return explainBackend(be, kind, host, c.String("model"), c.String("mode"))
	}
	return err.Error()
}

// explainBackend says a backend failure in the user's terms.
func explainBackend(e *backend.Error, kind, host, model, mode string) string {
	said := e.Message
	if said == "" && e.Err != nil {
		said = e.Err.Error()
	}
	server := reach.ServerName(kind) + " at " + host
	switch e.Kind {
	case backend.KindServer:
		if e.Status == 404 {
			return explain404(e, kind, host, model, mode, said)
		}
		return fmt.Sprintf("%s answered HTTP %d: %s", server, e.Status, said)
	case backend.KindCanceled:
		return "interrupted"
	case backend.KindStalled:
		return fmt.Sprintf("%s sent nothing for the --stall-timeout: %s; raise --stall-timeout for a slow model", server, said)
	case backend.KindStreamCut:
		return fmt.Sprintf("%s ended the reply before it was complete (%s): the server may have crashed or been stopped", server, said)
	case backend.KindContextOverflow:
		return fmt.Sprintf("the prompt does not fit the model's context window (%s): raise --num-ctx or shorten the conversation", said)
	case backend.KindBadResponse:
		return fmt.Sprintf("%s answered something that is not its API (%s): check --backend and --host", server, said)
	}
	return said
}

// explain404 tells the three causes of a 404 apart: a missing model, an
// OpenAI-compatible host given without /v1, an endpoint that takes chat
// requests only.
func explain404(e *backend.Error, kind, host, model, mode, said string) string {
	if kind == "ollama" || kind == "" {
		// Ollama answers 404 on its generation endpoints for a model
		// it does not have, and for nothing else.
		return (&modelNotFoundError{kind: kind, host: host, model: model}).Error()
	}
	if kind == "openai" && !strings.HasSuffix(strings.TrimSuffix(host, "/"), "/v1") {
		return fmt.Sprintf("%s has no OpenAI-compatible API at that path (HTTP 404: %s): the API is under /v1: pass --host %s/v1",
			host, said, strings.TrimSuffix(host, "/"))
	}
	if strings.Contains(said, model) {
		// The server named the model in its answer: it does not have it.
		return fmt.Sprintf("model %q not found on %s (HTTP 404: %s): load it on the server, or pass the name the server lists", model, host, said)
	}
	if mode == string(backend.ModeRaw) {
		return fmt.Sprintf("%s has no text-completion endpoint for raw mode (HTTP 404: %s): it takes chat requests only: pass --mode chat", host, said)
	}
	return fmt.Sprintf("%s answered HTTP 404: %s", host, said)
}

// causer is a package's error that can say its cause in the user's terms,
// without the package's words (bench.InputError, registry.SchemaError and
// RegisterError, mcp.SpecError, chat.InputError): a command that names the
// input itself shows that, read with errors.As rather than by trimming a
// prefix.
type causer interface{ Cause() string }

// userCause is err's cause in the user's terms when a package says it,
// else err as it is.
func userCause(err error) string {
	var c causer
	if errors.As(err, &c) {
		return c.Cause()
	}
	return err.Error()
}
