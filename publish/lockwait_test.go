package publish

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/sink"
)

// TestLockWait: a run that finds the destination locked fails at once
// without LockWait; with it, it waits, looking again, and takes the lock
// once its holder lets go; past LockWait it fails as it would have at once.
func TestLockWait(t *testing.T) {
	defer func(p time.Duration) { lockPoll = p }(lockPoll)
	lockPoll = 20 * time.Millisecond
	_, store := tempLocal(t)
	ctx := context.Background()
	l := NewLayout("sitemap")
	holder, err := Begin(ctx, store, l, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Begin(ctx, store, l, Options{}); !errors.Is(err, sink.ErrLocked) {
		t.Fatalf("no wait: %v, want the lock refused", err)
	}
	start := time.Now()
	if _, err := Begin(ctx, store, l, Options{LockWait: 150 * time.Millisecond}); !errors.Is(err, sink.ErrLocked) || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("held throughout: %v after %v, want the lock refused after the wait", err, time.Since(start))
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		holder.release()
	}()
	tx, err := Begin(ctx, store, l, Options{LockWait: time.Minute})
	if err != nil {
		t.Fatalf("released while waiting: %v", err)
	}
	tx.release()

	// The same for a destination (the grouped runs' lock).
	holder, err = Begin(ctx, store, l, Options{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		holder.release()
	}()
	d, err := OpenDestination(ctx, store, l, Options{LockWait: time.Minute})
	if err != nil {
		t.Fatalf("destination, released while waiting: %v", err)
	}
	d.Close(ctx)
}
