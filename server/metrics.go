package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tools"
)

// Metrics are a server's Prometheus metrics, on a registry of their own,
// and the Link that counts and times tool calls.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	refusals *prometheus.CounterVec
	storage  *prometheus.CounterVec
	inFlight prometheus.Gauge
}

// NewMetrics returns the metrics of one server: tool calls by tool and
// outcome, their latency, quota refusals, storage requests, HTTP requests
// in flight, and the Go runtime's and the process's.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fencefs_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, refused, error)."}, []string{"tool", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "fencefs_tool_call_seconds",
			Help: "Duration of tool calls.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"tool"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fencefs_quota_refusals_total",
			Help: "Calls refused by a quota or rate limit, by limit."}, []string{"limit"}),
		storage: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fencefs_storage_requests_total",
			Help: "Requests to S3 and SFTP storage by mount and operation (the S3 operation, each attempt counted; the SFTP request type)."}, []string{"mount", "operation"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fencefs_http_requests_in_flight",
			Help: "MCP requests over HTTP being answered (event streams included)."}),
	}
	m.reg.MustRegister(m.calls, m.latency, m.refusals, m.storage, m.inFlight,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// gauge registers a gauge whose value fn reads at each scrape.
func (m *Metrics) gauge(name, help string, fn func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// StorageRequests is the counter of storage requests by mount and
// operation, for mountspec.Options.Requests.
func (m *Metrics) StorageRequests() *prometheus.CounterVec { return m.storage }

// Wrap implements Link: it counts the call by outcome and times it; a
// refusal by a quota is counted by its limit too. A nil *Metrics counts
// nothing.
func (m *Metrics) Wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	if m == nil {
		return next
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		refusal := &quotaRefusal{}
		res, err := next(context.WithValue(ctx, quotaRefusalKey{}, refusal), req)
		outcome := "ok"
		switch {
		case err != nil:
			outcome = "error"
		case res != nil && res.IsError:
			outcome = "refused"
			if refusal.limit != "" {
				m.refusals.WithLabelValues(refusal.limit).Inc()
			}
		}
		m.calls.WithLabelValues(t.Name, outcome).Inc()
		m.latency.WithLabelValues(t.Name).Observe(time.Since(start).Seconds())
		return res, err
	}
}

// quotaRefusal carries, in a call's context, the limit that refused it.
type quotaRefusal struct{ limit string }

type quotaRefusalKey struct{}

// noteQuotaRefusal records in ctx's call the limit of err, a
// quota.LimitError.
func noteQuotaRefusal(ctx context.Context, err error) {
	var le *quota.LimitError
	if r, ok := ctx.Value(quotaRefusalKey{}).(*quotaRefusal); ok && errors.As(err, &le) {
		r.limit = le.Limit
	}
}

// Gatherer is the metrics' registry, for a second export of the same
// values (an OpenTelemetry bridge).
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }
