package sink

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLocalPut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, content := range []string{"first", "second"} {
		if err := l.Put(ctx, "sitemap.xml", []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "sitemap.xml"))
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	fi, _ := os.Stat(filepath.Join(dir, "sitemap.xml"))
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 so a web server can read it", fi.Mode().Perm())
	}
	names, _ := l.List(ctx)
	if !slices.Equal(names, []string{"sitemap.xml"}) {
		t.Errorf("List = %q: temporary files left behind?", names)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden"} {
		if err := l.Put(ctx, bad, nil); err == nil {
			t.Errorf("Put(%q) accepted", bad)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Put(cctx, "late.xml", nil); err == nil {
		t.Error("Put after cancel succeeded")
	}
	if err := l.Delete(ctx, "missing.xml"); err != nil {
		t.Errorf("Delete of a missing file: %v", err)
	}
}

// TestTempOf: the temporary files Put writes name the whole file they are
// for, and nothing else reads as one.
func TestTempOf(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"sitemap.xml", "sitemap-products-000001-0123456789.xml.gz", "a.b"} {
		f, err := os.CreateTemp(dir, "."+name+".*"+tempSuffix)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got, ok := TempOf(filepath.Base(f.Name())); !ok || got != name {
			t.Errorf("TempOf(%q) = %q, %v; want %q", filepath.Base(f.Name()), got, ok, name)
		}
	}
	for _, bad := range []string{"sitemap.xml", ".sitemap.xml.tmp", ".sitemap.xml.12a.tmp", "sitemap.xml.12.tmp", "..1.tmp", ".x..tmp", ".tmp"} {
		if got, ok := TempOf(bad); ok {
			t.Errorf("TempOf(%q) = %q, true; want false", bad, got)
		}
	}
}
