package s3obj_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

func keysOf(objs []s3obj.Object) []string {
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	return ks
}

// exportStore returns a store and a bucket holding s3test.ExportKeys.
func exportStore(t *testing.T) (*env, *s3obj.Store) {
	e := newEnv(t)
	s := e.store(t, e.ep)
	s3test.PutExport(t, e.c, e.bucket)
	return e, s
}

// TestList: ListFolder and Glob over the layouts exports leave
// (pipeline/input's TestExpandS3 tests what an argument stands for, from
// them).
func TestList(t *testing.T) {
	e, s := exportStore(t)
	ctx := context.Background()
	parquet := func(k string) bool { return strings.HasSuffix(k, ".parquet") || strings.HasSuffix(k, ".arrow") }
	tests := []struct {
		glob bool   // Glob, else ListFolder
		arg  string // the prefix or the pattern
		keep func(string) bool
		want []string
		err  error // errors.Is
	}{
		{arg: "spark/", keep: parquet, want: []string{
			"spark/b.arrow",
			"spark/date=2024-01-01/part-00000.parquet",
			"spark/date=2024-01-02/part-00000.parquet",
			"spark/part-00000-c000.snappy.parquet",
			"spark/part-00001-c000.snappy.parquet",
		}},
		{arg: "spark/", want: []string{ // every format, in lexical order
			"spark/b.arrow",
			"spark/date=2024-01-01/part-00000.parquet",
			"spark/date=2024-01-02/part-00000.parquet",
			"spark/part-00000-c000.snappy.parquet",
			"spark/part-00001-c000.snappy.parquet",
			"spark/urls.csv",
		}},
		{arg: "one/", keep: parquet, want: []string{}}, // keys, none kept: no error
		{glob: true, arg: "spark/part-*.parquet", want: []string{
			"spark/part-00000-c000.snappy.parquet",
			"spark/part-00001-c000.snappy.parquet",
		}},
		{glob: true, arg: "spark/date=*/*", want: []string{
			"spark/date=2024-01-01/part-00000.parquet",
			"spark/date=2024-01-02/part-00000.parquet",
		}},
		{glob: true, arg: "spark/*", want: []string{"spark/b.arrow", "spark/part-00000-c000.snappy.parquet", "spark/part-00001-c000.snappy.parquet", "spark/urls.csv"}},
		{glob: true, arg: "spark/_SUCC?SS", want: []string{"spark/_SUCCESS"}}, // spelled out by the pattern
		{glob: true, arg: "spark/part-0000[1]-*", want: []string{"spark/part-00001-c000.snappy.parquet"}},
		{glob: true, arg: "spark/nothing-*.parquet", want: []string{}},
		{arg: "nosuccess/", want: []string{"nosuccess/data_0_0_0.snappy.parquet"}},
		{arg: "delta/", err: s3obj.ErrRefused},
		{glob: true, arg: "delta/part-*", err: s3obj.ErrRefused},
		{arg: "missing/", err: s3obj.ErrNotExist},
		{glob: true, arg: "spark/[", err: nil}, // bad pattern: an error, checked below
	}
	for _, tt := range tests {
		var objs []s3obj.Object
		var err error
		if tt.glob {
			objs, err = s.Glob(ctx, e.bucket, tt.arg)
		} else {
			objs, err = s.ListFolder(ctx, e.bucket, tt.arg, tt.keep)
		}
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("%s: no error, want one; got %v", tt.arg, keysOf(objs))
		case tt.want == nil:
			oneLine(t, err, "s3://"+e.bucket+"/")
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("%s: %v; want errors.Is %v", tt.arg, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.arg, err)
		case !slices.Equal(keysOf(objs), tt.want) && len(objs)+len(tt.want) > 0:
			t.Errorf("%s = %q\nwant %q", tt.arg, keysOf(objs), tt.want)
		}
		for _, o := range objs {
			if o.Size != int64(len("x"+o.Key)) || o.ETag == "" || o.Bucket != e.bucket {
				t.Errorf("%s: size %d, ETag %q", o, o.Size, o.ETag)
			}
		}
	}
	if _, err := s.ListFolder(ctx, e.bucket, "delta/", nil); err == nil || !strings.Contains(err.Error(), "_delta_log") {
		t.Errorf("delta: %v", err)
	}
}

// TestListMarkers: IsFolder and HasSuccess.
func TestListMarkers(t *testing.T) {
	e, s := exportStore(t)
	ctx := context.Background()
	for _, tt := range []struct {
		prefix string
		want   bool
	}{{"spark/", true}, {"spark", true}, {"one/", true}, {"missing/", false}, {"one/file.csv/", false}} {
		if got, err := s.IsFolder(ctx, e.bucket, tt.prefix); err != nil || got != tt.want {
			t.Errorf("IsFolder(%q) = %v, %v; want %v", tt.prefix, got, err, tt.want)
		}
	}
	for _, tt := range []struct {
		folder string
		want   bool
	}{{"spark/", true}, {"nosuccess/", false}, {"", false}} {
		if got, err := s.HasSuccess(ctx, e.bucket, tt.folder); err != nil || got != tt.want {
			t.Errorf("HasSuccess(%q) = %v, %v; want %v", tt.folder, got, err, tt.want)
		}
	}
}

func TestParseURL(t *testing.T) {
	for _, tt := range []struct{ in, bucket, rest string }{
		{"s3://b/k", "b", "k"},
		{"s3://b/p/", "b", "p/"},
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://b/x/*.parquet", "b", "x/*.parquet"},
		{"s3:///k", "", ""},
		{"s3://b//k", "", ""},
		{"/tmp/x", "", ""},
	} {
		b, r, err := s3obj.ParseURL(tt.in)
		if b != tt.bucket || r != tt.rest || (err != nil) != (tt.bucket == "") {
			t.Errorf("ParseURL(%q) = %q, %q, %v", tt.in, b, r, err)
		}
	}
}
