package s3obj_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

func TestReaderAt(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(5<<20+3, 10)
	e.put(t, "x/part-0.parquet", data)
	s := e.store(t, e.ep)
	o := e.stat(t, s, "x/part-0.parquet")
	r := s.NewReaderAt(context.Background(), o, s3obj.ReaderOptions{})
	defer r.Close()
	if r.Size() != int64(len(data)) {
		t.Fatalf("size %d", r.Size())
	}
	size := int64(len(data))
	for _, tt := range []struct {
		off  int64
		n    int
		want int
		err  error
	}{
		{0, 8, 8, nil},
		{size - 8, 8, 8, nil},
		{1 << 20, 3 << 20, 3 << 20, nil},
		{size - 5, 10, 5, io.EOF},
		{size, 1, 0, io.EOF},
		{size + 10, 1, 0, io.EOF},
		{7, 0, 0, nil},
	} {
		p := make([]byte, tt.n)
		n, err := r.ReadAt(p, tt.off)
		if n != tt.want || err != tt.err || !bytes.Equal(p[:n], data[min(tt.off, size):min(tt.off, size)+int64(n)]) {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v; want %d, %v", tt.n, tt.off, n, err, tt.want, tt.err)
		}
	}
	if st := r.Stats(); st.Requests != 4 || st.Bytes != 3<<20+8+8+5 {
		t.Errorf("stats %+v: want 4 requests of the bytes asked for", st)
	}
	// Rewritten during the run: the next read fails, naming the object.
	e.put(t, "x/part-0.parquet", randomBytes(len(data), 11))
	_, err := r.ReadAt(make([]byte, 10), 100)
	if !errors.Is(err, s3obj.ErrChanged) {
		t.Fatalf("read after rewrite: %v, want ErrChanged", err)
	}
	oneLine(t, err, "s3://"+e.bucket+"/x/part-0.parquet")
}

// TestPrefetch: ranges are merged across small gaps, cut at MaxBlock and
// fetched at most Requests at once; the reads inside them send nothing,
// and every block is released once read.
func TestPrefetch(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(16<<20, 12)
	e.put(t, "x/p.parquet", data)
	p := newProxy(t, e.ep)
	s := e.store(t, p.URL)
	o := e.stat(t, s, "x/p.parquet")
	const K, M = 1 << 10, 1 << 20
	opt := s3obj.ReaderOptions{Gap: 64 * K, MaxBlock: M, Requests: 2, MaxBytes: 4 * M}
	ranges := []s3obj.Range{{0, 100 * K}, {150 * K, 100 * K}, {M, 3 * M}, {10 * M, 10}, {5 * M, 2 * M}}
	plan := s3obj.Plan(append([]s3obj.Range(nil), ranges...), o.Size, opt.Gap, opt.MaxBlock)
	if len(plan) != 7 { // 0-250K merged; 3 MiB in 3; 2 MiB in 2; 10 bytes
		t.Fatalf("plan %v", plan)
	}
	hold := make(chan struct{})
	p.hold = hold
	go func() { // each GET waits a little, so that they overlap
		for range 20 {
			time.Sleep(20 * time.Millisecond)
			hold <- struct{}{}
		}
		close(hold)
	}()
	r := s.NewReaderAt(context.Background(), o, opt)
	defer r.Close()
	before := len(p.gets())
	r.Prefetch(ranges)
	var want, got bytes.Buffer
	for _, rg := range ranges {
		for off := rg.Off; off < rg.End(); off += 8 * K {
			b := make([]byte, min(8*K, rg.End()-off))
			if _, err := r.ReadAt(b, off); err != nil {
				t.Fatal(err)
			}
			got.Write(b)
		}
		want.Write(data[rg.Off:rg.End()])
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("prefetched reads differ from the object")
	}
	gets := p.gets()[before:]
	var planned []string
	var bytesPlanned int64
	for _, rg := range plan {
		planned = append(planned, fmt.Sprintf("bytes=%d-%d", rg.Off, rg.End()-1))
		bytesPlanned += rg.Len
	}
	slices.Sort(gets) // two at once arrive in either order
	slices.Sort(planned)
	if strings.Join(gets, ",") != strings.Join(planned, ",") {
		t.Errorf("GETs %v\nwant the plan %v", gets, planned)
	}
	if st := r.Stats(); st.Requests != int64(len(plan)) || st.Bytes != bytesPlanned {
		t.Errorf("stats %+v, want %d requests of %d bytes", st, len(plan), bytesPlanned)
	}
	// The bound must hold; reaching it depends on the machine's timing.
	if m := p.maxInflight.Load(); m > 2 {
		t.Errorf("%d GETs in flight at most, want at most Requests = 2", m)
	}
	if r.PeakHeld() > opt.MaxBytes || r.Held() != 0 {
		t.Errorf("peak %d bytes held (max %d), %d held after every read", r.PeakHeld(), opt.MaxBytes, r.Held())
	}
	t.Logf("%d requests, %d bytes fetched for %d asked, %d GETs in flight at most, peak %d bytes held",
		len(plan), bytesPlanned, int64(want.Len()), p.maxInflight.Load(), r.PeakHeld())
}

