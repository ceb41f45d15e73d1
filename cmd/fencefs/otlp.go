//go:build !fencefs_oneshot

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	prombridge "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/telemetry"
)

// otlpStopTimeout bounds the last export at shutdown.
const otlpStopTimeout = 5 * time.Second

// startOTLP exports over OTLP/HTTP to endpoint (a base URL, checked by
// config.CheckOTLPEndpoint, to which /v1/traces and /v1/metrics are
// appended as OTEL_EXPORTER_OTLP_ENDPOINT has them): the spans of the
// Tracing it returns, for server.Config.Tracing, and the server's
// Prometheus metrics, read from metrics at each export through the
// Prometheus bridge, so that /metrics and OTLP show the same values from
// one registry. The exporters' other settings (OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_BSP_SCHEDULE_DELAY, OTEL_METRIC_EXPORT_INTERVAL, ...) come from the
// environment. stop flushes what is pending and ends the exports.
func startOTLP(ctx context.Context, endpoint string, paths bool, metrics prometheus.Gatherer, logger *slog.Logger) (*telemetry.Tracing, func(context.Context) error, error) {
	base := strings.TrimSuffix(endpoint, "/")
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { logger.Warn("OTLP export", "error", err) }))
	res := resource.NewSchemaless(attribute.String("service.name", "fencefs"), attribute.String("service.version", readVersion().short()))
	texp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(base+"/v1/traces"))
	if err != nil {
		return nil, nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	mexp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(base+"/v1/metrics"))
	if err != nil {
		texp.Shutdown(ctx)
		return nil, nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(texp), sdktrace.WithResource(res))
	reader := sdkmetric.NewPeriodicReader(mexp, sdkmetric.WithProducer(prombridge.NewMetricProducer(prombridge.WithGatherer(metrics))))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
	tr := telemetry.New(telemetry.Options{TracerProvider: tp, Tenant: server.Tenant, Paths: paths})
	logger.Info("exporting traces and metrics over OTLP/HTTP", "endpoint", base, "paths", paths)
	return tr, func(ctx context.Context) error { return errors.Join(tp.Shutdown(ctx), mp.Shutdown(ctx)) }, nil
}

// stopOTLP flushes the exports within otlpStopTimeout, logging a failure.
func stopOTLP(ctx context.Context, stop func(context.Context) error, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), otlpStopTimeout)
	defer cancel()
	if err := stop(ctx); err != nil {
		logger.Warn("flushing the OTLP exports", "error", err)
	}
}
