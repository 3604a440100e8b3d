package sink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/sitemapgen/sitemapgen/internal/s3client"
)

// S3Options configure an S3 sink. Zero values take the defaults noted.
type S3Options struct {
	Bucket string // required
	Prefix string // key prefix ("" or ending in '/'), see ParseS3URL

	// Endpoint is the base URL of an S3-compatible store. "" keeps what the
	// SDK's default configuration gives (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3,
	// the shared config file, or AWS itself).
	Endpoint  string
	PathStyle bool   // bucket in the path, not in the host name
	Region    string // "" : the SDK's default chain; us-east-1 when it has none

	CacheControl string // Cache-Control of every object ("" : none)
	PartSize     int64  // multipart part size and threshold (0: 8 MiB; min 5 MiB)
	PartUploads  int    // concurrent part uploads per object (0: 4)
	MaxAttempts  int    // attempts per request, retries with backoff included (0: 6)

	// HTTPClient replaces the SDK's HTTP client (tests inject faults with it).
	HTTPClient aws.HTTPClient
}

// S3 is a bucket prefix on S3 or an S3-compatible store. Every object is
// uploaded with a checksum the store verifies (CRC32) and with the headers
// crawlers and CDNs expect; objects larger than the part size are uploaded in
// parts by the SDK's transfer manager, which aborts the upload if a part fails.
// A PutObject or CompleteMultipartUpload is atomic: readers see the whole
// object or the previous one.
type S3 struct {
	client *s3.Client
	tm     *transfermanager.Client
	opt    S3Options
}

// ParseS3URL splits s3://bucket/prefix into the bucket and a key prefix that
// is empty or ends in '/'.
func ParseS3URL(s string) (bucket, prefix string, err error) {
	if bucket, prefix, err = s3client.SplitURL(s); err != nil {
		return "", "", err
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	if strings.Contains(prefix, "//") {
		return "", "", fmt.Errorf("%q: empty path segment in the prefix", s)
	}
	return bucket, prefix, nil
}

// DefaultPartSize is the multipart part size and threshold when none is set.
const DefaultPartSize = 8 << 20

// minPartSize is S3's smallest part (but the last).
const minPartSize = 5 << 20

// NewS3 loads the AWS configuration (environment, shared config and
// credentials files, profiles, IMDS/IRSA: the SDK's default chain) and checks
// that the bucket is reachable and readable with one ListObjectsV2, so a
// wrong endpoint, bad credentials or a missing bucket fail before any work.
func NewS3(ctx context.Context, opt S3Options) (*S3, error) {
	if opt.Bucket == "" {
		return nil, errors.New("s3: no bucket")
	}
	if opt.PartSize == 0 {
		opt.PartSize = DefaultPartSize
	}
	if opt.PartSize < minPartSize {
		return nil, fmt.Errorf("s3: part size %d: must be at least %d (5 MiB)", opt.PartSize, minPartSize)
	}
	if opt.PartUploads <= 0 {
		opt.PartUploads = 4
	}
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = 6
	}
	client, err := s3client.New(ctx, s3client.Options{Endpoint: opt.Endpoint, PathStyle: opt.PathStyle,
		Region: opt.Region, MaxAttempts: opt.MaxAttempts, HTTPClient: opt.HTTPClient})
	if err != nil {
		return nil, err
	}
	s := &S3{opt: opt, client: client}
	s.tm = transfermanager.New(s.client, func(o *transfermanager.Options) {
		o.PartSizeBytes = opt.PartSize
		o.MultipartUploadThreshold = opt.PartSize
		o.Concurrency = opt.PartUploads
		o.ChecksumAlgorithm = tmtypes.ChecksumAlgorithmCrc32
		// Abort a failed multipart upload even when ctx is canceled.
		o.FailTimeout = 30 * time.Second
	})
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// check lists one key: it fails fast, with one clear message, on an
// unreachable endpoint, bad credentials and a missing bucket.
func (s *S3) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.opt.Bucket), Prefix: aws.String(s.opt.Prefix), MaxKeys: aws.Int32(1),
	}, func(o *s3.Options) { o.RetryMaxAttempts = 2 })
	if err != nil {
		return fmt.Errorf("%s: %w", s, explain(err, s.opt.Bucket))
	}
	return nil
}

