package pipeline

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/sink"
)

// TestLockBeforeStreamProbe: a run reading a stream holds the
// destination's lock while it waits for the stream's first bytes (the
// probe of its header reads up to 64 KiB): a nightly export that starts
// sending minutes late must not leave the destination open to another
// run meanwhile. Grouped (one shared folder) and not.
func TestLockBeforeStreamProbe(t *testing.T) {
	for _, grouped := range []bool{false, true} {
		dir := t.TempDir()
		snk, err := sink.NewLocal(dir)
		if err != nil {
			t.Fatal(err)
		}
		pr, pw := io.Pipe()
		cfg := Config{Inputs: []string{"-"}, Stdin: pr, Sink: snk, Name: "sm", PublicURL: mustScope(t, "https://www.example.com/"),
			MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1, Now: testNow}
		header, row := "loc\n", "https://www.example.com/a\n"
		if grouped {
			cfg.Columns[input.Group] = "section"
			cfg.Group = &Grouping{}
			header, row = "loc,section\n", "https://www.example.com/a,shop\n"
		}
		done := make(chan error, 1)
		go func() {
			_, err := Run(context.Background(), cfg)
			done <- err
		}()
		if _, err := io.WriteString(pw, header+row); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(dir, ".sm.lock")
		held := false
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(lock); err == nil {
				held = true
				break
			}
		}
		pw.Close()
		if err := <-done; err != nil {
			t.Fatalf("grouped %v: %v", grouped, err)
		}
		if !held {
			t.Errorf("grouped %v: no lock while the run waited for its input's first 64 KiB", grouped)
		}
	}
}
