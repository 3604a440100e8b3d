package sink_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/sink"
)

// Helpers shared by the tests of the package.

// s3Store returns an S3 sink on a new bucket of the test server (see s3On),
// and a client of the server.
func s3Store(t *testing.T, opt sink.S3Options, fault func(*http.Request) *http.Response) (*sink.S3, *s3.Client, string) {
	c := s3test.Client(t, s3test.Endpoint(t))
	opt.Bucket = s3test.NewBucket(t, c)
	return s3On(t, opt, fault), c, opt.Bucket
}

// s3On returns an S3 sink on the test server under the prefix p/, with
// opt's other settings, whose requests go through fault (nil: none).
func s3On(t *testing.T, opt sink.S3Options, fault func(*http.Request) *http.Response) *sink.S3 {
	opt.Prefix, opt.Endpoint, opt.PathStyle = "p/", s3test.Endpoint(t), true
	if fault != nil {
		t.Setenv("AWS_CA_BUNDLE", "") // the SDK cannot add a CA bundle to a client of its own
		opt.HTTPClient = &lockClient{fault: fault}
	}
	s, err := sink.NewS3(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
