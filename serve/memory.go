package serve

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/chat"
)

// Memory remembers, for each assistant turn the server produced, the
// messages the model really wrote (exact raw text, retried attempts) and,
// on a backend that returns them (llama.cpp), the token ids it wrote them
// in, keyed by what the caller got back: the call ids the server minted
// with the calls, or the text of an answer without calls. Bounded (least
// recently used goes first), in memory only. Safe for concurrent use.
type Memory struct {
	mu    sync.Mutex
	limit int
	order *list.List // of *memoryItem, most recent first
	items map[string]*list.Element
}

type memoryItem struct {
	key  string
	turn Turn
}

// Turn is one remembered assistant turn: the messages the model wrote
// (failed attempts with their error results, then the reply) and, by
// index in Msgs, the ids of those it generated, where the backend gave
// them (nil: none).
type Turn struct {
	Msgs []chat.Message
	IDs  []agent.TurnIDs
}

// NewMemory keeps at most limit keys (default 4096).
func NewMemory(limit int) *Memory {
	if limit <= 0 {
		limit = 4096
	}
	return &Memory{limit: limit, order: list.New(), items: map[string]*list.Element{}}
}

// Put remembers turn under every key.
func (m *Memory) Put(keys []string, turn Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if el, ok := m.items[k]; ok {
			el.Value.(*memoryItem).turn = turn
			m.order.MoveToFront(el)
			continue
		}
		m.items[k] = m.order.PushFront(&memoryItem{key: k, turn: turn})
		for m.order.Len() > m.limit {
			old := m.order.Remove(m.order.Back()).(*memoryItem)
			delete(m.items, old.key)
		}
	}
}

// Get returns the turn remembered under key: its message list a copy,
// its ids shared (never written after Put).
func (m *Memory) Get(key string) (Turn, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return Turn{}, false
	}
	m.order.MoveToFront(el)
	t := el.Value.(*memoryItem).turn
	t.Msgs = append([]chat.Message(nil), t.Msgs...)
	return t, true
}

// Len is the number of keys remembered.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}

// turnKey identifies an assistant turn as a caller sends it back: the
// model, and its calls (id, name, arguments with keys sorted and no
// spacing, as clients re-serialise them) or, without calls, its text
// without surrounding whitespace.
func turnKey(model string, msg chat.Message) string {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	if len(msg.ToolCalls) == 0 {
		h.Write([]byte("text\x00" + strings.TrimSpace(msg.Content)))
	}
	for _, c := range msg.ToolCalls {
		h.Write([]byte("call\x00" + c.ID + "\x00" + c.Name + "\x00"))
		h.Write(canonicalJSON(c.Arguments))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON re-encodes a JSON value with sorted keys and no spacing;
// what does not decode is kept as it is.
func canonicalJSON(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return []byte("{}")
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}
