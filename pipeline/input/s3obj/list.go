package s3obj

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sitemapgen/sitemapgen/internal/s3client"
)

// Object is one object to read, as listed: the size and ETag pin the
// version every read of it gets.
type Object struct {
	Bucket, Key string
	Size        int64
	ETag        string // quoted, as the store gives it
}

// String returns s3://bucket/key, the object's name in messages.
func (o Object) String() string { return objURL(o.Bucket, o.Key) }

// IsURL reports whether the argument names S3 objects (s3://...).
func IsURL(arg string) bool { return strings.HasPrefix(arg, "s3://") }

// ParseURL splits s3://bucket/rest into the bucket and the rest: a key, a
// prefix ending in '/', or a pattern.
func ParseURL(arg string) (bucket, rest string, err error) {
	if bucket, rest, err = s3client.SplitURL(arg); err != nil {
		return "", "", err
	}
	if strings.Contains(rest, "//") || strings.HasPrefix(rest, "/") {
		return "", "", fmt.Errorf("%q: empty path segment", arg)
	}
	return bucket, rest, nil
}

// Success is the marker object Spark and Hadoop write last.
const Success = "_SUCCESS"

// IsPattern reports whether a key holds a path.Match meta character: it
// is read as a pattern (see Glob), never as a key.
func IsPattern(key string) bool { return strings.ContainsAny(key, `*?[\`) }

// hidden reports whether a key relative to the listed folder has a path
// segment starting with '_' or '.': what Spark, Hive and friends write
// beside their part files (_SUCCESS, _delta_log/, .part-0.crc, _temporary/).
func hidden(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// Stat returns the size and ETag of bucket/key (one HEAD).
func (s *Store) Stat(ctx context.Context, bucket, key string) (Object, error) {
	s.total.requests.Add(1)
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return Object{}, explain(err, bucket, key)
	}
	o := Object{Bucket: bucket, Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag)}
	if err := o.check(); err != nil {
		return Object{}, err
	}
	return o, nil
}

// check refuses what a server claims about an object that cannot be true.
func (o Object) check() error {
	if o.Size < 0 {
		return &Error{o.String(), fmt.Sprintf("the store claims a size of %d bytes", o.Size), ErrBadResponse}
	}
	if o.ETag == "" {
		// Without one, nothing pins the version read.
		return &Error{o.String(), "the store gives the object no ETag, so its version cannot be pinned", ErrBadResponse}
	}
	return nil
}

// listAll lists every key below prefix in key order, with size and ETag.
func (s *Store) listAll(ctx context.Context, bucket, prefix string) ([]Object, error) {
	var objs []Object
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		s.total.requests.Add(1)
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, explain(err, bucket, prefix)
		}
		for _, c := range page.Contents {
			k := aws.ToString(c.Key)
			if !strings.HasPrefix(k, prefix) {
				return nil, &Error{objURL(bucket, prefix), fmt.Sprintf("the listing holds %q, not below the prefix", k), ErrBadResponse}
			}
			objs = append(objs, Object{Bucket: bucket, Key: k, Size: aws.ToInt64(c.Size), ETag: aws.ToString(c.ETag)})
		}
	}
	// Stores list in UTF-8 byte order; sorting makes the order ours.
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key < objs[j].Key })
	return objs, nil
}

// checkDelta refuses a listing below folder that holds a Delta log: a
// Delta table's live files are named in its log, not by the listing.
func checkDelta(bucket, folder string, all []Object) error {
	for _, o := range all {
		rel := strings.TrimPrefix(o.Key, folder)
		if rel == "_delta_log" || strings.HasPrefix(rel, "_delta_log/") || strings.Contains(rel, "/_delta_log/") {
			return &Error{objURL(bucket, folder), "is a Delta Lake table (it holds _delta_log/): its live files are named in the log, not by the listing; export the table to Parquet files, or name its files", ErrRefused}
		}
	}
	return nil
}

// IsFolder reports whether there are keys below prefix (one LIST of one
// key): a "folder" named without its slash, as a local folder may be.
func (s *Store) IsFolder(ctx context.Context, bucket, prefix string) (bool, error) {
	s.total.requests.Add(1)
	out, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket: aws.String(bucket), Prefix: aws.String(prefix), MaxKeys: aws.Int32(1),
	})
	if err != nil {
		return false, explain(err, bucket, prefix)
	}
	return len(out.Contents) > 0, nil
}

// HasSuccess reports whether folder (a prefix ending in '/', or "") holds
// the _SUCCESS marker (one HEAD).
func (s *Store) HasSuccess(ctx context.Context, bucket, folder string) (bool, error) {
	_, err := s.Stat(ctx, bucket, folder+Success)
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// ListFolder returns the objects below prefix (ending in '/', or "") that
// keep accepts (nil keeps all), in lexical key order, Hive key=value/
// sub-folders included, keys with a segment starting with '_' or '.'
// skipped. A prefix holding _delta_log/ is refused (ErrRefused), one that
// holds no key at all is an error wrapping ErrNotExist; one whose keys are
// all skipped gives no object and no error.
func (s *Store) ListFolder(ctx context.Context, bucket, prefix string, keep func(key string) bool) ([]Object, error) {
	all, err := s.listAll(ctx, bucket, prefix)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, &Error{objURL(bucket, prefix), "no object below this prefix", ErrNotExist}
	}
	if err := checkDelta(bucket, prefix, all); err != nil {
		return nil, err
	}
	var objs []Object
	for _, o := range all {
		rel := strings.TrimPrefix(o.Key, prefix)
		if rel == "" || strings.HasSuffix(rel, "/") || hidden(rel) || keep != nil && !keep(o.Key) {
			continue // the prefix itself or a "folder" marker, hidden, not an input
		}
		if err := o.check(); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// Glob returns the objects whose keys match pattern (path.Match, within a
// segment), in lexical key order: the longest literal prefix is listed, and
// the keys matching the pattern kept, but for those with a '_' or '.'
// segment the pattern does not spell. The folder of the first segment with
// a meta character holding _delta_log/ is refused (ErrRefused). No match
// gives no object and no error.
func (s *Store) Glob(ctx context.Context, bucket, pattern string) ([]Object, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, &Error{objURL(bucket, pattern), "bad pattern: " + err.Error(), err}
	}
	literal := pattern[:strings.IndexAny(pattern, `*?[\`)]
	folder := literal[:strings.LastIndex(literal, "/")+1]
	all, err := s.listAll(ctx, bucket, literal)
	if err != nil {
		return nil, err
	}
	if err := checkDelta(bucket, folder, all); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(folder+"_delta_log/", literal) {
		// The log sorts outside what the literal prefix lists.
		delta, err := s.IsFolder(ctx, bucket, folder+"_delta_log/")
		if err != nil {
			return nil, err
		}
		if delta {
			return nil, checkDelta(bucket, folder, []Object{{Key: folder + "_delta_log/"}})
		}
	}
	var objs []Object
	for _, o := range all {
		if ok, _ := path.Match(pattern, o.Key); !ok || strings.HasSuffix(o.Key, "/") || hiddenUnspelled(pattern, o.Key) {
			continue
		}
		if err := o.check(); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// hiddenUnspelled reports whether key, which matches pattern, has a segment
// starting with '_' or '.' where the pattern's segment does not start so.
func hiddenUnspelled(pattern, key string) bool {
	ps, ks := strings.Split(pattern, "/"), strings.Split(key, "/")
	for i, k := range ks {
		if (strings.HasPrefix(k, "_") || strings.HasPrefix(k, ".")) && i < len(ps) && ps[i] != "" && ps[i][0] != k[0] {
			return true
		}
	}
	return false
}
