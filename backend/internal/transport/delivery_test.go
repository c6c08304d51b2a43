package transport

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDelivery(t *testing.T) {
	start := time.Now()
	var got []string
	d := NewDelivery(start, func(s string) error { got = append(got, s); return nil })
	if d.Consumed() || d.FirstChunk() != 0 {
		t.Fatal("a fresh delivery has consumed something")
	}
	time.Sleep(2 * time.Millisecond)
	for _, p := range []string{"", "<tool", "", "_call>"} {
		if err := d.Send(p); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"<tool", "_call>"}, got); diff != "" {
		t.Errorf("chunks delivered (-want +got):\n%s", diff)
	}
	if d.Text() != "<tool_call>" || d.Len() != 11 || !d.Consumed() {
		t.Errorf("text %q len %d consumed %v", d.Text(), d.Len(), d.Consumed())
	}
	if f := d.FirstChunk(); f < 2*time.Millisecond || f > time.Since(start) {
		t.Errorf("first chunk after %v", f)
	}

	// Without a callback the text is still kept.
	quiet := NewDelivery(start, nil)
	if err := quiet.Send("x"); err != nil || quiet.Text() != "x" {
		t.Errorf("nil callback: %q, %v", quiet.Text(), err)
	}
}

func TestDeliveryCallbackError(t *testing.T) {
	stop := errors.New("caller: enough")
	d := NewDelivery(time.Now(), func(string) error { return stop })
	err := d.Send("a")
	cause, ok := CallbackCause(fmt.Errorf("client: %w", err))
	if !ok || cause != stop {
		t.Fatalf("CallbackCause = %v, %v; want the callback's own error", cause, ok)
	}
	if d.Text() != "a" || !d.Consumed() {
		t.Errorf("the piece the callback refused was still delivered: text %q", d.Text())
	}
	if _, ok := CallbackCause(errors.New("client error")); ok {
		t.Error("a client error taken for the callback's")
	}
}
