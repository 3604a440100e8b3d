package runlog

import (
	"bytes"
	"encoding/json"
	"log"
	"os"
	"strings"
	"testing"
)

func TestJSONRecordsCarryTheRun(t *testing.T) {
	var buf bytes.Buffer
	r := NewRun()
	log := r.Logger(&buf, JSON)
	log.Info("before", "n", 1)
	r.SetGeneration(7)
	log.With("stage", "publish").Warn("after\nwith a newline")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), buf.String())
	}
	for i, want := range []float64{0, 7} {
		var m map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Fatalf("line %d is not one JSON object: %v\n%s", i+1, err, lines[i])
		}
		if m["run_id"] != r.ID || m["generation"] != want {
			t.Errorf("line %d: run_id %v generation %v, want %s %v", i+1, m["run_id"], m["generation"], r.ID, want)
		}
	}
	if len(r.ID) != 16 || NewRun().ID == r.ID {
		t.Errorf("run id %q: want 16 hex digits, different each run", r.ID)
	}
}

func TestTextRecordsCarryTheRun(t *testing.T) {
	var buf bytes.Buffer
	r := NewRun()
	r.SetGeneration(3)
	r.Logger(&buf, Text).Info("done")
	if s := buf.String(); !strings.Contains(s, "run_id="+r.ID) || !strings.Contains(s, "generation=3") {
		t.Errorf("text record %q lacks the run's attributes", s)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"text", "json"} {
		f, err := ParseFormat(s)
		if err != nil || f.String() != s {
			t.Errorf("ParseFormat(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("JSON "); err == nil {
		t.Error("ParseFormat accepts an unknown format")
	}
}

// TestCaptureStdLog: while captured, a library's log.Printf is a JSON
// warning of the run; after restore, the standard logger is as it was.
func TestCaptureStdLog(t *testing.T) {
	var buf, before bytes.Buffer
	log.SetOutput(&before)
	log.SetFlags(log.Lshortfile)
	defer log.SetOutput(os.Stderr)
	defer log.SetFlags(log.LstdFlags)
	r := NewRun()
	restore := CaptureStdLog(r.Logger(&buf, JSON))
	log.Printf("Unsolicited response received on idle HTTP channel starting with %q", "HTTP/1.1")
	restore()
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("not one JSON record: %v\n%s", err, buf.String())
	}
	if m["level"] != "WARN" || m["msg"] != `Unsolicited response received on idle HTTP channel starting with "HTTP/1.1"` || m["run_id"] != r.ID {
		t.Errorf("record %v", m)
	}
	log.Print("after")
	if got := before.String(); !strings.HasSuffix(got, ": after\n") || buf.Len() == 0 || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("after restore: %q went to the old writer, %q to the run's", got, buf.String())
	}
}
