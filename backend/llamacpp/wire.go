package llamacpp

import (
	"encoding/json"
	"time"

	"github.com/toolharness/toolharness/backend"
)

// completionRequest is the body of POST /completion. Field order is the
// order the JSON is written in; the golden request files depend on it.
type completionRequest struct {
	// Prompt is a string, or a mixed array of strings and token ids (one
	// prompt, see prompt.go).
	Prompt       any             `json:"prompt"`
	Stream       bool            `json:"stream"`
	CachePrompt  bool            `json:"cache_prompt"`
	ReturnTokens bool            `json:"return_tokens,omitempty"`
	NPredict     *int            `json:"n_predict,omitempty"`
	Stop         []string        `json:"stop,omitempty"`
	Temperature  *float64        `json:"temperature,omitempty"`
	TopK         *int            `json:"top_k,omitempty"`
	TopP         *float64        `json:"top_p,omitempty"`
	Seed         *int            `json:"seed,omitempty"`
	Grammar      string          `json:"grammar,omitempty"`
	JSONSchema   json.RawMessage `json:"json_schema,omitempty"`
}

// completionChunk is one SSE event of a streamed /completion, or the whole
// answer of a non-streamed one. The final event of a stream carries
// stop=true and the same summary fields as the non-streamed answer.
type completionChunk struct {
	Content string `json:"content"`
	// Tokens are the ids of this chunk (streamed: always sent), or of the
	// whole generation (non-streamed, only with return_tokens).
	Tokens       []int  `json:"tokens"`
	Stop         bool   `json:"stop"`
	StopType     string `json:"stop_type"`
	StoppingWord string `json:"stopping_word"`
	// Older servers report the stop cause as three booleans instead of
	// stop_type; read both so either generation of server works.
	StoppedEOS      bool           `json:"stopped_eos"`
	StoppedWord     bool           `json:"stopped_word"`
	StoppedLimit    bool           `json:"stopped_limit"`
	Truncated       bool           `json:"truncated"`
	TokensCached    *int           `json:"tokens_cached"`
	TokensEvaluated *int           `json:"tokens_evaluated"`
	TokensPredicted *int           `json:"tokens_predicted"`
	Timings         *timings       `json:"timings"`
	Error           *serverErrBody `json:"error"`
}

type timings struct {
	CacheN      *int    `json:"cache_n"`
	PromptN     int     `json:"prompt_n"`
	PromptMS    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMS float64 `json:"predicted_ms"`
}

// serverErrBody is the OpenAI-style error object llama-server answers with.
type serverErrBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Type    string `json:"type"`
}

type errorEnvelope struct {
	Error *serverErrBody `json:"error"`
}

// stopReason maps the server's stop cause onto backend.Response.StopReason.
// A generation the server cut because the context filled up is reported
// as "truncated" so it is never mistaken for a normal end.
func (c *completionChunk) stopReason() string {
	switch {
	case c.Truncated:
		return "truncated"
	case c.StopType == "eos" || c.StopType == "word" || c.StoppedEOS || c.StoppedWord:
		return "stop"
	case c.StopType == "limit" || c.StoppedLimit:
		return "length"
	}
	return c.StopType
}

// stopSequence is the stop word that ended generation: stopping_word when
// the server says a word stopped it (stop_type "word", or stopped_word on
// older servers), "" otherwise.
func (c *completionChunk) stopSequence() string {
	if c.StopType == "word" || c.StoppedWord {
		return c.StoppingWord
	}
	return ""
}

// usage reads the figures of the final chunk. tokens_evaluated is the
// whole prompt (cached part included), timings.cache_n the prompt prefix
// reused from the slot's cache and timings.prompt_n the prompt tokens
// evaluated anew (prompt_n + cache_n = tokens_evaluated). tokens_cached
// is NOT a reuse figure: it is every token the slot holds after the
// request, prompt and generated (tokens_evaluated + tokens_predicted - 1
// normally), and is kept as SlotTokens. A server that sends no cache_n
// (older builds) leaves CachedKnown false.
func (c *completionChunk) usage() backend.Usage {
	var u backend.Usage
	if c.TokensPredicted != nil {
		u.GeneratedTokens = *c.TokensPredicted
	}
	if t := c.Timings; t != nil {
		u.GeneratedTokens = t.PredictedN
		u.PromptDuration = msDuration(t.PromptMS)
		u.GenerateDuration = msDuration(t.PredictedMS)
		u.PromptTokens = t.PromptN
		if t.CacheN != nil {
			u.PromptTokens += *t.CacheN
			u.CachedTokens, u.CachedKnown = *t.CacheN, true
		}
	}
	if c.TokensEvaluated != nil {
		u.PromptTokens = *c.TokensEvaluated
	}
	if c.TokensCached != nil {
		u.SlotTokens = *c.TokensCached
	}
	return u
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
