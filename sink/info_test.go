package sink_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/sitemapgen/sitemapgen/sink"
)

// checkInfo puts two files and checks that ListInfo reports their sizes
// and, where the store tags, the ETag each put returned; and so does a
// DryRun over the store, which puts nothing.
func checkInfo(t *testing.T, s sink.Store) {
	t.Helper()
	ctx := context.Background()
	files := map[string][]byte{"a.xml.gz": bytes.Repeat([]byte("a"), 1000), "b.xml": []byte("bb")}
	tags := map[string]string{}
	for n, b := range files {
		if tg, ok := s.(sink.Tagger); ok {
			etag, err := tg.PutTagged(ctx, n, b)
			if err != nil || etag == "" {
				t.Fatalf("PutTagged %s: %q, %v", n, etag, err)
			}
			tags[n] = etag
		} else if err := s.Put(ctx, n, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range []sink.Stater{s.(sink.Stater), sink.NewDryRun(s)} {
		infos, err := st.ListInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, in := range infos {
			if b, ok := files[in.Name]; ok {
				seen++
				if in.Size != int64(len(b)) || in.ETag != tags[in.Name] {
					t.Errorf("%T: %s listed as %d bytes, ETag %q; want %d, %q", st, in.Name, in.Size, in.ETag, len(b), tags[in.Name])
				}
			}
		}
		if seen != len(files) {
			t.Errorf("%T: listed %d of the %d files", st, seen, len(files))
		}
	}
}

func TestLocalInfo(t *testing.T) {
	l, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	checkInfo(t, l)
	ctx := context.Background()
	for _, tc := range []struct {
		n    int
		want string
	}{{1, "a"}, {8, "aaaaaaaa"}} {
		if got, err := l.Tail(ctx, "a.xml.gz", tc.n); err != nil || string(got) != tc.want {
			t.Errorf("Tail(%d) = %q, %v; want %q", tc.n, got, err, tc.want)
		}
	}
	if got, err := l.Tail(ctx, "b.xml", 8); err != nil || string(got) != "bb" {
		t.Errorf("Tail of a 2-byte file = %q, %v; want all of it", got, err)
	}
	if _, err := l.Tail(ctx, "missing", 8); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Tail of a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestS3Info(t *testing.T) {
	s, _, _ := s3Store(t, sink.S3Options{}, nil)
	checkInfo(t, s)
}
