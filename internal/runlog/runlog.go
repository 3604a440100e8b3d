// Package runlog builds the logger of one run: text or JSON records (one
// JSON object per line, as log pipelines want them), every one carrying the
// run's id and the generation it publishes.
package runlog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync/atomic"
)

// Format is how records are written.
type Format int

const (
	Text Format = iota // slog's key=value lines
	JSON               // slog's JSON handler: one object per line
)

// ParseFormat reads "text" or "json".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "text":
		return Text, nil
	case "json":
		return JSON, nil
	}
	return 0, fmt.Errorf("%q: want text or json", s)
}

// String returns the name ParseFormat reads.
func (f Format) String() string {
	if f == JSON {
		return "json"
	}
	return "text"
}

// Run identifies one run in its log records.
type Run struct {
	ID         string
	generation atomic.Int64
}

// NewRun returns a Run with a random id of 16 hex digits.
func NewRun() *Run {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand's documented contract)
	return &Run{ID: hex.EncodeToString(b[:])}
}

// SetGeneration sets the generation every later record carries: the one
// the run publishes, known once the published manifest is read (0 before).
func (r *Run) SetGeneration(g int64) { r.generation.Store(g) }

// Generation returns what SetGeneration set.
func (r *Run) Generation() int64 { return r.generation.Load() }

// Logger returns a logger writing records of level Info and above to w in
// format f, each carrying run_id and generation.
func (r *Run) Logger(w io.Writer, f Format) *slog.Logger {
	opt := &slog.HandlerOptions{Level: slog.LevelInfo}
	var h slog.Handler = slog.NewTextHandler(w, opt)
	if f == JSON {
		h = slog.NewJSONHandler(w, opt)
	}
	return slog.New(&handler{inner: h, run: r})
}

// handler adds the run's attributes to every record. The generation is read
// when a record is written: it becomes known after the logger is made.
type handler struct {
	inner slog.Handler
	run   *Run
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(slog.String("run_id", h.run.ID), slog.Int64("generation", h.run.Generation()))
	return h.inner.Handle(ctx, rec)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &handler{inner: h.inner.WithAttrs(as), run: h.run}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), run: h.run}
}

// CaptureStdLog sends what libraries write through the standard log package
// (net/http's "Unsolicited response" on a misbehaving server, the AWS SDK's
// warnings) to l as warnings, until restore is called: with JSON records a
// plain line on stderr would break every reader of the log.
func CaptureStdLog(l *slog.Logger) (restore func()) {
	out, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	log.SetOutput(stdLog{l})
	log.SetFlags(0)
	log.SetPrefix("")
	return func() {
		log.SetOutput(out)
		log.SetFlags(flags)
		log.SetPrefix(prefix)
	}
}

// stdLog writes each line it is given as a record.
type stdLog struct{ l *slog.Logger }

func (w stdLog) Write(p []byte) (int, error) {
	w.l.Warn(strings.TrimRight(string(p), "\n"), "from", "library")
	return len(p), nil
}
