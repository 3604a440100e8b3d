package sink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestLocalPut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// PutDeferred (durable at the next Sync) is in place at once, as Put.
	for _, content := range []string{"first", "second", "third"} {
		put := l.Put
		if content == "second" {
			put = l.PutDeferred
		}
		if err := put(ctx, "sitemap.xml", []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "sitemap.xml"))
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "sitemap.xml"))
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 so a web server can read it", fi.Mode().Perm())
	}
	names, _ := l.List(ctx)
	if !slices.Equal(names, []string{"sitemap.xml"}) {
		t.Errorf("List = %q: temporary files left behind?", names)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden"} {
		if err := l.Put(ctx, bad, nil); err == nil {
			t.Errorf("Put(%q) accepted", bad)
		}
		if err := l.PutDeferred(ctx, bad, nil); err == nil {
			t.Errorf("PutDeferred(%q) accepted", bad)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Put(cctx, "late.xml", nil); err == nil {
		t.Error("Put after cancel succeeded")
	}
	if err := l.Delete(ctx, "missing.xml"); err != nil {
		t.Errorf("Delete of a missing file: %v", err)
	}
}

// TestLocalPutDeferred: a new name is written in place, whole, and a name
// the folder holds is replaced atomically: a reader that opened the old
// file reads the old bytes to the end, never the new ones or a short
// file. A name held by a folder is refused, and no temporary file is left
// either way.
func TestLocalPutDeferred(t *testing.T) {
	dir, l := tempLocal(t)
	ctx := context.Background()
	old := bytes.Repeat([]byte("old "), 4096)
	if err := l.PutDeferred(ctx, "s-000001.xml.gz", old); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(filepath.Join(dir, "s-000001.xml.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := l.PutDeferred(ctx, "s-000001.xml.gz", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(reader); err != nil || !bytes.Equal(got, old) {
		t.Errorf("a reader of the replaced file read %d bytes (%v); want the old %d: replaced in place, not renamed over",
			len(got), err, len(old))
	}
	if got, err := os.ReadFile(filepath.Join(dir, "s-000001.xml.gz")); err != nil || string(got) != "new" {
		t.Errorf("read back %q, %v; want %q", got, err, "new")
	}
	if err := os.Mkdir(filepath.Join(dir, "s-000002.xml.gz"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.PutDeferred(ctx, "s-000002.xml.gz", []byte("x")); err == nil {
		t.Error("PutDeferred over a folder succeeded")
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	names, _ := l.List(ctx)
	if !slices.Equal(names, []string{"s-000001.xml.gz"}) {
		t.Errorf("List = %q: temporary files left behind?", names)
	}
}

// TestLocalPutDeferredFails: a new name whose write fails is left empty,
// not removed: by then the name may be another run's (one that took over
// the lock of a run paused past it), and the caller removes what it wrote
// once it knows it holds the lock. A temporary file is removed.
func TestLocalPutDeferredFails(t *testing.T) {
	dir, l := tempLocal(t)
	ctx := context.Background()
	if err := l.PutDeferred(ctx, "held.xml.gz", []byte("old")); err != nil {
		t.Fatal(err)
	}
	// Writes past 1 KiB fail (EFBIG; Go ignores SIGXFSZ) for the put, and
	// only for it: this package's tests do not run in parallel.
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	small := limit
	small.Cur = 1024
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &small); err != nil {
		t.Skipf("cannot lower the file size limit: %v", err)
	}
	big := bytes.Repeat([]byte("x"), 4096)
	errNew := l.PutDeferred(ctx, "new.xml.gz", big)
	errHeld := l.PutDeferred(ctx, "held.xml.gz", big)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	if errNew == nil || errHeld == nil {
		t.Fatalf("puts past the file size limit: %v, %v; want errors", errNew, errHeld)
	}
	if fi, err := os.Stat(filepath.Join(dir, "new.xml.gz")); err != nil || fi.Size() != 0 {
		t.Errorf("the new name after its put failed: %v, %v; want it there, empty", fi, err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "held.xml.gz")); err != nil || string(got) != "old" {
		t.Errorf("the held name after its put failed: %q, %v; want its old bytes", got, err)
	}
	names, _ := l.List(ctx)
	if !slices.Equal(names, []string{"held.xml.gz", "new.xml.gz"}) {
		t.Errorf("List = %q: a temporary file left behind?", names)
	}
}

// TestLocalPutAll: a batch replaces files and adds new ones, readable by
// all, with no temporary file left; a batch that fails while its files are
// written places none of them (renames come only after every file is
// written and synced), and one canceled places none.
func TestLocalPutAll(t *testing.T) {
	dir, l := tempLocal(t)
	ctx := context.Background()
	if err := l.Put(ctx, "a.xml", []byte("old a")); err != nil {
		t.Fatal(err)
	}
	placed, err := l.PutAll(ctx, []File{{"a.xml", []byte("new a")}, {"b.xml", []byte("b")}})
	if err != nil || !slices.Equal(placed, []string{"a.xml", "b.xml"}) {
		t.Fatalf("PutAll placed %q, %v", placed, err)
	}
	want := map[string]string{"a.xml": "new a", "b.xml": "b"}
	check := func() {
		t.Helper()
		names, _ := l.List(ctx)
		if len(names) != len(want) {
			t.Errorf("List = %q; want %d files (temporary files left behind?)", names, len(want))
		}
		for name, content := range want {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(got) != content {
				t.Errorf("%s: %q, %v; want %q", name, got, err, content)
			}
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: mode %v, want 0644", name, fi.Mode().Perm())
			}
		}
	}
	check()
	placed, err = l.PutAll(ctx, []File{{"a.xml", []byte("newer a")}, {"../c.xml", nil}, {"d.xml", []byte("d")}})
	if err == nil || len(placed) != 0 {
		t.Errorf("PutAll with a bad name: placed %q, %v; want none and an error", placed, err)
	}
	check()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if placed, err := l.PutAll(cctx, []File{{"a.xml", []byte("newer a")}}); err == nil || len(placed) != 0 {
		t.Errorf("PutAll canceled: placed %q, %v", placed, err)
	}
	check()
}

// TestTempOf: the temporary files Put writes name the whole file they are
// for, and nothing else reads as one.
func TestTempOf(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"sitemap.xml", "sitemap-products-000001-0123456789.xml.gz", "a.b"} {
		f, err := os.CreateTemp(dir, "."+name+".*"+tempSuffix)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got, ok := TempOf(filepath.Base(f.Name())); !ok || got != name {
			t.Errorf("TempOf(%q) = %q, %v; want %q", filepath.Base(f.Name()), got, ok, name)
		}
	}
	for _, bad := range []string{"sitemap.xml", ".sitemap.xml.tmp", ".sitemap.xml.12a.tmp", "sitemap.xml.12.tmp", "..1.tmp", ".x..tmp", ".tmp"} {
		if got, ok := TempOf(bad); ok {
			t.Errorf("TempOf(%q) = %q, true; want false", bad, got)
		}
	}
}

// BenchmarkLocalPuts writes what a grouped run of a thousand small groups
// writes: a thousand small sitemaps one by one (PutDeferred, the lock
// checked before each, as publish does), then a batch of a thousand small
// files (PutAll). Run it with TMPDIR on the file system to measure (a
// folder's cost is mostly the file system's).
func BenchmarkLocalPuts(b *testing.B) {
	data := bytes.Repeat([]byte("<url><loc>https://www.example.com/a</loc></url>\n"), 40)
	files := make([]File, 1000)
	for i := range files {
		files[i] = File{Name: fmt.Sprintf("sm-g%04d.xml", i), Data: data}
	}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		l, err := NewLocal(dir)
		if err != nil {
			b.Fatal(err)
		}
		lk, err := l.Lock(ctx, ".sm.lock", Holder{Owner: "bench"}, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i := range files {
			if err := lk.Err(); err != nil {
				b.Fatal(err)
			}
			if err := l.PutDeferred(ctx, fmt.Sprintf("sm-g%04d-000001.xml.gz", i), data); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := l.PutAll(ctx, files); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		lk.Release(ctx)
		os.RemoveAll(dir)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2000, "ns/file")
}

// TestLocalLockTempPruned: the lock's temporary file is one of its set's
// temporary files, which the holder's prune removes. A run whose
// temporary file goes before it is linked into place makes another and
// takes the lock (or is told who holds it), not a bare "no such file".
func TestLocalLockTempPruned(t *testing.T) {
	dir, l := tempLocal(t)
	pruned := 0
	testHookBeforeLink = func(tmp string) {
		if pruned < 2 {
			pruned++
			os.Remove(tmp)
		}
	}
	defer func() { testHookBeforeLink = nil }()
	lk, err := l.Lock(context.Background(), ".sm.lock", Holder{Owner: "run A"}, 0)
	if err != nil || pruned != 2 {
		t.Fatalf("Lock after its temporary file was removed twice: %v (removed %d)", err, pruned)
	}
	if err := lk.Err(); err != nil {
		t.Fatal(err)
	}
	lk.Release(context.Background())
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %v", ents)
	}
}

// TestLocalModeUnderUmask: the files are readable by all (0644) whatever
// the umask: created so under a umask that keeps 0644, set after under
// one that would hide them (077).
func TestLocalModeUnderUmask(t *testing.T) {
	for _, mask := range []int{0o022, 0o077, 0o027, 0} {
		old := syscall.Umask(mask)
		saved := umaskKeeps644
		umaskKeeps644 = sync.OnceValue(readUmaskKeeps644)
		if got, want := umaskKeeps644(), mask&0o644 == 0; got != want {
			t.Errorf("umask %03o: umaskKeeps644 = %v, want %v", mask, got, want)
		}
		dir := t.TempDir()
		l, err := NewLocal(dir)
		if err == nil {
			err = l.Put(context.Background(), "a.xml", []byte("x"))
		}
		if err == nil {
			_, err = l.PutAll(context.Background(), []File{{Name: "b.xml", Data: []byte("y")}})
		}
		if err == nil {
			err = l.PutDeferred(context.Background(), "c.xml.gz", []byte("z")) // a new name: created in place
		}
		syscall.Umask(old)
		umaskKeeps644 = saved
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a.xml", "b.xml", "c.xml.gz"} {
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("umask %03o: %s: %v, %v; want mode 0644", mask, name, fi.Mode(), err)
			}
		}
	}
}

