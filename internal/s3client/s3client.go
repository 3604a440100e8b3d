// Package s3client holds what the sink and the s3:// inputs share of S3: the
// client (the SDK's default configuration chain and its standard retryer
// without a client-side retry quota), the explainer of its errors and the
// split of an s3:// URL.
package s3client

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
)

// Options configure a client. Zero values take the defaults noted.
type Options struct {
	// Endpoint is the base URL of an S3-compatible store; "" keeps what the
	// SDK's configuration gives (AWS_ENDPOINT_URL, the shared config, AWS).
	Endpoint    string
	PathStyle   bool           // bucket in the path, not in the host name
	Region      string         // "": the SDK's chain; us-east-1 when it has none
	MaxAttempts int            // attempts per request, retries included (0: 6)
	HTTPClient  aws.HTTPClient // replaces the SDK's (tests inject faults with it)
}

// MaxIdleConns is how many idle connections to one host a client keeps:
// more than a run has requests in flight.
const MaxIdleConns = 64

// New loads the AWS configuration (environment, shared config and
// credentials files, profiles, SSO, IRSA, IMDS) and returns a client whose
// retryer retries throttling (503 SlowDown) and 5xx with backoff. more
// adjusts the client's options further.
func New(ctx context.Context, opt Options, more ...func(*s3.Options)) (*s3.Client, error) {
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = 6
	}
	var loadOpts []func(*config.LoadOptions) error
	if opt.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opt.Region))
	}
	hc := opt.HTTPClient
	if hc == nil {
		// The SDK's client keeps 10 idle connections per host: a run that
		// has more requests in flight (a thousand groups' small files, 32
		// at once) would close the others after each request and pay a new
		// TCP and TLS handshake for the next.
		hc = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConnsPerHost = MaxIdleConns
		})
	}
	loadOpts = append(loadOpts, config.WithHTTPClient(hc))
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("s3: load AWS configuration: %w", err)
	}
	// The SDK's warnings go through the standard log package, as net/http's
	// do, so that a run with JSON logs makes records of them.
	cfg.Logger = logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		log.Printf("aws-sdk-go-v2 %s: %s", c, fmt.Sprintf(format, v...))
	})
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // S3-compatible stores rarely care; AWS redirects the signature
	}
	return s3.NewFromConfig(cfg, append([]func(*s3.Options){func(o *s3.Options) {
		if opt.Endpoint != "" {
			o.BaseEndpoint = aws.String(opt.Endpoint)
		}
		o.UsePathStyle = opt.PathStyle
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = opt.MaxAttempts
			so.MaxBackoff = 20 * time.Second
			// The client-side retry quota would turn a long spell of
			// throttling into failures; the backoff already paces us.
			so.RateLimiter = ratelimit.None
		})
	}}, more...)...), nil
}
