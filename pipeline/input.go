package pipeline

import (
	"bufio"
	"bytes"
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

// inputFile is one file to read, found from one INPUT argument: the argument
// itself, or a file of the folder or glob it names.
type inputFile struct {
	path   string
	format inputFormat
	arg    int  // index of the argument in Config.Inputs
	listed bool // found in a folder or by a glob, not named directly
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

// probeNamespaces finds the extension namespaces of all inputs before the
// first row is encoded, from each CSV header and columnar schema: every
// shard of the run declares them, and their bytes count in the limit.
// Standard input is read only in part; the returned reader replays that
// part and goes on. Errors are left to the real read, which reports them
// with their place, except that an input that cannot be opened fails now.
func probeNamespaces(files []inputFile, stdin io.Reader, opt CSVOptions) (encode.Namespaces, io.Reader, error) {
	var ns encode.Namespaces
	for _, f := range files {
		in := stdin
		var rec *recorder
		if f.path == "-" && f.format == formatCSV {
			rec = &recorder{r: stdin}
			in = rec
		}
		src, _, closeSrc, err := openSource(f, in, opt)
		if err != nil {
			return 0, stdin, err
		}
		if f.format == formatCSV {
			var b Batch
			src.Fill(&b, probeBytes) // errors come again, in place, from the real read
		}
		ns |= encode.NamespacesOf(src.Extensions())
		closeSrc()
		if rec != nil {
			stdin = io.MultiReader(bytes.NewReader(rec.buf.Bytes()), stdin)
		}
	}
	return ns, stdin, nil
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
		fi, err := os.Stat(n)
		if err != nil && hasGlob(n) {
			matches, gerr := filepath.Glob(n)
			if gerr != nil {
				return nil, fmt.Errorf("%s: %w", n, gerr)
			}
			sort.Strings(matches)
			found := 0
			for _, m := range matches {
				if mi, err := os.Stat(m); err != nil || mi.IsDir() {
					continue
				}
				files = append(files, inputFile{path: m, format: formatOf(m), arg: arg, listed: true})
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
			files = append(files, inputFile{path: n, format: formatOf(n), arg: arg})
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
			files = append(files, inputFile{path: p, format: formatOf(p), arg: arg, listed: true})
		}
	}
	return files, nil
}

// openInput opens name ("-" is stdin) and unwraps gzip, which it recognises
// by its magic number rather than by the file name.
func openInput(name string, stdin io.Reader) (*input, error) {
	in := &input{name: name, close: func() error { return nil }}
	var raw io.Reader
	if name == "-" {
		in.name = "stdin"
		raw = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		raw, in.close = f, f.Close
	}
	lower := strings.ToLower(strings.TrimSuffix(strings.ToLower(name), ".gz"))
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

// openSource opens f as a rowSource; close releases it.
func openSource(f inputFile, stdin io.Reader, opt CSVOptions) (src rowSource, name string, close func() error, err error) {
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
	in, err := openInput(f.path, stdin)
	if err != nil {
		return nil, f.path, nil, err
	}
	opt.Lines = in.lines
	return NewCSVScanner(in.r, in.name, opt), in.name, in.close, nil
}
