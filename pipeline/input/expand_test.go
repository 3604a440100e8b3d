package input_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// TestExpandLocal: a local folder and glob under --require-success, a
// folder of CSV files only, and zero-byte parts skipped with a warning.
func TestExpandLocal(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	part, err := os.ReadFile(filepath.Join(exportParts(t), "part-00000.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	write("export/part-00000.parquet", part)
	write("export/part-00001.parquet", nil) // an empty partition
	write("csv/urls.csv", []byte("loc\nhttps://www.example.com/\n"))
	write("empty/part-00000.parquet", nil)
	var log bytes.Buffer
	rem := &input.Remote{Log: slog.New(slog.NewTextHandler(&log, nil))}
	ctx := context.Background()
	for _, arg := range []string{filepath.Join(dir, "export"), filepath.Join(dir, "export", "part-*.parquet")} {
		log.Reset()
		files, err := input.ExpandRemote(ctx, []string{arg}, rem)
		if err != nil || len(files) != 1 || !strings.HasSuffix(files[0].Path, "part-00000.parquet") {
			t.Fatalf("%s: %v, %v; want part-00000 alone", arg, files, err)
		}
		if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "part-00001.parquet") {
			t.Errorf("%s: no warning naming the empty part: %q", arg, log.String())
		}
	}
	if files, err := input.ExpandRemote(ctx, []string{filepath.Join(dir, "empty")}, rem); err != nil || len(files) != 0 {
		t.Errorf("a folder of empty parts: %v, %v; want no file, no error (the run says: no data rows)", files, err)
	}
	_, err = input.ExpandRemote(ctx, []string{filepath.Join(dir, "csv")}, rem)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "name the files to read") {
		t.Errorf("a folder of CSV files: %v", err)
	}
	// CSV or text files beside the parts are not read: a warning names
	// them (not the hidden or _ ones, nor other files), and SkippedFiles
	// lists them for the report.
	write("mixed/part-00000.parquet", part)
	write("mixed/b.csv", []byte("loc\nhttps://www.example.com/b\n"))
	write("mixed/date=2024-01-01/c.TXT.gz", nil)
	write("mixed/_d.csv", nil)
	write("mixed/.e.csv", nil)
	write("mixed/README.md", nil)
	log.Reset()
	mixed := &input.Remote{Log: rem.Log}
	files, err := input.ExpandRemote(ctx, []string{filepath.Join(dir, "mixed")}, mixed)
	if err != nil || len(files) != 1 || !strings.HasSuffix(files[0].Path, "part-00000.parquet") {
		t.Fatalf("a folder of Parquet and CSV files: %v, %v; want the part alone", files, err)
	}
	if w := log.String(); !strings.Contains(w, "level=WARN") || !strings.Contains(w, "skipped=2") ||
		!strings.Contains(w, `files="b.csv, date=2024-01-01/c.TXT.gz"`) || !strings.Contains(w, "folder="+filepath.Join(dir, "mixed")) {
		t.Errorf("a folder of Parquet and CSV files: warning %q", w)
	}
	want := []string{filepath.Join(dir, "mixed", "b.csv"), filepath.Join(dir, "mixed", "date=2024-01-01", "c.TXT.gz")}
	if got := mixed.SkippedFiles(); !slices.Equal(got, want) {
		t.Errorf("SkippedFiles() = %q, want %q", got, want)
	}
	if got := rem.SkippedFiles(); len(got) != 0 {
		t.Errorf("SkippedFiles() of folders without CSV files = %q", got)
	}
	strict := &input.Remote{RequireSuccess: true, Log: rem.Log}
	for _, arg := range []string{filepath.Join(dir, "export"), filepath.Join(dir, "export", "part-*.parquet")} {
		if _, err := input.ExpandRemote(ctx, []string{arg}, strict); !errors.Is(err, input.ErrIncomplete) {
			t.Errorf("%s without _SUCCESS: %v, want ErrIncomplete", arg, err)
		}
	}
	write("export/_SUCCESS", nil)
	for _, arg := range []string{filepath.Join(dir, "export"), filepath.Join(dir, "export", "part-*.parquet")} {
		if _, err := input.ExpandRemote(ctx, []string{arg}, strict); err != nil {
			t.Errorf("%s with _SUCCESS: %v", arg, err)
		}
	}
}
