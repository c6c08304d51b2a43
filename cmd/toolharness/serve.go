package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/internal/reach"
	"github.com/toolharness/toolharness/serve"
	"github.com/toolharness/toolharness/templates"
	"github.com/toolharness/toolharness/templates/source"
)

// defaultServeCtx caps num_ctx when neither --num-ctx nor the config sets
// it: the model's window, at most this, fixed for the life of the server.
const defaultServeCtx = 16384

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve tool calling for a local model behind the OpenAI, Anthropic and Ollama APIs",
		ArgsUsage: " ",
		Description: `serve answers /v1/chat/completions (OpenAI), /v1/messages (Anthropic) and /api/chat (Ollama)
for any local model: the tool catalog is rendered with the model's own template, calls are parsed
from its raw text, validated against the request's schemas and retried inside the request when
invalid. Tools are never run by the server: the client runs them and sends the results back.
Each assistant turn the server produced is remembered (exact raw text, in memory, bounded), so a
returning history renders byte for byte as before and the model server reuses its cache.

Examples:
   toolharness serve --model qwen2.5:7b
   ANTHROPIC_BASE_URL=http://127.0.0.1:8090 ANTHROPIC_API_KEY=unused claude -p "list the files"
   OPENAI_BASE_URL=http://127.0.0.1:8090/v1 OPENAI_API_KEY=unused python my_agent.py
   OLLAMA_HOST=http://127.0.0.1:8090 ollama-client ...
   toolharness serve --config serve.yaml --listen 0.0.0.0:8090 --api-key "$KEY"`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8090", Usage: "`ADDR` to listen on; any address but loopback needs --api-key"},
			&cli.StringFlag{Name: "api-key", EnvVars: []string{"TOOLHARNESS_SERVE_API_KEY"}, Usage: "`KEY` every request must carry (Authorization: Bearer or x-api-key)"},
			&cli.StringFlag{Name: "config", Usage: "serve.yaml `FILE` naming several models (see docs/serve.md)"},
			hostFlag(),
			backendFlag(),
			&cli.StringFlag{Name: "backend-api-key", Usage: "bearer token for --backend openai or llamacpp"},
			modelFlag(),
			&cli.StringFlag{Name: "template", Usage: "template family; default: the model's own chat template, read from the server"},
			chatTemplateFlag(),
			&cli.StringFlag{Name: "format", Usage: "tool-call format; default: the family's"},
			&cli.IntFlag{Name: "num-ctx", Usage: fmt.Sprintf("context window, fixed for the life of the server (Ollama num_ctx); 0: the model's, at most %d", defaultServeCtx)},
			&cli.IntFlag{Name: "retries", Value: 2, Usage: "generations after an invalid call, inside one request"},
			&cli.Int64Flag{Name: "max-body", Value: 32 << 20, Usage: "largest request body in `BYTES`"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Minute, Usage: "deadline of one request, generation included"},
			&cli.IntFlag{Name: "max-concurrent", Value: 8, Usage: "requests served at once; more get 429 and Retry-After"},
			&cli.IntFlag{Name: "memory-turns", Value: 4096, Usage: "assistant turns remembered for byte-exact replay"},
			&cli.DurationFlag{Name: "stall-timeout", Value: 2 * time.Minute, Usage: "fail a generation that receives nothing for this long"},
			&cli.DurationFlag{Name: "shutdown-timeout", Value: 30 * time.Second, Usage: "on SIGINT/SIGTERM, wait this long for requests to finish, then cancel them"},
			&cli.StringFlag{Name: "trace", Usage: "append one JSON line per request to `FILE`"},
			&cli.BoolFlag{Name: "log-json", Usage: "log JSON lines instead of text"},
		}, templateVarFlags()...),
		Action: serveAction,
	}
}

// serveConfig is serve.yaml; flags fill what it leaves out.
type serveConfig struct {
	Listen  string             `yaml:"listen"`
	Backend string             `yaml:"backend"`
	Host    string             `yaml:"host"`
	Models  []serveModelConfig `yaml:"models"`
}

// serveModelConfig is one model of serve.yaml.
type serveModelConfig struct {
	Name         string `yaml:"name"`  // what clients ask for (default: model)
	Model        string `yaml:"model"` // the backend's name
	Backend      string `yaml:"backend"`
	Host         string `yaml:"host"`
	Template     string `yaml:"template"`
	ChatTemplate string `yaml:"chat_template"`
	Format       string `yaml:"format"`
	NumCtx       int    `yaml:"num_ctx"`
	Retries      int    `yaml:"retries"`
}

func serveAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError(c, "no arguments expected, got %q", c.Args().First())
	}
	cfg, err := readServeConfig(c)
	if err != nil {
		return err
	}
	if err := checkListen(cfg.Listen, c.String("api-key")); err != nil {
		return usageError(c, "%v", err)
	}
	logger := serveLogger(c)
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var models []*serve.Model
	for _, mc := range cfg.Models {
		m, err := serveModel(ctx, c, cfg, mc)
		if err != nil {
			return err
		}
		logger.Info("serve: model", "name", m.Name, "upstream", mc.Model, "format", m.Renderer.Format(), "num_ctx", m.Options.NumCtx, "window", m.Window)
		models = append(models, m)
	}
	metrics := serve.NewMetrics()
	ecfg := serve.EngineConfig{Models: models, MemoryTurns: c.Int("memory-turns"), Metrics: metrics, Log: logger}
	if f := c.String("trace"); f != "" {
		tf, err := os.OpenFile(f, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--trace %s: %w", f, unwrapPath(err))
		}
		defer tf.Close()
		ecfg.Trace = tf
	}
	eng, err := serve.NewEngine(ecfg)
	if err != nil {
		return err
	}
	scfg := serve.Config{Engine: eng, Metrics: metrics, Log: logger, APIKey: c.String("api-key"), MaxBody: c.Int64("max-body"),
		Timeout: c.Duration("timeout"), MaxConcurrent: c.Int("max-concurrent")}
	if cfg.Backend == "ollama" || cfg.Backend == "" {
		scfg.Ollama = cfg.Host
	}
	h, err := serve.NewServer(scfg)
	if err != nil {
		return err
	}
	return listenAndServe(ctx, c, cfg.Listen, h, logger)
}

// listenAndServe serves until ctx ends, then lets requests finish within
// --shutdown-timeout and cancels the rest.
func listenAndServe(ctx context.Context, c *cli.Context, addr string, h http.Handler, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	var inFlight atomic.Int64
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		h.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: counted, ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(c.App.ErrWriter, "toolharness: serving on http://%s (OpenAI /v1, Anthropic /v1/messages, Ollama /api/chat, /metrics, /healthz)\n", ln.Addr())
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	logger.Info("serve: shutting down", "grace", c.Duration("shutdown-timeout"))
	sctx, cancel := context.WithTimeout(context.Background(), c.Duration("shutdown-timeout"))
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// Past the grace period: closing the connections cancels the
		// requests' contexts, and so their generations upstream; the
		// handlers get a moment to return, so that the cancellations
		// reach the backend and the log before the process ends.
		n := inFlight.Load()
		_ = srv.Close()
		for end := time.Now().Add(5 * time.Second); inFlight.Load() > 0 && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		return fmt.Errorf("serve: %d requests still running after --shutdown-timeout %s were cancelled", n, c.Duration("shutdown-timeout"))
	}
	return nil
}

// checkListen refuses to expose the server without a key.
func checkListen(addr, key string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: want HOST:PORT", addr)
	}
	if key != "" {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %s is not a loopback address: set --api-key (or TOOLHARNESS_SERVE_API_KEY) so that only your clients can use the model", addr)
}

