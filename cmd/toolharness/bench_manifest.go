package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/toolharness/toolharness/bench"
	"github.com/urfave/cli/v2"
)

// newManifest starts the manifest of a bench command: the command, its
// flags as given and the toolharness build.
func newManifest(c *cli.Context) *bench.Manifest {
	facts := readBuildFacts(debug.ReadBuildInfo())
	m := &bench.Manifest{
		Command:     commandPath(c),
		Created:     time.Now().UTC().Format(time.RFC3339),
		Toolharness: bench.Build{Version: facts.Version, Revision: facts.Revision, Modified: facts.Modified},
		Flags:       map[string]string{},
	}
	for _, name := range c.LocalFlagNames() {
		if !c.IsSet(name) || m.Flags[name] != "" {
			continue
		}
		switch v := c.Value(name).(type) {
		case cli.StringSlice:
			m.Flags[name] = strings.Join(v.Value(), ",")
		default:
			m.Flags[name] = fmt.Sprint(c.Value(name))
		}
	}
	return m
}

// liveManifest is the manifest of a bench run or compare: what the flags
// ask for, the chat template of each model and what each server says of
// itself. A server that does not answer leaves its facts out; the run
// reports it.
func liveManifest(ctx context.Context, c *cli.Context, lr liveRun, d *bench.AgentDriver) (*bench.Manifest, error) {
	m := newManifest(c)
	suite, err := bench.NewSuiteID(lr.suite)
	if err != nil {
		return nil, err
	}
	retries := d.MaxRetries
	m.Suite, m.Models, m.Formats, m.Modes = suite, lr.models, lr.formats, lr.modes
	m.Repeats, m.MaxRetries, m.Backend = max(c.Int("repeats"), 1), &retries, c.String("backend")
	m.Constrained, m.ConstrainMaxString, m.Whole = d.Constrained, d.ConstrainMaxString, d.Whole
	m.Sampling = &bench.Sampling{MaxTokens: d.Options.MaxTokens, Seed: d.Options.Seed, NumCtx: d.Options.NumCtx}
	if d.Options.Temperature != nil {
		m.Sampling.Temperature = *d.Options.Temperature
	}
	client := &http.Client{}
	reachable := false
	for _, ep := range lr.endpoints {
		info := bench.DescribeServer(ctx, client, m.Backend, ep.URL, lr.models)
		reachable = reachable || info.Error == ""
		m.Servers = append(m.Servers, info)
	}
	m.Templates = map[string]bench.TemplateID{}
	source := "the model's own template on the server"
	switch {
	case c.String("template") != "":
		source = "--template " + c.String("template")
	case c.String("chat-template") != "":
		source = "--chat-template " + c.String("chat-template")
	}
	for _, model := range lr.models {
		key := model
		if source != "the model's own template on the server" {
			key = "" // one template for every model
		} else if !reachable {
			m.Templates[key] = bench.TemplateID{Source: source, Error: "no server answered"}
			continue
		}
		if _, done := m.Templates[key]; done {
			continue
		}
		m.Templates[key] = templateID(ctx, d, lr.endpoints[0].URL, model, source)
	}
	return m, nil
}

func templateID(ctx context.Context, d *bench.AgentDriver, endpoint, model, source string) bench.TemplateID {
	id := bench.TemplateID{Source: source}
	fam, err := d.ModelTemplate(ctx, endpoint, model)
	if err != nil {
		id.Error = oneLine(err.Error())
		return id
	}
	id.Family, id.SHA256 = fam.Name, bench.Hash([]byte(fam.Source()))
	return id
}
