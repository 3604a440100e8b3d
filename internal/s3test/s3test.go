// Package s3test connects tests to a real S3-compatible server (versitygw,
// started by .ci/versitygw.sh) and injects faults with a proxy on 127.0.0.1.
// Without SITEMAPGEN_TEST_S3_ENDPOINT the tests skip, unless
// SITEMAPGEN_REQUIRE_S3 is set (CI sets it), in which case they fail.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Environment variables.
const (
	EndpointEnv = "SITEMAPGEN_TEST_S3_ENDPOINT" // e.g. http://127.0.0.1:7070
	RequireEnv  = "SITEMAPGEN_REQUIRE_S3"       // "1": a missing server fails the tests
)

// Endpoint returns the test server's URL, skipping or failing t without one.
func Endpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv(EndpointEnv)
	if ep == "" {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is not set and %s is: start the server with .ci/versitygw.sh", EndpointEnv, RequireEnv)
		}
		t.Skipf("no S3 test server (%s unset; see .ci/versitygw.sh)", EndpointEnv)
	}
	return ep
}

// Client returns a path-style client of the server with the credentials of
// the environment.
func Client(t testing.TB, endpoint string) *s3.Client {
	t.Helper()
	ak, sk := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if ak == "" || sk == "" {
		t.Fatalf("AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY unset: eval \"$(.ci/versitygw.sh env)\"")
	}
	return s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(ak, sk, ""),
	})
}

var bucketSeq atomic.Int64

// NewBucket creates an empty bucket for t and removes it, with its objects
// and open uploads, when t ends.
func NewBucket(t testing.TB, c *s3.Client) string {
	t.Helper()
	name := fmt.Sprintf("sitemapgen-test-%d-%d", time.Now().UnixNano()%1e9, bucketSeq.Add(1))
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	t.Cleanup(func() {
		ups, _ := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(name)})
		if ups != nil {
			for _, u := range ups.Uploads {
				c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(name), Key: u.Key, UploadId: u.UploadId})
			}
		}
		for _, k := range Keys(t, c, name, "") {
			c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String(k)})
		}
		c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)})
	})
	return name
}

// Keys lists every key under prefix.
func Keys(t testing.TB, c *s3.Client, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list %s/%s: %v", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}

// Object is a downloaded object with the headers it is served with.
type Object struct {
	Data                                    []byte
	ContentType, ContentEncoding, CacheCtrl string
}

// Put writes data under key, as another client would.
func Put(t testing.TB, c *s3.Client, bucket, key string, data []byte) {
	t.Helper()
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
}

// ExportKeys are the keys of the layouts exports leave below one bucket: a
// Spark export (spark/) with its _SUCCESS, Hive folders, hidden files and a
// CSV among the Parquet and Arrow parts, one without _SUCCESS (nosuccess/),
// a Delta table (delta/), a lone CSV (one/). PutExport writes them.
var ExportKeys = []string{
	"spark/_SUCCESS",
	"spark/part-00001-c000.snappy.parquet",
	"spark/part-00000-c000.snappy.parquet",
	"spark/date=2024-01-02/part-00000.parquet",
	"spark/date=2024-01-01/part-00000.parquet",
	"spark/date=2024-01-01/.part-00000.parquet.crc",
	"spark/_temporary/0/part-00009.parquet",
	"spark/.hidden/x.parquet",
	"spark/urls.csv",
	"spark/b.arrow",
	"nosuccess/data_0_0_0.snappy.parquet",
	"delta/_delta_log/00000000000000000000.json",
	"delta/part-00000.parquet",
	"one/file.csv",
}

// PutExport writes ExportKeys into bucket, each holding "x" and its key,
// and an empty spark/empty-folder/ (a console's "folder").
func PutExport(t testing.TB, c *s3.Client, bucket string) {
	t.Helper()
	for _, k := range ExportKeys {
		Put(t, c, bucket, k, []byte("x"+k))
	}
	Put(t, c, bucket, "spark/empty-folder/", nil)
}

// Get downloads one object.
func Get(t testing.TB, c *s3.Client, bucket, key string) Object {
	t.Helper()
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return Object{Data: data, ContentType: aws.ToString(out.ContentType),
		ContentEncoding: aws.ToString(out.ContentEncoding), CacheCtrl: aws.ToString(out.CacheControl)}
}

// Download copies every object directly under prefix into dir (so the
// folder tools of xmltest can walk the set) and returns them by name.
func Download(t testing.TB, c *s3.Client, bucket, prefix, dir string) map[string]Object {
	t.Helper()
	objs := map[string]Object{}
	for _, k := range Keys(t, c, bucket, prefix) {
		name := strings.TrimPrefix(k, prefix)
		if strings.Contains(name, "/") {
			continue
		}
		o := Get(t, c, bucket, k)
		objs[name] = o
		if err := os.WriteFile(filepath.Join(dir, name), o.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return objs
}

// OpenUploads returns the keys of the multipart uploads in progress.
func OpenUploads(t testing.TB, c *s3.Client, bucket string) []string {
	t.Helper()
	out, err := c.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list multipart uploads: %v", err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys
}

// StartUpload opens a multipart upload of key with one part and leaves it
// open: what a run killed in the middle of a large upload leaves behind.
func StartUpload(t testing.TB, c *s3.Client, bucket, key string) {
	t.Helper()
	ctx := context.Background()
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("create multipart upload: %v", err)
	}
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader(strings.Repeat("x", 1<<20)), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		t.Fatalf("upload part: %v", err)
	}
}

// Fault decides the fate of the n-th request (from 1) through a Proxy:
// pass it on (0), or answer with that HTTP status and S3 error code.
type Fault func(r *http.Request, n int) (status int, code string)

// Proxy is a reverse proxy on 127.0.0.1 in front of the server that injects
// faults; URL is its endpoint.
type Proxy struct {
	URL      string
	mu       sync.Mutex
	n        int
	Injected atomic.Int64 // faults answered
	Writes   atomic.Int64 // PUT and POST requests passed on
}

// ReverseProxy returns a reverse proxy to target that logs nothing (a
// client killed mid-request is expected), for the tests' proxies to build on.
func ReverseProxy(t testing.TB, target string) *httputil.ReverseProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	return rp
}

// Serve serves h on 127.0.0.1 for the duration of t and returns its URL.
func Serve(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// NewProxy starts a proxy to target for the duration of t.
func NewProxy(t testing.TB, target string, fault Fault) *Proxy {
	t.Helper()
	rp := ReverseProxy(t, target)
	p := &Proxy{}
	p.URL = Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.n++
		n := p.n
		p.mu.Unlock()
		if fault != nil {
			if status, code := fault(r, n); status != 0 {
				p.Injected.Add(1)
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(status)
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected by the test proxy</Message></Error>`, code)
				return
			}
		}
		if r.Method == http.MethodPut || r.Method == http.MethodPost {
			p.Writes.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	return p
}

// IsWrite reports whether r stores data: a PutObject, an UploadPart or a
// multipart upload's create or complete.
func IsWrite(r *http.Request) bool {
	return r.Method == http.MethodPut || r.Method == http.MethodPost && !r.URL.Query().Has("delete")
}
