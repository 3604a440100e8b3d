package s3obj

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// parseContentRange parses a Content-Range header, "bytes first-last/total"
// (RFC 9110 14.4); total is -1 for "*". Numbers are decimal digits only,
// and first <= last < total.
func parseContentRange(h string) (first, last, total int64, ok bool) {
	rest, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, 0, 0, false
	}
	rng, tot, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, 0, false
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok {
		return 0, 0, 0, false
	}
	num := func(s string) (int64, bool) {
		if s == "" || len(s) > 18 || strings.Trim(s, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	var ok1, ok2 bool
	first, ok1 = num(a)
	last, ok2 = num(b)
	if !ok1 || !ok2 || first > last {
		return 0, 0, 0, false
	}
	total = -1
	if tot != "*" {
		if total, ok = num(tot); !ok || last >= total {
			return 0, 0, 0, false
		}
	}
	return first, last, total, true
}

// get sends one GET of o pinned to its ETag, of the bytes from off to the
// end when end < 0, else of [off, end), and checks what the answer claims
// (status range, length, object size) before its body is read: the body
// then holds exactly the bytes asked for, or the read of it fails.
func (s *Store) get(ctx context.Context, o Object, off, end int64, c *Counter) (io.ReadCloser, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key), IfMatch: aws.String(o.ETag)}
	whole := off == 0 && (end < 0 || end == o.Size)
	if !whole {
		if end < 0 {
			in.Range = aws.String(fmt.Sprintf("bytes=%d-", off))
		} else {
			in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", off, end-1))
		}
	}
	if end < 0 {
		end = o.Size
	}
	c.requests.Add(1)
	s.total.requests.Add(1)
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		return nil, explain(err, o.Bucket, o.Key)
	}
	bad := func(format string, a ...any) (io.ReadCloser, error) {
		out.Body.Close()
		return nil, &Error{o.String(), fmt.Sprintf(format, a...), ErrBadResponse}
	}
	if et := aws.ToString(out.ETag); et != "" && et != o.ETag {
		out.Body.Close()
		return nil, &Error{o.String(), ErrChanged.Error(), ErrChanged}
	}
	want := end - off
	if cr := aws.ToString(out.ContentRange); cr != "" {
		first, last, total, ok := parseContentRange(cr)
		switch {
		case !ok:
			return bad("bad Content-Range %q", cr)
		case first != off || last != end-1:
			return bad("asked for bytes %d-%d, got %d-%d", off, end-1, first, last)
		case total >= 0 && total != o.Size:
			return bad("listed with %d bytes, served with %d", o.Size, total)
		}
	} else if !whole {
		return bad("asked for bytes %d-%d, got no Content-Range", off, end-1)
	}
	if n := out.ContentLength; n != nil && *n >= 0 && *n != want {
		return bad("asked for %d bytes, the answer claims %d", want, *n)
	}
	return &body{rc: out.Body, left: want, o: o, c: c, total: &s.total}, nil
}

// body is a GET's body that yields exactly left bytes: one more is an error,
// one fewer io.ErrUnexpectedEOF.
type body struct {
	rc    io.ReadCloser
	left  int64
	o     Object
	c     *Counter
	total *Counter
}

func (b *body) Read(p []byte) (int, error) {
	if b.left == 0 {
		// A server without Content-Length may send more than asked.
		var one [1]byte
		if n, _ := io.ReadFull(b.rc, one[:]); n > 0 {
			return 0, &Error{b.o.String(), "the server sent more bytes than asked for", ErrBadResponse}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	b.c.bytes.Add(int64(n))
	b.total.bytes.Add(int64(n))
	if err == io.EOF && b.left > 0 {
		err = io.ErrUnexpectedEOF
	} else if err == io.EOF {
		err = nil
	}
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }

// resumable reports whether a body read failed in a way a new Range
// request can mend: a connection reset or a body cut short, not a
// cancellation or a server that answered wrongly.
func resumable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var e *Error
	return !errors.As(err, &e) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// backoff waits before resume n (from 1): 50 ms doubling, at most 2 s.
func backoff(ctx context.Context, n int) error {
	d := min(50*time.Millisecond<<min(n-1, 6), 2*time.Second)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readRange fills dst with the bytes of o at off, with ranged GETs pinned to
// its ETag, resuming a body cut short from the last byte received.
func (s *Store) readRange(ctx context.Context, o Object, off int64, dst []byte, c *Counter) error {
	got, resumes := 0, 0
	for got < len(dst) {
		b, err := s.get(ctx, o, off+int64(got), off+int64(len(dst)), c)
		if err != nil {
			return err
		}
		var n int
		n, err = io.ReadFull(b, dst[got:])
		got += n
		if err == nil {
			_, err = b.Read(nil) // more than asked?
			if err == io.EOF {
				err = nil
			}
		}
		b.Close()
		if err == nil {
			break
		}
		if !resumable(ctx, err) || resumes >= s.resumes {
			return s.readErr(ctx, o, err)
		}
		resumes++
		if err := backoff(ctx, resumes); err != nil {
			return s.readErr(ctx, o, err)
		}
	}
	return nil
}

// readErr names o in an error of reading its body.
func (s *Store) readErr(ctx context.Context, o Object, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", o, err)
	}
	return &Error{o.String(), fmt.Sprintf("reading failed after %d resumes: %v", s.resumes, err), err}
}