// S3Error is a failed S3 request, said in a line for people; Err is the SDK's
// error, for errors.As.
type S3Error = s3client.Error

// explain turns the SDK's layered error into one line that says what is
// wrong and what to check.
func explain(err error, bucket string) error { return s3client.Explain(err, bucket, "", "") }

// String returns s3://bucket/prefix.
func (s *S3) String() string { return "s3://" + s.opt.Bucket + "/" + s.opt.Prefix }

func (s *S3) key(name string) *string { return aws.String(s.opt.Prefix + name) }

// ContentType is the Content-Type an object of that name is served with.
// Gzip shards are application/x-gzip files, not XML with a Content-Encoding:
// crawlers fetch the .gz file and decompress it themselves.
func ContentType(name string) string {
	switch {
	case strings.HasSuffix(name, ".xml.gz"), strings.HasSuffix(name, ".gz"):
		return "application/x-gzip"
	case strings.HasSuffix(name, ".xml"):
		return "application/xml"
	case strings.HasSuffix(name, ".json"):
		return "application/json"
	case strings.HasSuffix(name, ".txt"):
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// Put uploads data to name with a checksum, in parts when it is larger than
// the part size. The SDK retries throttling and 5xx with backoff.
func (s *S3) Put(ctx context.Context, name string, data []byte) error {
	_, err := s.PutTagged(ctx, name, data)
	return err
}

// PutTagged is Put returning the ETag S3 gave the object.
func (s *S3) PutTagged(ctx context.Context, name string, data []byte) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("put %q: not a plain file name", name)
	}
	in := &transfermanager.UploadObjectInput{
		Bucket:      aws.String(s.opt.Bucket),
		Key:         s.key(name),
		Body:        bytes.NewReader(data),
		ContentType: aws.String(ContentType(name)),
	}
	if s.opt.CacheControl != "" {
		in.CacheControl = aws.String(s.opt.CacheControl)
	}
	out, err := s.tm.UploadObject(ctx, in)
	if err != nil {
		return "", fmt.Errorf("put %s%s: %w", s, name, explain(err, s.opt.Bucket))
	}
	return aws.ToString(out.ETag), nil
}

// Get downloads name.
func (s *S3) Get(ctx context.Context, name string) ([]byte, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.opt.Bucket), Key: s.key(name)})
	if err != nil {
		var nk *types.NoSuchKey
		if errors.As(err, &nk) {
			return nil, fmt.Errorf("get %s%s: %w", s, name, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("get %s%s: %w", s, name, explain(err, s.opt.Bucket))
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("get %s%s: %w", s, name, err)
	}
	return data, nil
}

// S3Connections is S3's Connections: enough uploads at once to hide an
// object store's latency.
const S3Connections = 8

// Connections returns S3Connections.
func (s *S3) Connections() int { return S3Connections }

// S3SmallConnections is S3's SmallConnections: a PUT of a few kilobytes
// (a long tail of groups' sitemaps) is one round trip. 995 groups' first
// run over 200k rows, 20 ms a request: shards took about 3 s 8 at a time
// (docs/groups.md). The client keeps s3client.MaxIdleConns (64) idle
// connections: these, the 8 others (a large file's parts go up a few at a
// time) and a grouped run's begins (32 at once, while the first sitemaps
// upload) can pass it for a moment; a connection beyond it is closed when
// idle and opened again when needed, which costs a handshake, not a file.
const S3SmallConnections = 32

// SmallConnections returns S3SmallConnections.
func (s *S3) SmallConnections() int { return S3SmallConnections }

// List returns the names of the objects directly under the prefix.
func (s *S3) List(ctx context.Context) ([]string, error) {
	infos, err := s.ListInfo(ctx)
	names := make([]string, len(infos))
	for i, f := range infos {
		names[i] = f.Name
	}
	return names, err
}

// ListInfo returns the objects directly under the prefix with their sizes
// and ETags, which the listing gives for free.
func (s *S3) ListInfo(ctx context.Context) ([]Info, error) {
	var infos []Info
	err := s.listPages(ctx, func(page *s3.ListObjectsV2Output) {
		for _, o := range page.Contents {
			if n := strings.TrimPrefix(aws.ToString(o.Key), s.opt.Prefix); n != "" && !strings.Contains(n, "/") {
				infos = append(infos, Info{Name: n, Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag)})
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return infos, nil
}

// listPages calls each with every page of the listing directly under the
// prefix (up to the next '/').
func (s *S3) listPages(ctx context.Context, each func(*s3.ListObjectsV2Output)) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.opt.Bucket), Prefix: aws.String(s.opt.Prefix), Delimiter: aws.String("/"),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return explain(err, s.opt.Bucket)
		}
		each(page)
	}
	return nil
}