// TestPrefetchShortOfMemory: with less memory than the prefetch asks for,
// the rest waits; reads in another order than the prefetch's are served
// all the same, and the memory bound holds.
func TestPrefetchShortOfMemory(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(8<<20, 13)
	e.put(t, "x/p.parquet", data)
	s := e.store(t, e.ep)
	o := e.stat(t, s, "x/p.parquet")
	opt := s3obj.ReaderOptions{MaxBlock: 512 << 10, Requests: 3, MaxBytes: 1 << 20}
	r := s.NewReaderAt(context.Background(), o, opt)
	defer r.Close()
	r.Prefetch([]s3obj.Range{{0, 8 << 20}})
	got := make([]byte, len(data))
	const step = 100_000
	for off := (len(data) - 1) / step * step; off >= 0; off -= step { // backwards
		if _, err := r.ReadAt(got[off:min(off+step, len(data))], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatal("reads differ from the object")
	}
	if r.PeakHeld() > opt.MaxBytes {
		t.Errorf("peak %d bytes held, max %d", r.PeakHeld(), opt.MaxBytes)
	}
	r.Drop()
	time.Sleep(50 * time.Millisecond)
	if err := r.Close(); err != nil || r.Held() != 0 {
		t.Errorf("after Close: %v, %d bytes held", err, r.Held())
	}
}

// TestReaderAtResume: a prefetch and a direct read cut mid-body resume
// from the last byte received.
func TestReaderAtResume(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(3<<20, 14)
	e.put(t, "x/p.arrow", data)
	p := newProxy(t, e.ep)
	p.cut = func(r *http.Request, n int) int64 {
		if n%2 == 0 && r.Header.Get("Range") != "" {
			return 12345
		}
		return -1
	}
	s := e.store(t, p.URL)
	o := e.stat(t, s, "x/p.arrow")
	r := s.NewReaderAt(context.Background(), o, s3obj.ReaderOptions{})
	defer r.Close()
	r.Prefetch([]s3obj.Range{{0, 2 << 20}})
	got := make([]byte, len(data))
	if _, err := r.ReadAt(got[:2<<20], 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(got[2<<20:], 2<<20); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("reads differ from the object")
	}
	if gets := p.gets(); len(gets) < 3 || gets[1] != "bytes=12345-2097151" {
		t.Errorf("GETs %q: want the cut one resumed at byte 12345", gets)
	}
}

// TestHostileServer: a server that answers with other bytes than asked
// fails the read with ErrBadResponse, naming the object; nothing it claims
// is allocated.
func TestHostileServer(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(1<<20, 15)
	e.put(t, "x/p.parquet", data)
	tests := []struct {
		name   string
		modify func(resp *http.Response)
	}{
		{"other range", func(resp *http.Response) { resp.Header.Set("Content-Range", "bytes 1-100/1048576") }},
		{"bad range", func(resp *http.Response) { resp.Header.Set("Content-Range", "bytes 0-99/abc") }},
		{"no range", func(resp *http.Response) { resp.Header.Del("Content-Range") }},
		{"other size", func(resp *http.Response) { resp.Header.Set("Content-Range", "bytes 0-99/999999999999") }},
		{"longer body", func(resp *http.Response) {
			resp.Body = io.NopCloser(io.MultiReader(resp.Body, strings.NewReader("extra")))
			resp.ContentLength += 5
			resp.Header.Set("Content-Length", fmt.Sprint(resp.ContentLength))
		}},
		{"longer chunked body", func(resp *http.Response) {
			resp.Body = io.NopCloser(io.MultiReader(resp.Body, strings.NewReader("extra")))
			resp.ContentLength = -1
			resp.Header.Del("Content-Length")
		}},
		{"huge length", func(resp *http.Response) {
			resp.ContentLength = 1 << 50
			resp.Header.Set("Content-Length", fmt.Sprint(resp.ContentLength))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProxy(t, e.ep)
			p.modify = func(resp *http.Response, n int) {
				if resp.Request.Method == http.MethodGet && resp.Request.Header.Get("Range") != "" {
					tt.modify(resp)
				}
			}
			s := e.store(t, p.URL)
			o := e.stat(t, s, "x/p.parquet")
			r := s.NewReaderAt(context.Background(), o, s3obj.ReaderOptions{})
			defer r.Close()
			_, err := r.ReadAt(make([]byte, 100), 0)
			if !errors.Is(err, s3obj.ErrBadResponse) {
				t.Fatalf("%v, want ErrBadResponse", err)
			}
			oneLine(t, err, "s3://"+e.bucket+"/x/p.parquet")
			t.Log(err)
		})
	}
	// A shorter body is a cut connection: resumed, then given up.
	p := newProxy(t, e.ep)
	p.modify = func(resp *http.Response, n int) {
		if resp.Request.Header.Get("Range") != "" {
			resp.Body = io.NopCloser(io.LimitReader(resp.Body, 10))
		}
	}
	s, _ := s3obj.New(context.Background(), s3obj.Options{Endpoint: p.URL, PathStyle: true, Resumes: 1, MaxAttempts: 1})
	r := s.NewReaderAt(context.Background(), e.stat(t, s, "x/p.parquet"), s3obj.ReaderOptions{})
	defer r.Close()
	if _, err := r.ReadAt(make([]byte, 100), 0); err == nil {
		t.Fatal("a short body read without error")
	} else {
		oneLine(t, err, "s3://"+e.bucket+"/x/p.parquet")
	}
}
