package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// exitInterrupted is the exit status of a command stopped by Ctrl-C
// (128 + SIGINT, as shells report it).
const exitInterrupted = 130

// interrupts turns Ctrl-C (SIGINT, and SIGTERM) into cancellation, the
// same way in every command: the first signal cancels the work under way
// (a generation, a chat message, a benchmark run) and the command ends it
// in its own words; a signal when no work is under way, or a second one
// before the first is handled, exits at once with status 130.
type interrupts struct {
	mu     sync.Mutex
	cancel context.CancelFunc // of the work under way; nil when idle
	fired  bool               // the work under way was interrupted
	// idle is the line printed when a signal exits with no work under way.
	idle string
	errw io.Writer
	exit func(code int)
	sigs chan os.Signal
	done chan struct{}
}

// watchInterrupts starts catching SIGINT and SIGTERM; stop ends it. name
// is the command, for the line a forced exit prints.
func watchInterrupts(errw io.Writer, name string) *interrupts {
	in := newInterrupts(errw, name, os.Exit)
	signal.Notify(in.sigs, syscall.SIGINT, syscall.SIGTERM)
	return in
}

// newInterrupts is watchInterrupts without the signals: in.sigs is fed by
// the caller (tests feed it directly).
func newInterrupts(errw io.Writer, name string, exit func(int)) *interrupts {
	in := &interrupts{errw: errw, exit: exit, sigs: make(chan os.Signal, 2), done: make(chan struct{}),
		idle: name + ": interrupted"}
	go in.loop(name)
	return in
}

func (in *interrupts) loop(name string) {
	for {
		select {
		case <-in.done:
			return
		case <-in.sigs:
		}
		in.mu.Lock()
		cancel, fired := in.cancel, in.fired
		if cancel != nil && !fired {
			in.fired = true
			in.mu.Unlock()
			cancel()
			continue
		}
		msg := in.idle
		if fired {
			msg = name + ": interrupted again; exiting at once"
		}
		in.mu.Unlock()
		fmt.Fprintf(in.errw, "toolharness: %s\n", msg)
		in.exit(exitInterrupted)
		return
	}
}

// work returns the context of one piece of work, cancelled by the next
// signal; end marks the work over and reports whether a signal
// interrupted it.
func (in *interrupts) work(parent context.Context) (ctx context.Context, end func() bool) {
	ctx, cancel := context.WithCancel(parent)
	in.mu.Lock()
	in.cancel, in.fired = cancel, false
	in.mu.Unlock()
	return ctx, func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		fired := in.fired
		in.cancel, in.fired = nil, false
		cancel()
		return fired
	}
}

// setIdle sets the line printed when a signal arrives with no work under
// way (chat at its prompt says how many messages it handled).
func (in *interrupts) setIdle(msg string) {
	in.mu.Lock()
	in.idle = msg
	in.mu.Unlock()
}

// stop stops catching signals.
func (in *interrupts) stop() {
	signal.Stop(in.sigs)
	close(in.done)
}