// Folders returns the names of the "folders" directly under the prefix:
// the common prefixes of its keys up to the next '/'.
func (s *S3) Folders(ctx context.Context) ([]string, error) {
	var names []string
	err := s.listPages(ctx, func(page *s3.ListObjectsV2Output) {
		for _, cp := range page.CommonPrefixes {
			n := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), s.opt.Prefix), "/")
			if n != "" && !strings.Contains(n, "/") {
				names = append(names, n)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// Delete removes name; a missing object is not an error.
func (s *S3) Delete(ctx context.Context, name string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.opt.Bucket), Key: s.key(name)})
	if err != nil {
		return fmt.Errorf("delete %s%s: %w", s, name, explain(err, s.opt.Bucket))
	}
	return nil
}

// DeleteAll removes names with DeleteObjects, 1,000 keys per request.
func (s *S3) DeleteAll(ctx context.Context, names []string) (deleted []string, err error) {
	var errs []error
	for len(names) > 0 {
		batch := names[:min(len(names), 1000)]
		names = names[len(batch):]
		ids := make([]types.ObjectIdentifier, len(batch))
		for i, n := range batch {
			ids[i] = types.ObjectIdentifier{Key: s.key(n)}
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(s.opt.Bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("delete %d objects under %s: %w", len(batch), s, explain(err, s.opt.Bucket)))
			continue
		}
		failed := map[string]bool{}
		for _, e := range out.Errors {
			n := strings.TrimPrefix(aws.ToString(e.Key), s.opt.Prefix)
			failed[n] = true
			errs = append(errs, fmt.Errorf("delete %s%s: %s %s", s, n, aws.ToString(e.Code), aws.ToString(e.Message)))
		}
		for _, n := range batch {
			if !failed[n] {
				deleted = append(deleted, n)
			}
		}
	}
	return deleted, errors.Join(errs...)
}

// AbortIncomplete aborts the multipart uploads under the prefix whose names
// owned accepts: what a killed run leaves behind.
func (s *S3) AbortIncomplete(ctx context.Context, owned func(name string) bool) (aborted []string, err error) {
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(s.opt.Bucket), Prefix: aws.String(s.opt.Prefix)}
	var errs []error
	for {
		out, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return aborted, fmt.Errorf("list multipart uploads under %s: %w", s, explain(err, s.opt.Bucket))
		}
		for _, u := range out.Uploads {
			n := strings.TrimPrefix(aws.ToString(u.Key), s.opt.Prefix)
			if strings.Contains(n, "/") || !owned(n) {
				continue
			}
			_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(s.opt.Bucket), Key: u.Key, UploadId: u.UploadId,
			})
			if err != nil {
				errs = append(errs, fmt.Errorf("abort upload of %s%s: %w", s, n, explain(err, s.opt.Bucket)))
				continue
			}
			aborted = append(aborted, n)
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
	return aborted, errors.Join(errs...)
}
