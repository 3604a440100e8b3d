package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

// TestPipedInputsLoseNothing runs the real command on inputs that can be read
// only once: /dev/stdin fed by a pipe, a bash process substitution and a
// named FIFO, each with and without a header row. Each must read all 100,000
// rows and publish the bytes the same rows give from a regular file.
func TestPipedInputsLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 7 real processes over 100k rows")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed for process substitution:", err)
	}
	dir := t.TempDir()
	var rows strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&rows, "%sp%d\n", base, 100000+i)
	}
	for _, header := range []bool{false, true} {
		data := rows.String()
		if header {
			data = "loc\n" + data
		}
		name := map[bool]string{false: "headerless", true: "header"}[header]
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name+".csv")
			if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			want := runShell(t, bash, dir, "regular", "$SITEMAPGEN %s", file)
			wantSet := xmltest.Snapshot(t, want)

			fifo := filepath.Join(dir, name+".fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			cases := []struct{ kind, shell string }{
				{"dev-stdin", "cat %[1]s | $SITEMAPGEN /dev/stdin"},
				{"process-substitution", "$SITEMAPGEN <(cat %[1]s)"},
				// One writer, as the issue measured: it must not die of SIGPIPE.
				{"fifo", "cat %[1]s > " + fifo + " & $SITEMAPGEN " + fifo + "; wait $! || exit 9"},
			}
			for _, c := range cases {
				out := runShell(t, bash, dir, name+"-"+c.kind, c.shell, file)
				got := xmltest.Snapshot(t, out)
				if len(got) != len(wantSet) {
					t.Errorf("%s: %d files, want %d", c.kind, len(got), len(wantSet))
				}
				for n, b := range wantSet {
					if n == "sitemap.manifest.json" {
						continue // holds the run's time
					}
					if !bytes.Equal(got[n], b) {
						t.Errorf("%s: %s differs from the regular file's run", c.kind, n)
					}
				}
			}
		})
	}
}

// runShell runs a shell line in which $SITEMAPGEN is the command with its
// generate flags, into a new folder named after kind; it checks the exit
// code and the report's rows and returns the folder.
func runShell(t *testing.T, bash, dir, kind, line, file string) string {
	t.Helper()
	out := filepath.Join(dir, kind)
	report := filepath.Join(dir, kind+".json")
	cmd := exec.Command(bash, "-c", fmt.Sprintf(line, file))
	cmd.Env = append(os.Environ(), mainEnv+"=1",
		"SITEMAPGEN="+os.Args[0]+" -test.run=^$ generate --public-url "+base+" --out "+out+" --report "+report+" --max-urls 30000 --now 2026-11-24T02:00:00Z")
	// The child's arguments come from SITEMAPGEN_TEST_ARGS in TestMain;
	// here bash passes them on the command line instead.
	cmd.Env = append(cmd.Env, "SITEMAPGEN_TEST_ARGS_FROM_CMDLINE=1")
	done := make(chan struct{})
	timer := time.AfterFunc(60*time.Second, func() {
		cmd.Process.Kill()
		close(done)
	})
	b, err := cmd.CombinedOutput()
	timer.Stop()
	select {
	case <-done:
		t.Fatalf("%s: still running after 60 s (killed)\n%s", kind, b)
	default:
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", kind, err, b)
	}
	if rep := readReport(t, report); rep.Rows != 100000 || rep.URLs != 100000 || rep.Rejected.Total != 0 {
		t.Fatalf("%s: rows=%d urls=%d rejected=%d, want 100000 rows, all published", kind, rep.Rows, rep.URLs, rep.Rejected.Total)
	}
	return out
}
