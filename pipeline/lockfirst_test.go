package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// TestFailedRunRejects: a run that fails after reading rows still leaves a
// rejects file that is a CSV: its header, then whole lines (the rows
// rejected before the failure). It used to be empty: the lines waited in
// a buffer flushed only when the input ended well.
func TestFailedRunRejects(t *testing.T) {
	var rows strings.Builder
	rows.WriteString("loc\n")
	for i := range 100 { // fewer lines than the buffer holds
		fmt.Fprintf(&rows, "https://elsewhere.example/%d\nhttps://www.example.com/%d\n", i, i)
	}
	good := writeText(t, "a.csv", rows.String())
	bad := writeText(t, "b.csv", "loc\nhttps://www.example.com/x\"y\n")
	var rejects bytes.Buffer
	snk, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Config{Inputs: []string{good, bad}, Sink: snk, Name: "sm",
		PublicURL: mustScope(t, "https://www.example.com/"), MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000,
		GzipLevel: 1, Now: testNow, Rejects: &rejects})
	if err == nil {
		t.Fatal("the run succeeded; want the error of b.csv")
	}
	got := rejects.String()
	if !strings.HasPrefix(got, "source,row,reason,value\n") || !strings.HasSuffix(got, "\n") {
		t.Fatalf("rejects of a failed run (%d bytes): %.200q", len(got), got)
	}
	for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n")[1:] {
		if !strings.HasSuffix(line, ",out_of_scope,https://elsewhere.example/"+line[strings.LastIndexByte(line, '/')+1:]) {
			t.Errorf("rejects line %q", line)
		}
	}
}

// TestRejectsOfRunFailingEarly: a run that fails before its first row is
// read (an input missing, a Parquet or Arrow input failing as it is opened,
// its configuration) still leaves a rejects file that is a CSV: its header.
// It used to be empty: the header waited in the cut stage's buffer.
func TestRejectsOfRunFailingEarly(t *testing.T) {
	notParquet := writeText(t, "not.parquet", "not parquet\n")
	notArrow := writeText(t, "not.arrow", "not arrow either\n")
	dupLoc := writeText(t, "dup.csv", "loc,loc\nhttps://www.example.com/a,https://www.example.com/b\n")
	for _, tc := range []struct {
		name    string
		inputs  []string
		grouped bool
		noSink  bool
	}{
		{name: "not parquet", inputs: []string{notParquet}},
		{name: "not arrow, grouped", inputs: []string{notArrow}, grouped: true},
		{name: "missing file", inputs: []string{filepath.Join(t.TempDir(), "missing.csv")}},
		{name: "csv loc,loc", inputs: []string{dupLoc}},
		{name: "no sink", inputs: []string{dupLoc}, noSink: true},
	} {
		var rejects bytes.Buffer
		cfg := Config{Inputs: tc.inputs, Name: "sm",
			PublicURL: mustScope(t, "https://www.example.com/"), MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000,
			GzipLevel: 1, Now: testNow, Rejects: &rejects}
		want := "source,row,reason,value\n"
		if tc.grouped {
			cfg.Columns[input.Group] = "section"
			cfg.Group = &Grouping{}
			want = "source,row,reason,value,group\n"
		}
		if !tc.noSink {
			snk, err := sink.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cfg.Sink = snk
		}
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Fatalf("%s: the run succeeded", tc.name)
		}
		if got := rejects.String(); got != want {
			t.Errorf("%s: rejects %q, want %q", tc.name, got, want)
		}
	}
}