// readServeConfig merges serve.yaml and the flags; one model comes from
// --model when there is no config.
func readServeConfig(c *cli.Context) (serveConfig, error) {
	cfg := serveConfig{}
	if f := c.String("config"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return cfg, fmt.Errorf("--config %s: %w", f, unwrapPath(err))
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			return cfg, fmt.Errorf("--config %s: %w", f, err)
		}
		if len(cfg.Models) == 0 {
			return cfg, fmt.Errorf("--config %s: no models", f)
		}
	}
	if cfg.Listen == "" || c.IsSet("listen") {
		cfg.Listen = c.String("listen")
	}
	if cfg.Backend == "" || c.IsSet("backend") {
		cfg.Backend = c.String("backend")
	}
	if cfg.Host == "" || c.IsSet("host") {
		cfg.Host = serverHost(c)
	}
	if len(cfg.Models) == 0 {
		if c.String("model") == "" {
			return cfg, usageError(c, "--model is required (or TOOLHARNESS_MODEL), or --config serve.yaml")
		}
		cfg.Models = []serveModelConfig{{Model: c.String("model"), Template: c.String("template"), ChatTemplate: c.String("chat-template"),
			Format: c.String("format"), NumCtx: c.Int("num-ctx"), Retries: c.Int("retries")}}
	}
	tv, err := readTemplateVars(c)
	if err != nil {
		return cfg, err
	}
	for i, m := range cfg.Models {
		if m.Model == "" {
			return cfg, fmt.Errorf("serve config: models[%d]: model is required", i)
		}
		if m.Template != "" && tv.set() {
			return cfg, usageError(c, "--bos, --eos and --template-var apply to a model's own template (chat_template, or the server's), not to template %s", m.Template)
		}
		if m.Template != "" && m.ChatTemplate != "" {
			return cfg, fmt.Errorf("serve config: models[%d]: template and chat_template exclude each other", i)
		}
		if m.Template != "" {
			if _, err := templates.Lookup(m.Template); err != nil {
				return cfg, fmt.Errorf("serve config: models[%d]: %w", i, err)
			}
		}
		if err := checkChoice(c, "backend", m.Backend, backendKinds); m.Backend != "" && err != nil {
			return cfg, fmt.Errorf("serve config: models[%d]: backend %q: want ollama, llamacpp or openai", i, m.Backend)
		}
	}
	return cfg, nil
}

// serveModel builds one model: its backend, its template (named, a file
// or read from the server) and its fixed window.
func serveModel(ctx context.Context, c *cli.Context, cfg serveConfig, mc serveModelConfig) (*serve.Model, error) {
	kind, host := mc.Backend, mc.Host
	if kind == "" {
		kind = cfg.Backend
	}
	if host == "" {
		host = cfg.Host
	}
	host = normalizeHost(host)
	b, err := newBackendWith(backendFlags{kind: kind, host: host, apiKey: c.String("backend-api-key"), stall: c.Duration("stall-timeout")})
	if err != nil {
		return nil, err
	}
	if err := reach.Probe(ctx, kind, host, probeTimeout); err != nil {
		return nil, err
	}
	tv, err := readTemplateVars(c)
	if err != nil {
		return nil, err
	}
	fam, err := serveFamily(ctx, serverRef{kind: kind, host: host, apiKey: c.String("backend-api-key"), tv: tv}, mc, c.App.ErrWriter)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w (serve.yaml: set template or chat_template)", mc.Model, err)
	}
	r, err := agent.NewRenderer(agent.RendererOptions{Family: &fam, Format: mc.Format})
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", mc.Model, err)
	}
	name := mc.Name
	if name == "" {
		name = mc.Model
	}
	m := &serve.Model{Name: name, Upstream: mc.Model, Backend: b, Renderer: r, Retries: mc.Retries}
	if mc.Retries == 0 {
		m.Retries = -1 // retries: 0 means none
	}
	m.Window = mc.NumCtx
	if m.Window == 0 {
		m.Window = defaultServeCtx
		if cs, ok := b.(backend.ContextSizer); ok {
			if n, err := cs.ContextSize(ctx, mc.Model); err == nil && n > 0 && n < m.Window {
				m.Window = n
			}
		}
	}
	if kind == "ollama" || kind == "" {
		// Fixed for the life of the server: Ollama reloads the model
		// whenever num_ctx changes.
		m.Options.NumCtx = m.Window
	}
	return m, nil
}

// serveFamily is a model's template: a named family, a template file or
// the model's own, read from its server.
func serveFamily(ctx context.Context, srv serverRef, mc serveModelConfig, errw io.Writer) (templates.Family, error) {
	switch {
	case mc.Template != "":
		return templates.Lookup(mc.Template)
	case mc.ChatTemplate != "":
		t, err := source.Load(mc.ChatTemplate, source.Options{Tools: true})
		if err != nil {
			return templates.Family{}, fmt.Errorf("chat template: %w", err)
		}
		return loadedFamily(t, srv.tv, errw)
	}
	return modelFamily(ctx, srv, mc.Model, true, errw)
}

func serveLogger(c *cli.Context) *slog.Logger {
	if c.Bool("log-json") {
		return slog.New(slog.NewJSONHandler(c.App.ErrWriter, nil))
	}
	return slog.New(slog.NewTextHandler(c.App.ErrWriter, nil))
}
