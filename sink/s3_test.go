package sink_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/sink"
)

func TestParseS3URL(t *testing.T) {
	for _, tc := range []struct{ in, bucket, prefix string }{
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://b/p", "b", "p/"},
		{"s3://b/p/q/", "b", "p/q/"},
	} {
		b, p, err := sink.ParseS3URL(tc.in)
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("ParseS3URL(%q) = %q, %q, %v", tc.in, b, p, err)
		}
	}
	for _, bad := range []string{"s3://", "s3:///p", "http://b/p", "s3://b/p//q"} {
		if _, _, err := sink.ParseS3URL(bad); err == nil {
			t.Errorf("ParseS3URL(%q) accepted", bad)
		}
	}
}

// TestS3Sink runs the sink against the real test server: headers, a
// multipart upload checked byte for byte, Get of a missing name, List,
// DeleteAll and the abort of an upload a killed run left open.
func TestS3Sink(t *testing.T) {
	s, c, bucket := s3Store(t, sink.S3Options{CacheControl: "max-age=60", PartSize: 5 << 20}, nil)
	ctx := context.Background()
	big := make([]byte, 11<<20+123) // 3 parts
	rand.Read(big)
	files := map[string][]byte{"x-000001-0123456789.xml.gz": big, "x.xml": []byte("<a/>"), "x-robots.txt": []byte("Sitemap: u\n")}
	for n, d := range files {
		if err := s.Put(ctx, n, d); err != nil {
			t.Fatal(err)
		}
	}
	for n, d := range files {
		o := s3test.Get(t, c, bucket, "p/"+n)
		if !bytes.Equal(o.Data, d) || o.ContentType != sink.ContentType(n) || o.ContentEncoding != "" || o.CacheCtrl != "max-age=60" {
			t.Errorf("%s: %d bytes (want %d), type %q, encoding %q, cache %q", n, len(o.Data), len(d), o.ContentType, o.ContentEncoding, o.CacheCtrl)
		}
		if got, err := s.Get(ctx, n); err != nil || !bytes.Equal(got, d) {
			t.Errorf("Get %s: %v", n, err)
		}
	}
	if _, err := s.Get(ctx, "missing.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get of a missing object: %v, want fs.ErrNotExist", err)
	}
	names, err := s.List(ctx)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"x-000001-0123456789.xml.gz", "x-robots.txt", "x.xml"}) {
		t.Fatalf("List = %q, %v", names, err)
	}
	s3test.StartUpload(t, c, bucket, "p/x-000002-0123456789.xml.gz")
	s3test.StartUpload(t, c, bucket, "p/unrelated.bin")
	aborted, err := s.AbortIncomplete(ctx, func(n string) bool { return strings.HasPrefix(n, "x-") })
	if err != nil || !slices.Equal(aborted, []string{"x-000002-0123456789.xml.gz"}) {
		t.Fatalf("AbortIncomplete = %q, %v", aborted, err)
	}
	if open := s3test.OpenUploads(t, c, bucket); !slices.Equal(open, []string{"p/unrelated.bin"}) {
		t.Fatalf("open uploads %q", open)
	}
	deleted, err := s.DeleteAll(ctx, []string{"x.xml", "x-robots.txt", "never-there"})
	if err != nil || len(deleted) != 3 {
		t.Fatalf("DeleteAll = %q, %v", deleted, err)
	}
	if names, _ := s.List(ctx); len(names) != 1 {
		t.Fatalf("after DeleteAll: %q", names)
	}
}

// TestS3Folders: Folders lists the "folders" directly under the prefix,
// not the objects there nor the folders deeper down.
func TestS3Folders(t *testing.T) {
	s, c, bucket := s3Store(t, sink.S3Options{}, nil)
	for _, key := range []string{"p/www.example.com/sitemaps/sm.xml", "p/shop.example.org/sm.xml", "p/shop.example.org/x/y", "p/file.xml", "other/z/sm.xml"} {
		s3test.Put(t, c, bucket, key, []byte("x"))
	}
	got, err := s.Folders(context.Background())
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"shop.example.org", "www.example.com"}) {
		t.Fatalf("Folders = %q, %v", got, err)
	}
}
