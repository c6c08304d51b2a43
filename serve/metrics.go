package serve

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolharness/toolharness/agent"
)

// Metrics are the server's Prometheus figures, on a registry of their
// own. A nil *Metrics records nothing.
type Metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	generation *prometheus.HistogramVec
	parseFails *prometheus.CounterVec
	retries    *prometheus.CounterVec
	dropped    *prometheus.CounterVec
	reused     *prometheus.CounterVec
	prefilled  *prometheus.CounterVec
	replayed   *prometheus.CounterVec
	inFlight   prometheus.Gauge
}

// NewMetrics registers the server's metrics.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	byModel := []string{"api", "model"}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolharness_serve_requests_total",
		Help: "Requests by API, model and outcome (ok, tool_calls, invalid_dropped, bad_request, upstream_error, canceled, busy, unauthorized)."}, []string{"api", "model", "outcome"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "toolharness_serve_request_seconds",
		Help: "Wall time of a request, from its arrival to its last byte.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)}, byModel)
	m.generation = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "toolharness_serve_generation_seconds",
		Help: "Time spent in the model's generations of a request, retries included.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)}, byModel)
	m.parseFails = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolharness_serve_parse_failures_total",
		Help: "Generations with a call that could not be parsed."}, byModel)
	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolharness_serve_retries_total",
		Help: "Generations repeated inside a request after an invalid call."}, byModel)
	m.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolharness_serve_invalid_calls_dropped_total",
		Help: "Replies whose calls stayed invalid after the retries and reached no client."}, byModel)
	m.reused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolharness_serve_reused_prompt_tokens_total",
		Help: "Prompt tokens the backend took from its cache, where it says."}, byModel)
	m.prefilled = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolharness_serve_prefilled_prompt_tokens_total",
		Help: "Prompt tokens the backend evaluated anew."}, byModel)
	m.replayed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolharness_serve_replayed_turns_total",
		Help: "Assistant turns of returning histories rendered from the exact text the model wrote."}, byModel)
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "toolharness_serve_in_flight", Help: "Requests being served."})
	m.reg.MustRegister(m.requests, m.latency, m.generation, m.parseFails, m.retries, m.dropped, m.reused, m.prefilled, m.replayed, m.inFlight)
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *Metrics) request(api, model, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(api, model, outcome).Inc()
	if model != "" {
		m.latency.WithLabelValues(api, model).Observe(d.Seconds())
	}
}

func (m *Metrics) observeGeneration(api, model string, res agent.CaseResult, d time.Duration) {
	if m == nil || len(res.Attempts) == 0 {
		return
	}
	m.generation.WithLabelValues(api, model).Observe(d.Seconds())
	m.retries.WithLabelValues(api, model).Add(float64(res.Retries))
	for _, a := range res.Attempts {
		if len(a.ParseErrors) > 0 {
			m.parseFails.WithLabelValues(api, model).Inc()
		}
		u := a.Usage
		if u.CachedKnown {
			m.reused.WithLabelValues(api, model).Add(float64(u.CachedTokens))
			m.prefilled.WithLabelValues(api, model).Add(float64(u.PromptTokens - u.CachedTokens))
		}
	}
}

func (m *Metrics) invalidDropped(api, model string) {
	if m != nil {
		m.dropped.WithLabelValues(api, model).Inc()
	}
}

func (m *Metrics) replayedTurns(api, model string, n int) {
	if m != nil && n > 0 {
		m.replayed.WithLabelValues(api, model).Add(float64(n))
	}
}

func (m *Metrics) flight(delta float64) {
	if m != nil {
		m.inFlight.Add(delta)
	}
}
