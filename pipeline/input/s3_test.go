package input_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	_ "github.com/sitemapgen/sitemapgen/pipeline/input/arrowread" // .arrow files are kept in folders
	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

// TestExpandS3: what an s3:// argument stands for (a key, a prefix with or
// without its slash, a pattern), with and without --require-success, over
// the layouts exports leave.
func TestExpandS3(t *testing.T) {
	ep := s3test.Endpoint(t)
	c := s3test.Client(t, ep)
	bucket := s3test.NewBucket(t, c)
	s3test.PutExport(t, c, bucket)
	u := "s3://" + bucket + "/"
	parts := []string{
		"spark/b.arrow",
		"spark/date=2024-01-01/part-00000.parquet",
		"spark/date=2024-01-02/part-00000.parquet",
		"spark/part-00000-c000.snappy.parquet",
		"spark/part-00001-c000.snappy.parquet",
	}
	tests := []struct {
		arg     string
		success bool // --require-success
		want    []string
		err     error    // errors.Is
		msg     string   // in the message
		skipped []string // SkippedFiles
	}{
		{arg: u + "spark/", want: parts, skipped: []string{u + "spark/urls.csv"}},               // the CSV beside the parts: a warning
		{arg: u + "spark", success: true, want: parts, skipped: []string{u + "spark/urls.csv"}}, // a folder without its slash
		{arg: u + "spark/part-*.parquet", want: parts[3:]},
		{arg: u + "spark/part-*.parquet", success: true, want: parts[3:]},
		{arg: u + "spark/date=*/*", want: parts[1:3]},
		{arg: u + "spark/*", want: []string{"spark/b.arrow", "spark/part-00000-c000.snappy.parquet", "spark/part-00001-c000.snappy.parquet", "spark/urls.csv"}},
		{arg: u + "spark/_SUCC?SS", want: []string{"spark/_SUCCESS"}}, // spelled out by the pattern
		{arg: u + "spark/part-0000[1]-*", want: []string{"spark/part-00001-c000.snappy.parquet"}},
		{arg: u + "one/file.csv", want: []string{"one/file.csv"}},
		{arg: u + "nosuccess/", want: []string{"nosuccess/data_0_0_0.snappy.parquet"}},
		{arg: u + "nosuccess/", success: true, err: input.ErrIncomplete, msg: u + "nosuccess/: has no _SUCCESS marker"},
		{arg: u + "nosuccess/data_*", success: true, err: input.ErrIncomplete, msg: u + "nosuccess/: has no _SUCCESS marker"},
		{arg: u + "delta/", err: s3obj.ErrRefused, msg: "_delta_log"},
		{arg: u + "delta/part-*", err: s3obj.ErrRefused, msg: "_delta_log"},
		{arg: u + "spark/nothing-*.parquet", err: fs.ErrNotExist, msg: "no file matches the pattern"},
		{arg: u + "one/missing.csv", err: fs.ErrNotExist},
		{arg: u + "missing/", err: fs.ErrNotExist},
		// Only CSV: as a local folder, say what to do (issue 24).
		{arg: u + "one/", err: fs.ErrNotExist, msg: u + "one/: is a folder without .parquet or Arrow files; name the files to read"},
		{arg: u + "spark/[", msg: "bad pattern"},
		{arg: "s3://" + bucket + "-missing/x.csv", err: fs.ErrNotExist, msg: "does not exist"},
	}
	for _, tt := range tests {
		rem := &input.Remote{S3: s3obj.Options{Endpoint: ep, PathStyle: true}, RequireSuccess: tt.success}
		files, err := input.ExpandRemote(context.Background(), []string{tt.arg}, rem)
		var keys []string
		for _, f := range files {
			keys = append(keys, strings.TrimPrefix(f.Path, u))
			o, ok := f.Object()
			if !ok || o.Size != int64(len("x"+strings.TrimPrefix(f.Path, u))) || o.ETag == "" {
				t.Errorf("%s: Object() = %+v, %v", f.Path, o, ok)
			}
			if f.Listed != (f.Path != tt.arg) || !f.Regular {
				t.Errorf("%s: Listed %v, Regular %v", f.Path, f.Listed, f.Regular)
			}
		}
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("%s (require success %v): no error, want one; got %v", tt.arg, tt.success, keys)
		case tt.want == nil:
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("%s: %q, want one line holding %q", tt.arg, err, tt.msg)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("%s: %v; want errors.Is %v", tt.arg, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.arg, err)
		case !slices.Equal(keys, tt.want):
			t.Errorf("%s (require success %v) = %q\nwant %q", tt.arg, tt.success, keys, tt.want)
		}
		if got := rem.SkippedFiles(); err == nil && !slices.Equal(got, tt.skipped) {
			t.Errorf("%s: SkippedFiles() = %q, want %q", tt.arg, got, tt.skipped)
		}
	}
}
