package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/sitemapgen/sitemapgen/encode"
)

// ErrEmptyInput reports an input file that holds no data rows. A nightly
// export that comes out empty is a fault upstream, not a site with no pages.
var ErrEmptyInput = errors.New("no data rows")

// format is how an input file is read.
type inputFormat int

const (
	formatCSV     inputFormat = iota // CSV or one URL per line, maybe gzipped
	formatParquet                    // Apache Parquet
	formatArrow                      // Arrow IPC, file or stream format
)

func (f inputFormat) String() string {
	return [...]string{"CSV", "Parquet", "Arrow"}[f]
}

// inputFile is one file to read, found from one INPUT argument: the argument
// itself, or a file of the folder or glob it names.
type inputFile struct {
	path    string
	format  inputFormat
	arg     int  // index of the argument in Config.Inputs
	listed  bool // found in a folder or by a glob, not named directly
	regular bool // a regular file, which can be opened and read again
	// held is the open handle of an input that is not a regular file,
	// kept from the probe to the read (see probeNamespaces).
	held *heldInput
}

// rowSource is what the read stage pulls batches from: CSVScanner,
// ParquetReader and ArrowReader. It is called once per batch, never per row.
type rowSource interface {
	// Fill appends rows to b; io.EOF when the source is exhausted and no row was added.
	Fill(b *Batch, chunk int) error
	// Rows reports the data rows handed out so far.
	Rows() int64
	// Extensions returns the extension columns of the input; for CSV they
	// are known after the first Fill.
	Extensions() []encode.ExtColumn
}

// probeBytes is the input a CSV probe reads to find the header.
const probeBytes = 64 << 10

// openFile opens an input file; tests replace it to count opens.
var openFile = os.Open

// probeNamespaces finds the extension namespaces of all inputs before the
// first row is encoded, from each CSV header and columnar schema: every
// shard of the run declares them, and their bytes count in the limit.
// A regular file is opened again by the read; any other input (stdin, a
// pipe, a FIFO, a process substitution) can be read only once, so its
// handle is kept in files[i].held with the probed bytes replayed before the
// rest. Errors are left to the real read, which reports them with their
// place, except that an input that cannot be opened fails now. On error,
// every held handle is released.
func probeNamespaces(ctx context.Context, files []inputFile, stdin io.Reader, opt CSVOptions) (ns encode.Namespaces, err error) {
	defer func() {
		if err != nil {
			releaseHeld(files)
		}
	}()
	for i := range files {
		f := &files[i]
		var rec *recorder
		if f.format == formatCSV && !f.regular {
			raw, closeRaw, err := openWaiting(ctx, f.path, stdin)
			if err != nil {
				return 0, err
			}
			rec = &recorder{r: raw}
			f.held = &heldInput{r: rec, close: closeRaw}
		}
		held := f.held
		src, _, closeSrc, err := openSource(f, stdin, opt)
		f.held = held // the probe only borrows it
		if err != nil {
			return 0, err
		}
		if f.format == formatCSV {
			var b Batch
			src.Fill(&b, probeBytes) // errors come again, in place, from the real read
		}
		ns |= encode.NamespacesOf(src.Extensions())
		if rec != nil {
			// The replay starts from the raw bytes, before any gzip: the
			// real read decodes them again from the start.
			f.held.r = io.MultiReader(bytes.NewReader(rec.buf.Bytes()), rec.r)
		} else {
			closeSrc()
		}
	}
	return ns, nil
}

// releaseHeld closes the inputs a probe held and that no read took.
func releaseHeld(files []inputFile) {
	for i := range files {
		if h := files[i].held; h != nil {
			h.close()
			files[i].held = nil
		}
	}
}

// heldInput is an input that can be read only once, opened by the probe and
// handed to the read: r replays what the probe read, then goes on.
type heldInput struct {
	r     io.Reader
	close func() error
}

// recorder keeps what is read through it, so it can be read again.
type recorder struct {
	r   io.Reader
	buf bytes.Buffer
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf.Write(p[:max(n, 0)])
	return n, err
}

// input is one opened input file.
type input struct {
	name  string
	r     io.Reader
	lines bool // one URL per line, not CSV
	close func() error
}

func formatOf(name string) inputFormat {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".parquet"):
		return formatParquet
	case strings.HasSuffix(n, ".arrow"), strings.HasSuffix(n, ".feather"), strings.HasSuffix(n, ".arrows"), strings.HasSuffix(n, ".ipc"):
		return formatArrow
	}
	return formatCSV
}

// hasGlob reports whether name holds a filepath.Match meta character.
func hasGlob(name string) bool { return strings.ContainsAny(name, "*?[") }

// hiddenPart reports a name that Spark, Hive and friends write beside their
// part files and that is not data: _SUCCESS, _delta_log, .part-0.crc, ...
func hiddenPart(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")
}

