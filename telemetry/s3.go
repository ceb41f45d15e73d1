package telemetry

import (
	"context"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithymiddleware "github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// S3ClientOptions returns the client options (s3adapter.Config's
// ClientOptions, or s3.New's) that make a span per HTTP request the S3
// client sends, each attempt of a retried request its own, named by the
// S3 operation ("s3 GetObject"), under the span of the request's context
// (a storage operation's) and only when there is one. A nil *Tracing
// returns none.
func (t *Tracing) S3ClientOptions() []func(*s3.Options) {
	if t == nil {
		return nil
	}
	return []func(*s3.Options){func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, t.s3Middleware)
	}}
}

// s3Middleware adds to a client's stack, after the retry step, a step
// that spans each attempt.
func (t *Tracing) s3Middleware(stack *smithymiddleware.Stack) error {
	return stack.Finalize.Add(smithymiddleware.FinalizeMiddlewareFunc("fencefsTrace",
		func(ctx context.Context, in smithymiddleware.FinalizeInput, next smithymiddleware.FinalizeHandler) (smithymiddleware.FinalizeOutput, smithymiddleware.Metadata, error) {
			if !trace.SpanFromContext(ctx).IsRecording() {
				return next.HandleFinalize(ctx, in)
			}
			op := awsmiddleware.GetOperationName(ctx)
			ctx, span := t.tracer.Start(ctx, "s3 "+op, trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attribute.String("rpc.system", "aws-api"), attribute.String("rpc.service", "S3"),
					attribute.String("rpc.method", op)))
			if req, ok := in.Request.(*smithyhttp.Request); ok {
				span.SetAttributes(attribute.String("http.request.method", req.Method))
				if req.URL != nil {
					span.SetAttributes(attribute.String("server.address", req.URL.Host))
				}
			}
			out, md, err := next.HandleFinalize(ctx, in)
			status := 0
			if resp, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && resp != nil {
				status = resp.StatusCode
				span.SetAttributes(attribute.Int("http.response.status_code", status))
			}
			// A missing key and a failed precondition are answers the
			// backend expects (a stat of a new file, a compare-and-swap
			// that lost), not failures of the request.
			if err != nil && status != 404 && status != 412 && status != 304 {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			span.End()
			return out, md, err
		}), smithymiddleware.After)
}
