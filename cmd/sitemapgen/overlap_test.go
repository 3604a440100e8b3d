package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// overlapInput writes n rows under base/kind/.
func overlapInput(t *testing.T, kind string, n int) string {
	var b strings.Builder
	b.WriteString("loc\n")
	for i := range n {
		fmt.Fprintf(&b, "%s%s/%d\n", base, kind, i)
	}
	return inputtest.WriteFile(t, kind+".csv", []byte(b.String()))
}

// overlapTrials starts two real runs into one destination at once, trials
// times. After every trial the live set must validate, and each run must
// have published (exit 0) or exited 1 saying another run holds the
// destination. It returns how many runs were refused.
func overlapTrials(t *testing.T, trials int, gen func(in string) []string, validate []string) (refused int) {
	a, b := overlapInput(t, "a", 20000), overlapInput(t, "b", 15000)
	for trial := range trials {
		var wg sync.WaitGroup
		codes, errs := make([]int, 2), make([]string, 2)
		for i, in := range []string{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := child(gen(in)...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				codes[i], errs[i] = cmd.ProcessState.ExitCode(), stderr.String()
				if err != nil && cmd.ProcessState == nil {
					errs[i] = err.Error()
				}
			}()
		}
		wg.Wait()
		for i := range 2 {
			switch {
			case codes[i] == 0:
			case codes[i] == 1 && strings.Contains(errs[i], "another run holds the destination"):
				refused++
			default:
				t.Fatalf("trial %d, run %d: exit %d\n%s", trial, i, codes[i], errs[i])
			}
		}
		if codes[0] != 0 && codes[1] != 0 {
			t.Fatalf("trial %d: neither run published\n%s\n%s", trial, errs[0], errs[1])
		}
		if code, stdout, stderr := sitemapgen(t, "", validate...); code != 0 {
			t.Fatalf("trial %d: the live set does not validate: exit %d\n%s%s", trial, code, stdout, stderr)
		}
	}
	return refused
}

// TestOverlappingRunsFolder: two runs into one folder never corrupt it.
func TestOverlappingRunsFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("40 real processes")
	}
	out := filepath.Join(t.TempDir(), "out")
	refused := overlapTrials(t, 20, func(in string) []string {
		return []string{"generate", "--public-url", base, "--out", out, "--max-urls", "500",
			"--keep-generations", "0", "--max-shrink", "100%", in}
	}, []string{"validate", "--public-url", base, out})
	t.Logf("%d of 40 runs refused", refused)
	if refused == 0 {
		t.Error("no run ever found the destination held: the trials did not overlap")
	}
}

// TestOverlappingRunsS3: two runs into one S3 prefix never corrupt it.
func TestOverlappingRunsS3(t *testing.T) {
	if testing.Short() {
		t.Skip("40 real processes")
	}
	e := newS3Env(t)
	refused := overlapTrials(t, 20, func(in string) []string {
		return e.args(e.ep, "--max-urls", "500", "--keep-generations", "0", "--max-shrink", "100%", in)
	}, []string{"validate", "--public-url", base, "--s3-endpoint", e.ep, "--s3-path-style", "s3://" + e.bucket + "/" + e.prefix})
	t.Logf("%d of 40 runs refused", refused)
	if refused == 0 {
		t.Error("no run ever found the destination held: the trials did not overlap")
	}
	checkPublished(t, e)
}

// TestKilledWinnerFolder: the run holding a folder is killed mid-publish
// (SIGKILL: no cleanup); the kernel drops its lock, so the next run goes
// ahead and leaves a valid set.
func TestKilledWinnerFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	first := overlapInput(t, "a", 3000)
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--max-urls", "100", first); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	before := len(xmltest.Snapshot(t, out))
	cmd := child("generate", "--public-url", base, "--out", out, "--max-urls", "10", "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, "loc")
	for i := range 100000 {
		fmt.Fprintf(stdin, "%sk/%d\n", base, i)
	}
	// Stdin stays open: the run holds the lock, writing shards.
	deadline := time.Now().Add(20 * time.Second)
	for ents, _ := os.ReadDir(out); len(ents) < before+50; ents, _ = os.ReadDir(out) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the run wrote no shards")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// While it lives, another run is refused.
	second := overlapInput(t, "b", 2000)
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, second); code != 1 || !strings.Contains(stderr, "another run holds the destination") {
		t.Fatalf("run beside a live one: exit %d\n%s", code, stderr)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--max-shrink", "100%", "--keep-generations", "0", second); code != 0 {
		t.Fatalf("run after the kill: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := sitemapgen(t, "", "validate", "--public-url", base, out); code != 0 {
		t.Fatalf("validate after the kill: exit %d\n%s%s", code, stdout, stderr)
	}
}