// expandInputs checks the inputs and lists the files to read, failing fast,
// before anything is written, on inputs that cannot be read. A folder stands
// for the Parquet and Arrow files below it (Hive key=value/ sub-folders
// included, hidden and _-prefixed names skipped), a pattern with * ? or [ for
// the files it matches; both in lexical path order, so output is
// deterministic.
func expandInputs(names []string) ([]inputFile, error) {
	stdin := 0
	var files []inputFile
	for arg, n := range names {
		if n == "-" {
			if stdin++; stdin > 1 {
				return nil, errors.New("'-' (stdin) given more than once")
			}
			files = append(files, inputFile{path: n, arg: arg})
			continue
		}
		// Stat follows links: /dev/stdin and /dev/fd/N name what they open.
		fi, err := os.Stat(n)
		if err != nil && hasGlob(n) {
			matches, gerr := filepath.Glob(n)
			if gerr != nil {
				return nil, fmt.Errorf("%s: %w", n, gerr)
			}
			sort.Strings(matches)
			found := 0
			for _, m := range matches {
				mi, err := os.Stat(m)
				if err != nil || mi.IsDir() {
					continue
				}
				files = append(files, inputFile{path: m, format: formatOf(m), arg: arg, listed: true, regular: mi.Mode().IsRegular()})
				found++
			}
			if found == 0 {
				return nil, fmt.Errorf("%s: no file matches the pattern", n)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, inputFile{path: n, format: formatOf(n), arg: arg, regular: fi.Mode().IsRegular()})
			continue
		}
		var found []string
		err = filepath.WalkDir(n, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != n && hiddenPart(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && formatOf(p) != formatCSV {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: is a folder without .parquet or Arrow files; name the files to read", n)
		}
		sort.Strings(found)
		for _, p := range found {
			fi, err := os.Stat(p)
			if err != nil {
				return nil, err
			}
			files = append(files, inputFile{path: p, format: formatOf(p), arg: arg, listed: true, regular: fi.Mode().IsRegular()})
		}
	}
	for _, f := range files {
		if f.format != formatCSV && !f.regular {
			// Parquet and Arrow files are read by position; a pipe is not.
			return nil, fmt.Errorf("%s: a %s input must be a regular file (not a pipe or device); write it to a file first", f.path, f.format)
		}
	}
	return files, nil
}

// openRaw opens the input path ("-" is stdin).
func openRaw(path string, stdin io.Reader) (io.Reader, func() error, error) {
	if path == "-" {
		return stdin, func() error { return nil }, nil
	}
	f, err := openFile(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// openWaiting is openRaw for an input that may block on open, as a FIFO
// does until a writer opens it: it returns when ctx is done, and a handle
// opened after that is closed.
func openWaiting(ctx context.Context, path string, stdin io.Reader) (io.Reader, func() error, error) {
	type opened struct {
		r     io.Reader
		close func() error
		err   error
	}
	done := make(chan opened, 1)
	go func() {
		r, c, err := openRaw(path, stdin)
		done <- opened{r, c, err}
	}()
	select {
	case o := <-done:
		return o.r, o.close, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.err == nil {
				o.close()
			}
		}()
		return nil, nil, fmt.Errorf("%s: %w", path, ctx.Err())
	}
}

// openInput opens f, or takes the handle the probe held for it, and unwraps
// gzip, which it recognises by its magic number rather than by the name.
func openInput(f *inputFile, stdin io.Reader) (*input, error) {
	in := &input{name: f.path}
	if f.path == "-" {
		in.name = "stdin"
	}
	var raw io.Reader
	if h := f.held; h != nil {
		f.held = nil // taken: closing it is now in.close's job
		raw, in.close = h.r, h.close
	} else {
		var err error
		if raw, in.close, err = openRaw(f.path, stdin); err != nil {
			return nil, err
		}
	}
	lower := strings.ToLower(strings.TrimSuffix(strings.ToLower(f.path), ".gz"))
	in.lines = strings.HasSuffix(lower, ".txt")

	br := bufio.NewReaderSize(raw, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		in.close()
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	in.r = br
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			in.close()
			return nil, fmt.Errorf("%s: gzip: %w", in.name, err)
		}
		in.r = zr
	}
	return in, nil
}

// openSource opens f as a rowSource; close releases it. A CSV input the
// probe held is taken from f (f.held is nil after).
func openSource(f *inputFile, stdin io.Reader, opt CSVOptions) (src rowSource, name string, close func() error, err error) {
	switch f.format {
	case formatParquet:
		pr, err := OpenParquet(f.path, ColumnOptions{Columns: opt.Columns})
		if err != nil {
			return nil, f.path, nil, err
		}
		return pr, f.path, pr.Close, nil
	case formatArrow:
		ar, err := OpenArrow(f.path, ColumnOptions{Columns: opt.Columns})
		if err != nil {
			return nil, f.path, nil, err
		}
		return ar, f.path, ar.Close, nil
	}
	in, err := openInput(f, stdin)
	if err != nil {
		return nil, f.path, nil, err
	}
	opt.Lines = in.lines
	return NewCSVScanner(in.r, in.name, opt), in.name, in.close, nil
}
