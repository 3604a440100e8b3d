// Package s3obj reads input objects from S3 or an S3-compatible store: it
// lists the objects an s3:// argument names (one key, a prefix, a glob) and
// reads each one pinned to the version it was listed with, by position
// (ReaderAt, with a bounded prefetch of byte ranges) or as a stream that
// resumes where a dropped connection left off. It knows nothing of the
// formats it carries; pipeline/input decodes them.
package s3obj

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/sitemapgen/sitemapgen/internal/s3client"
)

// Options configure a Store. Zero values take the defaults noted.
type Options struct {
	// Endpoint is the base URL of an S3-compatible store. "" keeps what the
	// SDK's default configuration gives (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3,
	// the shared config file, or AWS itself).
	Endpoint  string
	PathStyle bool   // bucket in the path, not in the host name
	Region    string // "" : the SDK's default chain; us-east-1 when it has none

	// MaxAttempts is the attempts per request, retries with backoff
	// included (0: 6), as the S3 sink's.
	MaxAttempts int
	// Resumes is how many times a body cut short (connection reset,
	// unexpected EOF) is resumed with a Range request, per request
	// (0: 5; < 0: none).
	Resumes int

	// HTTPClient replaces the SDK's HTTP client (tests inject faults with it).
	HTTPClient aws.HTTPClient
}

// Store reads objects of one S3 endpoint; it is safe for concurrent use.
type Store struct {
	client  *s3.Client
	resumes int
	total   Counter
}

// New loads the AWS configuration the way the S3 sink does (environment,
// shared config and credentials files, profiles, IMDS/IRSA) and builds a
// client with the SDK's standard retryer: throttling (503 SlowDown) and 5xx
// are retried with backoff, without a client-side retry quota. It makes no
// request: List and Stat fail with one clear line on a wrong endpoint, bad
// credentials or a missing bucket.
func New(ctx context.Context, opt Options) (*Store, error) {
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = 6
	}
	switch {
	case opt.Resumes == 0:
		opt.Resumes = 5
	case opt.Resumes < 0:
		opt.Resumes = 0
	}
	client, err := s3client.New(ctx, s3client.Options{Endpoint: opt.Endpoint, PathStyle: opt.PathStyle,
		Region: opt.Region, MaxAttempts: opt.MaxAttempts, HTTPClient: opt.HTTPClient},
		// Ranged GETs carry no whole-object checksum: not worth a log line each.
		func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
	if err != nil {
		return nil, err
	}
	return &Store{client: client, resumes: opt.Resumes}, nil
}

// Totals returns the requests made and bytes fetched by every reader and
// listing of the store so far (for the progress line).
func (s *Store) Totals() Stats { return s.total.Load() }

// Stats are the requests made and the body bytes received.
type Stats struct {
	Requests int64 // GETs, HEADs and LISTs sent; the SDK's retries of one are not counted again
	Bytes    int64 // object bytes received, resumed and prefetched ones included
}

// Counter counts requests and bytes; the zero value is ready.
type Counter struct{ requests, bytes atomic.Int64 }

// Load returns the counts so far.
func (c *Counter) Load() Stats { return Stats{c.requests.Load(), c.bytes.Load()} }

// Sentinel errors, tested with errors.Is on an *Error.
var (
	// ErrChanged: the object's ETag is no longer the one it was listed
	// (or first read) with: it was rewritten or deleted during the run.
	ErrChanged = errors.New("the object changed during the run (ETag no longer matches): rerun on a stable export")
	// ErrNotExist is fs.ErrNotExist: no such object, or no such bucket.
	ErrNotExist = fs.ErrNotExist
	// ErrPermission is fs.ErrPermission: access denied or credentials refused.
	ErrPermission = fs.ErrPermission
	// ErrBadResponse: the server answered with other bytes than asked
	// (a length, a range or a size that does not add up).
	ErrBadResponse = errors.New("the server's answer does not match the request")
	// ErrRefused: a listing the run must not read (no _SUCCESS marker with
	// RequireSuccess, a Delta table, nothing matching).
	ErrRefused = errors.New("refused")
)

// Error is a failed operation on s3://Bucket/Key, said in one line for
// people: "s3://bucket/key: what is wrong". Err wraps a sentinel above and,
// where there is one, the SDK's error.
type Error struct {
	URL string // s3://bucket/key
	Msg string // what is wrong, for people
	Err error
}

func (e *Error) Error() string { return e.URL + ": " + e.Msg }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

func objURL(bucket, key string) string { return "s3://" + bucket + "/" + key }

// explain turns the SDK's layered error from a request on bucket/key into
// one *Error that says what is wrong and what to check, in
// s3client.Explain's words, wrapping its sentinel.
func explain(err error, bucket, key string) error {
	u := objURL(bucket, key)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", u, err)
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "PreconditionFailed":
			return &Error{u, ErrChanged.Error(), errors.Join(ErrChanged, err)}
		case "InvalidRange":
			return &Error{u, "the object is shorter than listed (InvalidRange)", errors.Join(ErrChanged, err)}
		}
	}
	var se *s3client.Error
	if !errors.As(s3client.Explain(err, bucket, key, "s3:ListBucket, s3:GetObject"), &se) {
		return &Error{u, err.Error(), err}
	}
	if se.Kind != nil {
		return &Error{u, se.Msg, errors.Join(se.Kind, err)}
	}
	return &Error{u, se.Msg, err}
}
