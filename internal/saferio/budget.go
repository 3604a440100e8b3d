package saferio

import (
	"errors"
	"fmt"
	"sync"
)

// The default Budget: what the part files of a run may hold of
// decompressed data at once. A Parquet page may be up to 256 MiB (a row
// group's dictionary of a million long URLs), so the part whose turn it
// is may hold that much; the others, decoded ahead of their turn, share a
// quarter of it, and pages read ahead of their need another quarter: a run
// holds at most 384 MiB of decompressed pages, whatever its inputs.
// Writers cut pages of about 1 MiB: an honest file holds a few MiB.
const (
	BudgetTurn   = 256 << 20
	BudgetShared = 64 << 20
	BudgetAhead  = 64 << 20
)

// A Budget bounds the bytes of decompressed data (Parquet pages and their
// dictionaries) that the readers of a run hold at once, the part files
// decoded together included. Each input draws on it through a Part,
// created in input order: the first part not closed is the one whose turn
// it is, the one the run consumes now.
//
// What a part needs to go on (the page each of its columns is decoding,
// its dictionaries: Hold) is bounded per part by the turn limit: a part
// that needs more fails, which depends only on the file (the same file
// fails in the same place, alone or among others, pages read ahead or
// not). The part in its turn holds up to that limit without waiting for
// anyone: the parts after it only wait for it, never it for them, so
// there is no deadlock. The parts decoded ahead of their turn share a
// smaller pool; one that would go over it waits for room or its turn.
// Pages read ahead of their need draw on a pool of their own without
// waiting (TryAhead): a page that does not fit is not read ahead.
type Budget struct {
	turnMax, sharedMax, aheadMax int64

	mu      sync.Mutex
	changed chan struct{} // closed, and replaced, when room is freed or the turn passes
	waiters int           // waiting on changed
	stopped bool
	shared  int64   // held by the parts not in their turn
	ahead   int64   // read ahead, by all parts
	parts   []*Part // the parts not closed, in order: parts[0] is in its turn
}

// NewBudget returns a Budget of the given limits: what the part in its
// turn may hold, what the parts ahead of their turn may hold together, and
// what may be read ahead.
func NewBudget(turn, shared, ahead int64) *Budget {
	return &Budget{turnMax: turn, sharedMax: shared, aheadMax: ahead, changed: make(chan struct{})}
}

// Own returns a Part of a Budget of the default limits of its own: an
// input read alone, always in its turn.
func Own() *Part {
	return NewBudget(BudgetTurn, BudgetShared, BudgetAhead).Part()
}

// Part returns the Budget's part for the next input, in input order.
func (b *Budget) Part() *Part {
	p := &Part{b: b}
	b.mu.Lock()
	b.parts = append(b.parts, p)
	b.mu.Unlock()
	return p
}

// Stop ends every wait, now and later, with ErrBudgetStopped: the run
// stops.
func (b *Budget) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	b.broadcast()
}

// Holds reports what p holds: by Hold, and read ahead.
func (p *Part) Holds() (held, ahead int64) {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.held, p.ahead
}

// broadcast wakes the waiters; b.mu is held.
func (b *Budget) broadcast() {
	if b.waiters > 0 {
		close(b.changed)
		b.changed = make(chan struct{})
	}
}

// ErrBudgetStopped ends a wait of a Budget that was stopped.
var ErrBudgetStopped = errors.New("stopped")

// errWaitStopped ends a wait whose caller's stop channel was closed.
var errWaitStopped = errors.New("stopped by its reader")

// IsStopped reports whether err ended a wait the caller called off (its
// stop channel).
func IsStopped(err error) bool { return err == errWaitStopped }

// An OverBudget is the error of a part that needs more than a part may
// hold: Need more bytes, besides the Held it holds.
type OverBudget struct {
	Need, Held, Limit int64
}

func (e *OverBudget) Error() string {
	if e.Held == 0 {
		return fmt.Sprintf("%d bytes once decompressed: more than the %d a file may hold at once", e.Need, e.Limit)
	}
	return fmt.Sprintf("%d bytes once decompressed, with the %d bytes the file's other pages in use hold: more than the %d a file may hold at once",
		e.Need, e.Held, e.Limit)
}

// A Part is what one input holds of a Budget.
type Part struct {
	b      *Budget
	held   int64 // by Hold
	ahead  int64 // by TryAhead
	closed bool
}

// inTurn reports whether p is the part whose turn it is; b.mu is held.
func (p *Part) inTurn() bool { return p.b.parts[0] == p }

// Hold reserves n bytes that p needs to go on. It fails with an
// *OverBudget when p would hold more than a part may; a part not in its
// turn waits while the parts ahead of their turn hold too much to add n,
// until there is room or its turn comes, the Budget stops
// (ErrBudgetStopped) or stop is closed (IsStopped).
func (p *Part) Hold(n int64, stop <-chan struct{}) error {
	b := p.b
	b.mu.Lock()
	for {
		if p.held+n > b.turnMax {
			err := &OverBudget{Need: n, Held: p.held, Limit: b.turnMax}
			b.mu.Unlock()
			return err
		}
		if b.stopped {
			b.mu.Unlock()
			return ErrBudgetStopped
		}
		if p.closed || p.inTurn() {
			p.held += n
			b.mu.Unlock()
			return nil
		}
		if b.shared+n <= b.sharedMax {
			b.shared += n
			p.held += n
			b.mu.Unlock()
			return nil
		}
		changed := b.changed
		b.waiters++
		b.mu.Unlock()
		var err error
		select {
		case <-changed:
		case <-stop:
			err = errWaitStopped
		}
		b.mu.Lock()
		b.waiters--
		if err != nil {
			b.mu.Unlock()
			return err
		}
	}
}

// Release gives back n bytes of what Hold reserved.
func (p *Part) Release(n int64) {
	if n == 0 {
		return
	}
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(n, p.held)
	p.held -= n
	if !p.closed && !p.inTurn() {
		b.shared -= n
	}
	b.broadcast()
}

// TryAhead reserves n bytes to read ahead of need, if they fit: the
// parts not in their turn may fill half of the pool, so that the one in
// its turn, whose pages the run waits for, always reads ahead.
func (p *Part) TryAhead(n int64) bool {
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := b.aheadMax
	if !p.closed && !p.inTurn() {
		limit /= 2
	}
	if b.ahead+n > limit {
		return false
	}
	b.ahead += n
	p.ahead += n
	return true
}

// ReleaseAhead gives back n bytes of what TryAhead reserved.
func (p *Part) ReleaseAhead(n int64) {
	if n == 0 {
		return
	}
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(n, p.ahead)
	p.ahead -= n
	b.ahead -= n
}

// Close gives back what p still holds, and passes the turn on when it was
// p's.
func (p *Part) Close() {
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.closed {
		return
	}
	turn := p.inTurn()
	if !turn {
		b.shared -= p.held
	}
	b.ahead -= p.ahead
	p.held, p.ahead, p.closed = 0, 0, true
	for i, q := range b.parts {
		if q == p {
			b.parts = append(b.parts[:i], b.parts[i+1:]...)
			break
		}
	}
	if turn && len(b.parts) > 0 {
		// The next part's turn: what it holds is no longer shared.
		b.shared -= b.parts[0].held
	}
	b.broadcast()
}
