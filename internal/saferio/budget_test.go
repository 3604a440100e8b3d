package saferio

import (
	"errors"
	"testing"
	"time"
)

// holds runs p.Hold(n) on a goroutine and returns its result, or nil on
// the channel until it returns.
func holds(p *Part, n int64, stop <-chan struct{}) <-chan error {
	c := make(chan error, 1)
	go func() { c <- p.Hold(n, stop) }()
	return c
}

func waiting(t *testing.T, c <-chan error) {
	t.Helper()
	select {
	case err := <-c:
		t.Fatalf("Hold returned %v, want it to wait", err)
	case <-time.After(20 * time.Millisecond):
	}
}

func returned(t *testing.T, c <-chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("Hold still waits")
		return nil
	}
}

// TestBudgetTurn: the part in its turn holds up to the turn limit without
// waiting; a part that would hold more fails, in its turn or not, with
// what it needs and holds; the parts ahead of their turn share the shared
// limit and wait, beyond it, for room or their turn.
func TestBudgetTurn(t *testing.T) {
	b := NewBudget(100, 30, 10)
	first, second, third := b.Part(), b.Part(), b.Part()
	if err := first.Hold(60, nil); err != nil {
		t.Fatal(err)
	}
	var over *OverBudget
	if err := first.Hold(41, nil); !errors.As(err, &over) || *over != (OverBudget{Need: 41, Held: 60, Limit: 100}) {
		t.Fatalf("%v, want 41 over the 100 with 60 held", err)
	}
	if err := first.Hold(40, nil); err != nil {
		t.Fatal(err)
	}
	// Not in their turn: 30 between them.
	if err := second.Hold(20, nil); err != nil {
		t.Fatal(err)
	}
	if err := second.Hold(101, nil); !errors.As(err, &over) || over.Held != 20 {
		t.Fatalf("%v, want more than a part may hold, at once", err)
	}
	third10 := holds(third, 10, nil)
	if err := returned(t, third10); err != nil {
		t.Fatal(err)
	}
	second20 := holds(second, 20, nil) // 50 > 30: waits
	waiting(t, second20)
	third.Release(10) // room for 20 more? 20+20 > 30: still waits
	waiting(t, second20)
	first.Close() // second's turn: holds 40 of its own
	if err := returned(t, second20); err != nil {
		t.Fatal(err)
	}
	if h, _ := second.Holds(); h != 40 {
		t.Fatalf("second holds %d, want 40", h)
	}
	// The shared pool is third's alone now.
	if err := third.Hold(30, nil); err != nil {
		t.Fatal(err)
	}
	third31 := holds(third, 1, nil)
	waiting(t, third31)
	second.Close()
	if err := returned(t, third31); err != nil {
		t.Fatal(err)
	}
	if h, _ := third.Holds(); h != 31 {
		t.Fatalf("third holds %d, want 31", h)
	}
}

// TestBudgetStop: a wait ends when the Budget stops or its caller's stop
// channel closes.
func TestBudgetStop(t *testing.T) {
	b := NewBudget(100, 10, 10)
	first, second := b.Part(), b.Part()
	first.Hold(50, nil)
	stop := make(chan struct{})
	byStop := holds(second, 20, stop)
	byBudget := holds(second, 20, nil)
	waiting(t, byStop)
	close(stop)
	if err := returned(t, byStop); !IsStopped(err) {
		t.Fatalf("%v, want stopped by its caller", err)
	}
	waiting(t, byBudget)
	b.Stop()
	if err := returned(t, byBudget); err != ErrBudgetStopped {
		t.Fatalf("%v, want ErrBudgetStopped", err)
	}
	if err := second.Hold(1, nil); err != ErrBudgetStopped {
		t.Fatalf("%v after Stop, want ErrBudgetStopped", err)
	}
}

// TestBudgetAhead: pages read ahead fit in their pool or are not read
// ahead; the parts not in their turn fill half of it at most.
func TestBudgetAhead(t *testing.T) {
	b := NewBudget(100, 10, 10)
	first, second := b.Part(), b.Part()
	if !second.TryAhead(5) || second.TryAhead(1) {
		t.Fatal("a part not in its turn reads ahead into more than half the pool")
	}
	if !first.TryAhead(5) || first.TryAhead(1) {
		t.Fatal("the part in its turn does not read ahead into the rest")
	}
	second.ReleaseAhead(5)
	if !first.TryAhead(5) {
		t.Fatal("released room not reused")
	}
	first.Close()
	if _, a := first.Holds(); a != 0 || !second.TryAhead(10) {
		t.Fatal("Close kept what the part read ahead")
	}
}
