package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

// The tests of the command run as a real process: an interrupt, inputs that
// can be read only once.

// The test binary doubles as the command: with this variable set, TestMain
// runs main, so a test can drive a real process (see child).
const mainEnv = "SITEMAPGEN_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		if h := os.Getenv(hostnameEnv); h != "" {
			// A UTS namespace of its own (see inNamespaces): a container's host name.
			if err := syscall.Sethostname([]byte(h)); err != nil {
				fmt.Fprintln(os.Stderr, "sethostname:", err)
				os.Exit(3)
			}
		}
		args := strings.Fields(os.Getenv("SITEMAPGEN_TEST_ARGS"))
		if os.Getenv("SITEMAPGEN_TEST_ARGS_FROM_CMDLINE") == "1" {
			// The test binary's own flags first, then the command's.
			args = os.Args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-test.") {
				args = args[1:]
			}
		}
		os.Args = append([]string{"sitemapgen"}, args...)
		main()
	}
	os.Exit(m.Run())
}

// child is the command run as a real process of the test binary.
func child(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"=1", "SITEMAPGEN_TEST_ARGS="+strings.Join(args, " "))
	return cmd
}

// start starts cmd; its stderr collects in the buffer returned. The
// process is killed at the end of the test.
func start(t *testing.T, cmd *exec.Cmd) *bytes.Buffer {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return &stderr
}

// startFeeding starts cmd as start does and writes a loc header and n rows
// under base+dir to its standard input, which stays open: the run cannot
// finish until the test closes it.
func startFeeding(t *testing.T, cmd *exec.Cmd, dir string, n int) (io.WriteCloser, *bytes.Buffer) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := start(t, cmd)
	fmt.Fprintln(stdin, "loc")
	for i := range n {
		fmt.Fprintf(stdin, "%s%s/%d\n", base, dir, i)
	}
	return stdin, stderr
}

// stopWith sends sig to the running cmd and returns its exit code; it fails
// the test if the process has not exited within wait.
func stopWith(t *testing.T, cmd *exec.Cmd, sig os.Signal, wait time.Duration) int {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(wait):
		cmd.Process.Kill()
		t.Fatalf("no exit %v after %v", wait, sig)
	}
	return cmd.ProcessState.ExitCode()
}

// TestInterruptKeepsPreviousSet sends SIGINT to a real run half way through
// (shards written, input not finished): it exits 1, the previous set is byte
// for byte as it was, and the shards the interrupted run wrote are gone.
func TestInterruptKeepsPreviousSet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "../../testdata/sample.csv"); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	before := xmltest.Snapshot(t, out)

	cmd := child("generate", "--public-url", base, "--out", out, "--max-urls", "10", "-")
	_, stderr := startFeeding(t, cmd, "new", 100000) // a few batches: more than one read chunk
	// Stdin stays open: the run cannot finish; wait until it has written shards.
	deadline := time.Now().Add(20 * time.Second)
	// Count names only: the child renames temporary files as we look.
	for ents, _ := os.ReadDir(out); len(ents) < len(before)+50; ents, _ = os.ReadDir(out) {
		if time.Now().After(deadline) {
			t.Fatalf("the run wrote no shards: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := stopWith(t, cmd, syscall.SIGINT, 20*time.Second); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
	}
	xmltest.Unchanged(t, out, before, "the interrupted run")
}

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
