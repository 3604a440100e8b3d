package s3obj_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

func keysOf(objs []s3obj.Object) []string {
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	return ks
}

func TestList(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, e.ep)
	for _, k := range []string{
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
	} {
		e.put(t, k, []byte("x"+k))
	}
	e.put(t, "spark/empty-folder/", nil) // a console's "folder"
	ctx := context.Background()
	parquet := func(k string) bool { return strings.HasSuffix(k, ".parquet") || strings.HasSuffix(k, ".arrow") }
	u := "s3://" + e.bucket + "/"
	tests := []struct {
		arg  string
		opt  s3obj.ListOptions
		want []string
		err  error // errors.Is
	}{
		{arg: u + "spark/", opt: s3obj.ListOptions{Keep: parquet}, want: []string{
			"spark/b.arrow",
			"spark/date=2024-01-01/part-00000.parquet",
			"spark/date=2024-01-02/part-00000.parquet",
			"spark/part-00000-c000.snappy.parquet",
			"spark/part-00001-c000.snappy.parquet",
		}},
		{arg: u + "spark/", want: []string{ // every format, in lexical order
			"spark/b.arrow",
			"spark/date=2024-01-01/part-00000.parquet",
			"spark/date=2024-01-02/part-00000.parquet",
			"spark/part-00000-c000.snappy.parquet",
			"spark/part-00001-c000.snappy.parquet",
			"spark/urls.csv",
		}},
		{arg: u + "spark", opt: s3obj.ListOptions{Keep: parquet, RequireSuccess: true}, want: []string{ // a folder without its slash
			"spark/b.arrow",
			"spark/date=2024-01-01/part-00000.parquet",
			"spark/date=2024-01-02/part-00000.parquet",
			"spark/part-00000-c000.snappy.parquet",
			"spark/part-00001-c000.snappy.parquet",
		}},
		{arg: u + "spark/part-*.parquet", want: []string{
			"spark/part-00000-c000.snappy.parquet",
			"spark/part-00001-c000.snappy.parquet",
		}},
		{arg: u + "spark/part-*.parquet", opt: s3obj.ListOptions{RequireSuccess: true}, want: []string{
			"spark/part-00000-c000.snappy.parquet",
			"spark/part-00001-c000.snappy.parquet",
		}},
		{arg: u + "spark/date=*/*", want: []string{
			"spark/date=2024-01-01/part-00000.parquet",
			"spark/date=2024-01-02/part-00000.parquet",
		}},
		{arg: u + "spark/*", want: []string{"spark/b.arrow", "spark/part-00000-c000.snappy.parquet", "spark/part-00001-c000.snappy.parquet", "spark/urls.csv"}},
		{arg: u + "spark/_SUCC?SS", want: []string{"spark/_SUCCESS"}}, // spelled out by the pattern
		{arg: u + "spark/part-0000[1]-*", want: []string{"spark/part-00001-c000.snappy.parquet"}},
		{arg: u + "one/file.csv", want: []string{"one/file.csv"}},
		{arg: u + "nosuccess/", want: []string{"nosuccess/data_0_0_0.snappy.parquet"}},
		{arg: u + "nosuccess/", opt: s3obj.ListOptions{RequireSuccess: true}, err: s3obj.ErrRefused},
		{arg: u + "nosuccess/data_*", opt: s3obj.ListOptions{RequireSuccess: true}, err: s3obj.ErrRefused},
		{arg: u + "delta/", err: s3obj.ErrRefused},
		{arg: u + "delta/part-*", err: s3obj.ErrRefused},
		{arg: u + "spark/nothing-*.parquet", err: s3obj.ErrNotExist},
		{arg: u + "one/missing.csv", err: s3obj.ErrNotExist},
		{arg: u + "missing/", err: s3obj.ErrNotExist},
		{arg: u + "spark/[", err: nil}, // bad pattern: an error, checked below
		{arg: "s3://" + e.bucket + "-missing/x.csv", err: s3obj.ErrNotExist},
	}
	for _, tt := range tests {
		objs, err := s.List(ctx, tt.arg, tt.opt)
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("List(%s, %+v): no error, want one; got %v", tt.arg, tt.opt.RequireSuccess, keysOf(objs))
		case tt.want == nil:
			oneLine(t, err, "s3://"+strings.TrimPrefix(tt.arg, "s3://")[:5])
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("List(%s): %v; want errors.Is %v", tt.arg, err, tt.err)
			}
		case err != nil:
			t.Errorf("List(%s): %v", tt.arg, err)
		case !slices.Equal(keysOf(objs), tt.want):
			t.Errorf("List(%s, %+v) = %q\nwant %q", tt.arg, tt.opt.RequireSuccess, keysOf(objs), tt.want)
		}
		for _, o := range objs {
			if o.Size != int64(len("x"+o.Key)) || o.ETag == "" || o.Bucket != e.bucket {
				t.Errorf("%s: size %d, ETag %q", o, o.Size, o.ETag)
			}
		}
	}
	_, err := s.List(ctx, u+"delta/", s3obj.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "_delta_log") {
		t.Errorf("delta: %v", err)
	}
	_, err = s.List(ctx, u+"nosuccess/", s3obj.ListOptions{RequireSuccess: true})
	if err == nil || !strings.Contains(err.Error(), "_SUCCESS") || !strings.Contains(err.Error(), "s3://"+e.bucket+"/nosuccess/") {
		t.Errorf("require success: %v", err)
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
