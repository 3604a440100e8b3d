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
	s, ok := strings.CutPrefix(arg, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%q: not an s3:// URL", arg)
	}
	bucket, rest, _ = strings.Cut(s, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%q: no bucket name", arg)
	}
	if strings.Contains(rest, "//") || strings.HasPrefix(rest, "/") {
		return "", "", fmt.Errorf("%q: empty path segment", arg)
	}
	return bucket, rest, nil
}

// ListOptions say which listed objects a prefix or pattern stands for.
type ListOptions struct {
	// RequireSuccess refuses a prefix, or the folder of a pattern, that
	// holds no _SUCCESS object (Spark and Hadoop write it last), so that a
	// half-written export is never read.
	RequireSuccess bool
	// Keep says whether a key listed under a prefix is an input (the local
	// folder rule: the formats read by position); nil keeps all. Objects
	// named directly or matched by a pattern are always kept.
	Keep func(key string) bool
}

// Success is the marker object Spark and Hadoop write last.
const Success = "_SUCCESS"

// hasMeta reports whether s holds a path.Match meta character.
func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

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

// List returns the objects one s3:// argument stands for, in lexical key
// order, each with its size and ETag:
//   - s3://bucket/key: that object (HEAD); when there is none but keys
//     below key/, the prefix key/.
//   - s3://bucket/prefix/: every object below it that Keep accepts, Hive
//     key=value/ sub-folders included, keys with a segment starting with
//     '_' or '.' skipped. A prefix holding _delta_log/ is refused (a Delta
//     table's live files are in its log, not in the listing).
//   - a pattern with * ? [ (path.Match, within a segment): the longest
//     literal prefix is listed, and the keys matching the pattern kept,
//     but for those with a '_' or '.' segment the pattern does not spell.
//
// An argument that stands for no object is an error wrapping ErrNotExist.
func (s *Store) List(ctx context.Context, arg string, opt ListOptions) ([]Object, error) {
	bucket, rest, err := ParseURL(arg)
	if err != nil {
		return nil, err
	}
	switch {
	case hasMeta(rest):
		return s.listPattern(ctx, bucket, rest, opt)
	case rest == "" || strings.HasSuffix(rest, "/"):
		return s.listPrefix(ctx, bucket, rest, opt)
	}
	o, err := s.Stat(ctx, bucket, rest)
	if errors.Is(err, ErrNotExist) {
		// A "folder" named without its slash, as a local folder may be.
		if objs, lerr := s.listPrefix(ctx, bucket, rest+"/", opt); lerr == nil || !errors.Is(lerr, ErrNotExist) {
			return objs, lerr
		}
	}
	if err != nil {
		return nil, err
	}
	return []Object{o}, nil
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

// folderChecks refuses a listing below folder that holds a Delta log, or
// no _SUCCESS marker when one is required.
func folderChecks(bucket, folder string, all []Object, opt ListOptions) error {
	success := false
	for _, o := range all {
		rel := strings.TrimPrefix(o.Key, folder)
		if rel == Success {
			success = true
		}
		if rel == "_delta_log" || strings.HasPrefix(rel, "_delta_log/") || strings.Contains(rel, "/_delta_log/") {
			return &Error{objURL(bucket, folder), "is a Delta Lake table (it holds _delta_log/): its live files are named in the log, not by the listing; export the table to Parquet files, or name its files", ErrRefused}
		}
	}
	if opt.RequireSuccess && !success {
		return &Error{objURL(bucket, folder), "has no _SUCCESS marker (--require-success): the export is not complete", ErrRefused}
	}
	return nil
}

func (s *Store) listPrefix(ctx context.Context, bucket, prefix string, opt ListOptions) ([]Object, error) {
	all, err := s.listAll(ctx, bucket, prefix)
	if err != nil {
		return nil, err
	}
	if err := folderChecks(bucket, prefix, all, opt); err != nil {
		return nil, err
	}
	var objs []Object
	for _, o := range all {
		rel := strings.TrimPrefix(o.Key, prefix)
		if rel == "" || strings.HasSuffix(rel, "/") || hidden(rel) || opt.Keep != nil && !opt.Keep(o.Key) {
			continue // the prefix itself or a "folder" marker, hidden, not an input
		}
		if err := o.check(); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 {
		return nil, &Error{objURL(bucket, prefix), "no input object below this prefix", ErrNotExist}
	}
	return objs, nil
}

func (s *Store) listPattern(ctx context.Context, bucket, pattern string, opt ListOptions) ([]Object, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, &Error{objURL(bucket, pattern), "bad pattern: " + err.Error(), err}
	}
	// The longest literal prefix, and the folder of the first segment with
	// a meta character (where _SUCCESS is looked for).
	i := strings.IndexAny(pattern, `*?[\`)
	literal := pattern[:i]
	folder := literal[:strings.LastIndex(literal, "/")+1]
	all, err := s.listAll(ctx, bucket, literal)
	if err != nil {
		return nil, err
	}
	if err := folderChecks(bucket, folder, all, ListOptions{}); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(folder+"_delta_log/", literal) {
		// The log sorts outside what the literal prefix lists.
		s.total.requests.Add(1)
		out, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket: aws.String(bucket), Prefix: aws.String(folder + "_delta_log/"), MaxKeys: aws.Int32(1),
		})
		if err != nil {
			return nil, explain(err, bucket, folder)
		}
		if len(out.Contents) > 0 {
			return nil, folderChecks(bucket, folder, []Object{{Key: folder + "_delta_log/"}}, ListOptions{})
		}
	}
	if opt.RequireSuccess && !containsKey(all, folder+Success) {
		// The marker sorts outside what the literal prefix lists.
		if _, err := s.Stat(ctx, bucket, folder+Success); err != nil {
			if errors.Is(err, ErrNotExist) {
				return nil, &Error{objURL(bucket, folder), "has no _SUCCESS marker (--require-success): the export is not complete", ErrRefused}
			}
			return nil, err
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
	if len(objs) == 0 {
		return nil, &Error{objURL(bucket, pattern), "no object matches the pattern", ErrNotExist}
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

func containsKey(objs []Object, key string) bool {
	i := sort.Search(len(objs), func(i int) bool { return objs[i].Key >= key })
	return i < len(objs) && objs[i].Key == key
}
