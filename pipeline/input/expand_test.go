package input_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
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
