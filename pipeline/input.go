package pipeline

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// ErrEmptyInput reports an input file that holds no data rows. A nightly
// export that comes out empty is a fault upstream, not a site with no pages.
var ErrEmptyInput = errors.New("no data rows")

// input is one opened input file.
type input struct {
	name  string
	r     io.Reader
	lines bool // one URL per line, not CSV
	close func() error
}

// checkInputs fails fast, before anything is written, on inputs that cannot be read.
func checkInputs(names []string) error {
	stdin := 0
	for _, n := range names {
		if n == "-" {
			if stdin++; stdin > 1 {
				return errors.New("'-' (stdin) given more than once")
			}
			continue
		}
		fi, err := os.Stat(n)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return fmt.Errorf("%s: is a folder; name the files to read", n)
		}
		if isParquet(n) {
			return fmt.Errorf("%s: Parquet input is not supported yet", n)
		}
	}
	return nil
}

func isParquet(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".parquet") }

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
