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

// The test binary doubles as the command: with this variable set, TestMain
// runs main, so the signal test drives a real process.
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

// TestInterruptKeepsPreviousSet sends SIGINT to a real run half way through
// (shards written, input not finished): it exits 1, the previous set is byte
// for byte as it was, and the shards the interrupted run wrote are gone.
func TestInterruptKeepsPreviousSet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "../../testdata/sample.csv"); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	before := xmltest.Snapshot(t, out)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"=1",
		"SITEMAPGEN_TEST_ARGS=generate --public-url "+base+" --out "+out+" --max-urls 10 -")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, "loc")
	for i := range 100000 { // a few batches: more than one read chunk
		fmt.Fprintf(stdin, "%snew/%d\n", base, i)
	}
	// Stdin stays open: the run cannot finish; wait until it has written shards.
	deadline := time.Now().Add(20 * time.Second)
	// Count names only: the child renames temporary files as we look.
	for ents, _ := os.ReadDir(out); len(ents) < len(before)+50; ents, _ = os.ReadDir(out) {
		if time.Now().After(deadline) {
			t.Fatalf("the run wrote no shards: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no exit 20 s after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d (%v), want 1\n%s", code, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
	}
	after := xmltest.Snapshot(t, out)
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after the interrupted run", len(before), len(after))
	}
	for name, data := range before {
		if !bytes.Equal(after[name], data) {
			t.Errorf("%s changed", name)
		}
	}
}