// TestLocalGetTail: Get reads a file whole and Tail its last bytes, of any
// size, a missing file's error wrapping fs.ErrNotExist; a folder or a
// named pipe under a file's name is an error at once (a pipe would block
// a plain open until a writer came).
func TestLocalGetTail(t *testing.T) {
	dir, l := tempLocal(t)
	ctx := context.Background()
	for _, size := range []int{0, 1, 7, 8, 4095, 4096, 4097, 1 << 20} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		name := fmt.Sprintf("f%d", size)
		if err := l.Put(ctx, name, data); err != nil {
			t.Fatal(err)
		}
		if got, err := l.Get(ctx, name); err != nil || !bytes.Equal(got, data) {
			t.Errorf("Get(%s): %d bytes, %v; want %d", name, len(got), err, size)
		}
		if got, err := l.Tail(ctx, name, 8); err != nil || !bytes.Equal(got, data[max(0, size-8):]) {
			t.Errorf("Tail(%s, 8) = %x, %v; want %x", name, got, err, data[max(0, size-8):])
		}
	}
	// Read into one buffer of the file's size, as os.ReadFile does: a
	// sitemap read whole (--verify, IndexNow) takes what it holds.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := l.Get(ctx, fmt.Sprintf("f%d", 1<<20)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20+64<<10 {
		t.Errorf("Get of 1 MiB allocated %d bytes; want about 1 MiB", got)
	}
	if _, err := l.Get(ctx, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get(missing): %v; want fs.ErrNotExist", err)
	}
	if _, err := l.Tail(ctx, "missing", 8); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Tail(missing): %v; want fs.ErrNotExist", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sub", "pipe"} {
		done := make(chan error, 2)
		go func() {
			_, err := l.Get(ctx, name)
			done <- err
			_, err = l.Tail(ctx, name, 8)
			done <- err
		}()
		for range 2 {
			select {
			case err := <-done:
				if !errors.Is(err, errNotRegular) {
					t.Errorf("reading %s: %v; want %v", name, err, errNotRegular)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("reading %s hangs", name)
			}
		}
	}
}

// tempLocal returns a Local on a new temporary folder, and the folder.
func tempLocal(t testing.TB) (string, *Local) {
	t.Helper()
	dir := t.TempDir()
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, l
}
