package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sitemapgen/sitemapgen/sink"
)

// inputKind is how FuzzInputKinds hands the rows to a run.
type inputKind uint8

const (
	kindRegular  inputKind = iota // a regular file
	kindFIFO                      // a named FIFO fed by a goroutine
	kindStdin                     // "-" reading Config.Stdin, a pipe
	kindGzip                      // a regular gzip file
	kindGzipFIFO                  // gzip through a FIFO
	numInputKinds
)

// kindRows builds n rows whose lengths (up to the 2,047 bytes a loc may
// have) come from shape, with or without a header, BOM and CRLF line ends.
func kindRows(n int, shape []byte, header, bom, crlf bool) []byte {
	var b bytes.Buffer
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	if bom {
		b.WriteString("\ufeff")
	}
	if header {
		b.WriteString("loc" + nl)
	}
	for i := range n {
		pad := 0
		if len(shape) > 0 {
			pad = int(shape[i%len(shape)]) * int(shape[(i+1)%len(shape)])
		}
		fmt.Fprintf(&b, "%sr/%d/%s%s", testBase, i, strings.Repeat("x", pad%2000), nl)
	}
	return b.Bytes()
}

// FuzzInputKinds: whatever kind of file the rows come from (regular, FIFO,
// stdin pipe, gzip, gzip through a FIFO) and whatever their sizes, every row
// is read exactly once: rows = urls = n, in order.
func FuzzInputKinds(f *testing.F) {
	f.Add(uint8(kindFIFO), uint32(59999), []byte{0}, true, false, false)
	f.Add(uint8(kindStdin), uint32(3000), []byte{40, 50}, false, true, true)
	f.Add(uint8(kindGzipFIFO), uint32(20000), []byte{255, 7, 3}, true, true, false)
	f.Add(uint8(kindRegular), uint32(1), []byte{}, false, false, false)
	f.Add(uint8(kindGzip), uint32(50000), []byte{1, 2}, false, false, true)
	f.Fuzz(func(t *testing.T, kind uint8, n uint32, shape []byte, header, bom, crlf bool) {
		k := inputKind(kind % uint8(numInputKinds))
		rows := int(n%60000) + 1 // past a probe (64 KiB) and several 1 MiB batches, quick enough to fuzz
		if testing.Short() {
			rows = min(rows, 5000) // still past a probe's 64 KiB
		}
		data := kindRows(rows, shape, header, bom, crlf)
		if k == kindGzip || k == kindGzipFIFO {
			var z bytes.Buffer
			w := gzip.NewWriter(&z)
			w.Write(data)
			w.Close()
			data = z.Bytes()
		}
		dir := t.TempDir()
		cfg := Config{}
		switch k {
		case kindRegular, kindGzip:
			p := filepath.Join(dir, "in.csv")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg.Inputs = []string{p}
		case kindFIFO, kindGzipFIFO:
			p := filepath.Join(dir, "in.csv")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				w, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err == nil {
					_, err = w.Write(data)
					w.Close()
				}
				done <- err
			}()
			defer func() {
				if err := <-done; err != nil {
					t.Errorf("the FIFO's writer: %v (the run did not read it all)", err)
				}
			}()
			cfg.Inputs = []string{p}
		case kindStdin:
			r, w := io.Pipe()
			go func() {
				w.Write(data)
				w.Close()
			}()
			cfg.Inputs, cfg.Stdin = []string{"-"}, r
		}
		out := t.TempDir()
		snk, err := sink.NewLocal(out)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Sink, cfg.PublicURL, cfg.Name = snk, mustScope(t, testBase), "sm"
		cfg.MaxURLs, cfg.MaxBytes, cfg.Fanout, cfg.GzipLevel = 50000, 10485760, 1000, 1
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("kind %d, %d rows: %v", k, rows, err)
		}
		if rep.Rows != int64(rows) || rep.URLs != int64(rows) || rep.Rejected.Total != 0 {
			t.Fatalf("kind %d, %d rows (header %v, bom %v, crlf %v): rows=%d urls=%d rejected=%v",
				k, rows, header, bom, crlf, rep.Rows, rep.URLs, rep.Rejected.ByReason)
		}
	})
}
