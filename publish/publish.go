// Package publish puts a sitemap set in place over a sink.Store so that
// readers see the previous set or the new one, never a mix: shards and
// intermediate indexes first, under names that change with their content;
// then the manifest; then the root index, the switch; then the robots
// lines; last, the files no kept generation lists are deleted. A failed
// run removes what it wrote and restores the manifest, leaving the
// previous set as it was.
package publish

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

// ErrPublishedIncomplete reports a publish whose new root index is live but
// whose last steps (the robots lines) failed.
var ErrPublishedIncomplete = errors.New("the new sitemap set is published")

// ErrShrink reports a set whose URL count fell by more than
// Options.MaxShrink against the published manifest; nothing is published
// unless Options.Force.
var ErrShrink = errors.New("URL count fell too far")

// Options configure a Tx.
type Options struct {
	// KeepGenerations is how many earlier generations (per the manifest)
	// stay in place after the switch, so that crawlers that fetched an older
	// root moments ago still find its files. 0 deletes them at once.
	KeepGenerations int
	// MaxShrink is the fraction (0..1) by which the URL count may fall
	// against the published manifest; a larger fall is refused (ErrShrink).
	MaxShrink float64
	Force     bool // publish despite MaxShrink
	// Verify, when set, is called with the root index's name and the bytes
	// of the index files not yet written (pending: the root and the
	// intermediate indexes, which are rewritten in place, so that the
	// online set changes only after the check) once every sitemap is
	// written; an error fails the publish and nothing new is published.
	// trusted reports the files it need not read again: reused unchanged
	// (checked at the destination) from a generation that a Verify passed.
	// The manifest records the files a Verify passed.
	Verify func(ctx context.Context, root string, pending map[string][]byte, trusted func(name string) bool) error
	// LockTTL is how long the destination's lock outlives a run that died
	// without releasing it, on a store that cannot see it die (S3); a live
	// run renews it. 0: DefaultLockTTL.
	LockTTL time.Duration
	// LockWait is how long a run that finds the lock held waits for it to
	// be released or to expire, looking again every few seconds (0: it
	// fails at once). A scheduler's retry after a run that was killed
	// (whose lock on S3 outlives it by LockTTL) then publishes.
	LockWait time.Duration
	// Now is the run's time: the <lastmod> of every file whose content
	// changes, and the manifest's time. Zero: the clock at Begin.
	Now time.Time
	Log *slog.Logger // nil: discard
	// Switched, when set, is called once the new root index and the robots
	// lines are in place and before the files no kept generation lists are
	// deleted, with the manifest published before (nil on a first publish)
	// and the new one: the previous generation's files can still be read.
	// It cannot fail the publish.
	Switched func(ctx context.Context, prev, next *Manifest)
	// Destination, when set, is the store's lock and listing, shared with
	// the other sets published there by the same run: Begin takes neither
	// itself, and the lock is the Destination's to release.
	Destination *Destination
	// Groups, for OpenDestination: the destination holds a grouped run's
	// sets side by side, NAME-GROUP. Its lock says so, and a live lock of
	// a set NAME-… there (a run of one group's set alone) refuses the run,
	// as that run refuses while this one holds the destination.
	Groups bool
}

// lockPoll is how often a run waiting for a held lock looks again.
var lockPoll = 5 * time.Second

// lockWaiting takes the lock name as lk.Lock does; while it is held by
// another run it looks again every lockPoll, for up to wait.
func lockWaiting(ctx context.Context, lk sink.Locker, name string, who sink.Holder, ttl, wait time.Duration, log *slog.Logger) (sink.Lock, error) {
	deadline := time.Now().Add(wait)
	for logged := false; ; logged = true {
		lock, err := lk.Lock(ctx, name, who, ttl)
		var held *sink.LockedError
		if err == nil || !errors.As(err, &held) || !time.Now().Before(deadline) {
			return lock, err
		}
		if !logged {
			log.Warn("the destination is locked: waiting for the lock (--lock-wait)", "lock", held.Lock,
				"holder", held.Holder.String(), "until", deadline.UTC().Format(time.RFC3339))
		}
		t := time.NewTimer(min(lockPoll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (waiting for it: %w)", err, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// DefaultLockTTL is Options.LockTTL's default: renewals every few minutes
// cost nothing, and a crashed nightly run blocks the next for at most this.
const DefaultLockTTL = 10 * time.Minute

// Transfer counts files and bytes, and the shards among them.
type Transfer struct {
	Files      int   `json:"files"`
	Bytes      int64 `json:"bytes"`
	Shards     int   `json:"shards"`
	ShardBytes int64 `json:"shard_bytes"`
}

func (t *Transfer) add(size int64, isShard bool) {
	t.Files++
	t.Bytes += size
	if isShard {
		t.Shards++
		t.ShardBytes += size
	}
}

// Tx is one publish: Begin, PutShard for every shard (concurrently if need
// be), then Commit, or Abort to undo what it wrote.
type Tx struct {
	store  sink.Store
	layout Layout
	opt    Options
	log    *slog.Logger
	live   int // which of prev's generations the store's root is (liveGeneration)

	start    time.Time
	lock     sink.Lock         // nil: the store cannot lock
	listing                    // the store's files at Begin
	prev     *Manifest         // the published manifest, nil if none
	wasLive  bool              // prev was live: its root was there at Begin, or prev.Live (not a first publish that died)
	prevRaw  []byte            // its bytes, restored if the publish fails after replacing it
	known    map[string]File   // files of kept generations present in the store
	listed   map[string]bool   // the names of the kept generations' files, present or not
	dated    map[string]File   // files of kept generations that carry a Modified, by name
	shardOf  map[string]string // "sha256 size" -> the kept shard holding those bytes (see ShardName)
	reuse    map[string]File   // content key -> the kept shard holding that content (see Reuse)
	datedXML map[string]string // "xml_blake3 xml_size" -> when that XML was first published

	mu       sync.Mutex
	uploaded Transfer
	skipped  Transfer
	skips    []string          // names of the files skipped
	given    map[string]bool   // kept shard names given out (ShardName, Reuse)
	checked  map[string]string // name -> why the stored file is not the manifest's ("": it is)
	etags    map[string]string // name -> the ETag its put returned
	trusted  map[string]bool   // files reused or skipped that a Verify passed (File.Verified)
	written  []string          // names this publish put, for Abort
	replaced map[string][]byte // fixed names this publish overwrote: their earlier bytes, for Abort
	manifest bool              // the new manifest is in place
	unsure   bool              // the root write failed and may have landed: keep everything
	switched bool              // the new root is in place: nothing to undo

	ready *prepared    // what Prepare made
	dest  *Destination // nil: the Tx holds the lock and listing itself
}

// Begin starts a publish into store of the set l names: it takes the
// destination's lock, if the store has locks (an error wrapping
// sink.ErrLocked when another run holds it), and reads what the store holds
// and the published manifest. The lock is held until Commit succeeds or
// Abort returns.
func Begin(ctx context.Context, store sink.Store, l Layout, opt Options) (_ *Tx, err error) {
	t := &Tx{store: store, layout: l, opt: opt, log: opt.Log, start: opt.Now, replaced: map[string][]byte{},
		given: map[string]bool{}, checked: map[string]string{}, etags: map[string]string{},
		trusted: map[string]bool{}}
	if t.start.IsZero() {
		t.start = time.Now()
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if d := opt.Destination; d != nil {
		t.dest, t.lock, t.listing = d, d.lock, d.listing
		d.begun(l)
	} else if lk, ok := store.(sink.Locker); ok {
		ttl := opt.LockTTL
		if ttl <= 0 {
			ttl = DefaultLockTTL
		}
		if t.lock, err = lockWaiting(ctx, lk, l.Lock(), sink.Holder{Owner: owner()}, ttl, opt.LockWait, t.log); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				t.release()
			}
		}()
		if err := groupedHolder(ctx, lk, l.Stem()); err != nil {
			return nil, err
		}
	}
	if t.dest == nil {
		if t.listing, err = list(ctx, store); err != nil {
			return nil, err
		}
	}
	if in, ok := t.info[l.Manifest()]; ok && in.Size > MaxManifestSize {
		return nil, fmt.Errorf("%s: manifest %s: %d bytes, more than a manifest of this sitemapgen can hold (%d); move it away to start a new history",
			store, l.Manifest(), in.Size, MaxManifestSize)
	}
	// A store that lists what it holds (sink.Stater) tells a new set from
	// the listing: a thousand new groups do not each ask it for nothing.
	if _, listed := t.info[l.Manifest()]; t.info == nil || listed {
		if t.prev, t.prevRaw, err = ReadManifest(ctx, store, l); err != nil {
			return nil, fmt.Errorf("%s: %w", store, err)
		}
	}
	t.wasLive = t.had(l.Root()) || t.prev.Live()
	if t.prev != nil {
		if err := t.prev.sanitize(l, t.start, opt.Force, t.log); err != nil {
			return nil, fmt.Errorf("%s: %w", store, err)
		}
	}
	t.known, t.listed = t.knownFiles()
	t.shardOf, t.reuse = t.keptShards()
	t.dated, t.datedXML = map[string]File{}, map[string]string{}
	gens := t.prev.Generations()
	for i := len(gens) - 1; i >= 0; i-- { // the newest generation wins
		for _, f := range gens[i].Files {
			if f.Modified == "" {
				continue
			}
			t.dated[f.Name] = f
			if f.XMLBLAKE3 != "" {
				t.datedXML[contentKey(f.XMLBLAKE3, f.XMLSize)] = f.Modified
			}
		}
	}
	return t, nil
}

// listing is what a store held when a publish began (a Tx, or a
// Destination and the Txs of its sets, which share its one listing).
type listing struct {
	before  []string             // the names
	info    map[string]sink.Info // their sizes and ETags; nil: the store tells none (nothing is trusted)
	present map[string]bool      // before as a set, when info is nil
}

// had reports whether the store held name, from a map of the listing made
// once: a Destination's listing holds every set's files, and a thousand
// sets each searching it, or each making a map of it, took longer than the
// rest of an unchanged night (docs/performance.md, round 17).
func (l *listing) had(name string) bool {
	if l.info != nil {
		_, ok := l.info[name]
		return ok
	}
	return l.present[name]
}

// list reads what store holds: names, and sizes and ETags where the store
// tells them (sink.Stater).
func list(ctx context.Context, store sink.Store) (listing, error) {
	var l listing
	st, ok := store.(sink.Stater)
	if !ok {
		before, err := store.List(ctx)
		if err != nil {
			return l, fmt.Errorf("list %s: %w", store, err)
		}
		l.before = before
		l.present = make(map[string]bool, len(before))
		for _, n := range before {
			l.present[n] = true
		}
		return l, nil
	}
	infos, err := st.ListInfo(ctx)
	if err != nil {
		return l, fmt.Errorf("list %s: %w", store, err)
	}
	l.info = make(map[string]sink.Info, len(infos))
	for _, in := range infos {
		l.before = append(l.before, in.Name)
		l.info[in.Name] = in
	}
	return l, nil
}

// intact reports why the stored file f.Name is not the one f describes,
// "" when it is, from what the listing said and, on a store that reads
// tails cheaply, the gzip trailer: no file is read whole but a small
// index on a store without ETags. Each name is checked once per publish.
func (t *Tx) intact(ctx context.Context, f File, data []byte) string {
	t.mu.Lock()
	why, ok := t.checked[f.Name]
	t.mu.Unlock()
	if ok {
		return why
	}
	why = t.check(ctx, f, data)
	t.mu.Lock()
	t.checked[f.Name] = why
	t.mu.Unlock()
	if why != "" {
		t.log.Warn("the stored file is not the one the manifest describes: rewritten", "file", f.Name, "why", why)
	}
	return why
}

func (t *Tx) check(ctx context.Context, f File, data []byte) string {
	if t.info == nil {
		return "the store does not tell file sizes"
	}
	in, ok := t.info[f.Name]
	switch {
	case !ok:
		return "missing"
	case in.Size != f.Size:
		return fmt.Sprintf("%d bytes, the manifest says %d", in.Size, f.Size)
	case f.ETag != "" && in.ETag != "":
		if in.ETag != f.ETag {
			return fmt.Sprintf("ETag %s, the manifest says %s", in.ETag, f.ETag)
		}
		return ""
	}
	tl, ok := t.store.(sink.Tailer)
	switch {
	case !ok:
	case f.Trailer != "":
		tail, err := tl.Tail(ctx, f.Name, gzipTrailer)
		if err != nil {
			return "its gzip trailer cannot be read: " + err.Error()
		}
		if hex.EncodeToString(tail) != f.Trailer {
			return "its gzip trailer (CRC-32 and length) differs from the manifest's"
		}
	case data != nil && len(data) <= maxCompared:
		// A small file in hand (an index): compare it whole.
		old, err := t.store.Get(ctx, f.Name)
		if err != nil {
			return "cannot be read: " + err.Error()
		}
		if !bytes.Equal(old, data) {
			return "its bytes differ from the manifest's"
		}
	}
	return ""
}

// maxCompared bounds the files intact reads whole: an index of 1,000
// entries is about 150 KB.
const maxCompared = 1 << 20

// modified returns the <lastmod> of f: when the XML it holds was first
// published (per the manifest), or now if it is new. A gzip file is known
// by its XML, so compressing it another way does not re-date it.
func (t *Tx) modified(f File, now string) string {
	if f.XMLBLAKE3 != "" {
		if d, ok := t.datedXML[contentKey(f.XMLBLAKE3, f.XMLSize)]; ok {
			return d
		}
	}
	if d, ok := t.dated[f.Name]; ok && d.SHA256 == f.SHA256 && d.Size == f.Size {
		return d.Modified
	}
	return now
}

// owner describes this run to a run that finds the lock taken. It is not
// what tells runs apart (runs in containers share it): the lock's token is.
// Nor does it hold the run's time (--now): the lock records when it was
// taken.
func owner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("sitemapgen pid %d on %s", os.Getpid(), host)
}

// groupedHolder returns a *sink.LockedError when a grouped run holds the
// lock of a set whose groups stem could be one of (stem sitemap-a-b: the
// groups a-b of sitemap and b of sitemap-a): it may publish this very set.
// Looked at after taking stem's own lock, as the grouped run looks at the
// sets' locks after taking its own, so that of two runs that overlap at
// least one sees the other.
func groupedHolder(ctx context.Context, lk sink.Locker, stem string) error {
	for i := len(stem) - 1; i > 0; i-- {
		if stem[i] != '-' || ValidStem(stem[:i]) != nil {
			continue
		}
		err := lk.Held(ctx, NewLayout(stem[:i]).Lock())
		if le, ok := errors.AsType[*sink.LockedError](err); ok && !le.Holder.Groups {
			continue // a set of that name alone: its files are not this set's
		}
		if err != nil {
			return fmt.Errorf("set %s is group %s of set %s: %w", stem, stem[i+1:], stem[:i], err)
		}
	}
	return nil
}

// release gives up the lock, if any; a publish that cannot release it says
// so, and the lock expires (S3) or died with the process (a folder).
func (t *Tx) release() {
	if t.lock == nil || t.dest != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := t.lock.Release(ctx); err != nil {
		t.log.Warn("release the destination's lock", "lock", t.layout.Lock(), "err", err)
	}
	t.lock = nil
}

// holding reports an error once the lock may have been lost: no publish
// step that another run could see may follow.
func (t *Tx) holding() error {
	if t.dest != nil {
		return t.dest.holding() // the destination's lock, named after it
	}
	if t.lock == nil {
		return nil
	}
	if err := t.lock.Err(); err != nil {
		return fmt.Errorf("the destination's lock %s was lost (%w); nothing published", t.layout.Lock(), err)
	}
	return nil
}

// confirm renews the lock now, if any: a lock removed by hand or taken
// over since its last renewal (a third of its ttl ago at most) is found
// out before the switch, not after. The sets of a Destination share its
// lock: it is renewed at most once a second for them all
// (Destination.confirm).
func (t *Tx) confirm(ctx context.Context) error {
	if t.dest != nil {
		return t.dest.confirmHeld(ctx)
	}
	if err := t.holding(); err != nil || t.lock == nil {
		return err
	}
	if err := t.lock.Renew(ctx); err != nil {
		return fmt.Errorf("the destination's lock %s was lost (%w); nothing published", t.layout.Lock(), err)
	}
	return nil
}

// knownFiles returns the files of the generations the published manifest
// describes that the store still holds: a file of this publish with the
// same name, size and SHA-256 need not be uploaded again. Fixed names
// (root, robots) are always written. It returns the names those
// generations list too, held or not: an index online may name them.
func (t *Tx) knownFiles() (known map[string]File, listed map[string]bool) {
	known, listed = map[string]File{}, map[string]bool{}
	if t.prev == nil {
		return known, listed
	}
	for _, f := range t.prev.Files {
		if !t.had(f.Name) && f.SHA256 != "" && t.layout.Owned(f.Name) {
			t.log.Warn("a file the published set lists is missing at the destination: rewritten", "file", f.Name)
		}
	}
	for _, g := range t.prev.Generations() {
		for _, f := range g.Files {
			listed[f.Name] = true
			if t.had(f.Name) && f.SHA256 != "" && t.layout.Owned(f.Name) {
				known[f.Name] = f
			}
		}
	}
	return known, listed
}

// keptShards indexes the shards of the kept generations that the store
// still holds by their bytes (SHA-256 and size): the current generation's
// first, then the older ones', each in manifest order, the first name of
// a given content winning, so the choice is the same on every run.
//
// It indexes them likewise by their content (Content), for Reuse.
func (t *Tx) keptShards() (byBytes map[string]string, byContent map[string]File) {
	byBytes, byContent = map[string]string{}, map[string]File{}
	for _, g := range t.prev.Generations() {
		for _, f := range g.Files {
			if _, ok := t.known[f.Name]; !ok || !t.layout.IsShard(f.Name) {
				continue
			}
			if k := contentKey(f.SHA256, f.Size); byBytes[k] == "" {
				byBytes[k] = f.Name
			}
			if k := contentOf(f); k != "" {
				if _, ok := byContent[k]; !ok {
					byContent[k] = f
				}
			}
		}
	}
	return byBytes, byContent
}

func contentKey(sum string, size int64) string { return sum + " " + strconv.FormatInt(size, 10) }

// ShardName returns the name of shard num (1-based) whose stored bytes are
// size bytes with the SHA-256 sum. A kept generation's shard with these
// very bytes keeps its name, so that shards added or removed before it
// (stable cuts) do not rename, and re-upload, every later shard: its
// number is then its place when those bytes were first published. Other
// bytes get Layout.Shard(num, sum). A kept name is given out once per
// publish (a second shard of the same bytes, which only input repeating a
// block of rows gives, takes its own name). Safe for concurrent use.
func (t *Tx) ShardName(num, size int, sum [sha256.Size]byte) string {
	k := contentKey(hex.EncodeToString(sum[:]), int64(size))
	t.mu.Lock()
	defer t.mu.Unlock()
	if name := t.shardOf[k]; name != "" && !t.given[name] {
		delete(t.shardOf, k)
		t.given[name] = true
		return name
	}
	return t.layout.Shard(num, sum)
}

// Reuse returns the stored file that holds content c, when a kept
// generation lists one and the store holds it intact (size, and the ETag
// or the gzip trailer the manifest recorded): that file need be neither
// compressed nor put, and is counted as skipped. For a shard (name "")
// any kept shard of that content will do, given out once per publish as
// ShardName does; a news sitemap (a fixed name) reuses only the file of its
// name. A file that fails the check is not reused and its name is logged:
// the caller compresses and puts it again. Safe for concurrent use.
func (t *Tx) Reuse(ctx context.Context, name string, c Content) (File, bool) {
	k := c.key()
	t.mu.Lock()
	f, ok := t.known[name]
	if name == "" {
		f, ok = t.reuse[k]
		ok = ok && !t.given[f.Name]
		if ok {
			delete(t.reuse, k)
			t.given[f.Name] = true
		}
	} else {
		ok = ok && contentOf(f) == k
	}
	t.mu.Unlock()
	if !ok || t.intact(ctx, f, nil) != "" {
		return File{}, false
	}
	f.Modified = "" // Commit dates it
	t.mu.Lock()
	t.skipped.add(f.Size, name == "")
	t.skips = append(t.skips, f.Name)
	t.trusted[f.Name] = f.Verified
	t.mu.Unlock()
	return f, true
}

// Published returns the manifest of the set published before this
// publish, nil when there is none: a first publish's manifest without its
// root (its run died before its switch) was never live.
func (t *Tx) Published() *Manifest {
	if !t.wasLive {
		return nil
	}
	return t.prev
}

// Transfers reports the files written so far and those skipped because
// the store already held their bytes, with the names of the skipped.
func (t *Tx) Transfers() (uploaded, skipped Transfer, skippedNames []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.uploaded, t.skipped, append([]string{}, t.skips...)
}

// PutShard stores a shard, unless the store already holds these bytes under
// its name (skip unchanged). It is safe for concurrent use.
func (t *Tx) PutShard(ctx context.Context, f File, data []byte) error {
	return t.put(ctx, f, data, true)
}

// put stores data under f.Name unless the store already holds these bytes
// under that name, and counts it. Names it writes are recorded for Abort;
// fixed names (root, robots, manifest) go through putFixed instead.
func (t *Tx) put(ctx context.Context, f File, data []byte, isShard bool) error {
	t.mu.Lock()
	k, ok := t.known[f.Name]
	t.mu.Unlock()
	if ok && k.Size == f.Size && k.SHA256 == f.SHA256 && t.intact(ctx, k, data) == "" {
		t.mu.Lock()
		t.skipped.add(f.Size, isShard)
		t.skips = append(t.skips, f.Name)
		// An index is read by every Verify: it leads to the files it lists.
		t.trusted[f.Name] = k.Verified && t.layout.Kind(f.Name) != IndexFile
		t.mu.Unlock()
		return nil
	}
	t.mu.Lock()
	t.written = append(t.written, f.Name)
	t.mu.Unlock()
	var etag string
	var err error
	if tg, ok := t.store.(sink.Tagger); ok {
		etag, err = tg.PutTagged(ctx, f.Name, data)
	} else if d, ok := t.store.(sink.Deferrer); ok && isShard && !t.listed[f.Name] {
		// A new shard: no index names it before Prepare syncs the store.
		// One a kept generation lists (its file gone or not intact) may be
		// named by a live index: Put writes it whole and durably.
		err = d.PutDeferred(ctx, f.Name, data)
	} else {
		err = t.store.Put(ctx, f.Name, data)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.Name, err)
	}
	t.mu.Lock()
	t.uploaded.add(f.Size, isShard)
	if etag != "" {
		t.etags[f.Name] = etag
	}
	t.mu.Unlock()
	return nil
}

// stored completes f with the ETag the store holds it under: the one its
// put returned, or the manifest's for a file skipped or reused.
func (t *Tx) stored(f File) File {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.etags[f.Name]; ok {
		f.ETag = e
	} else if k, ok := t.known[f.Name]; ok && k.SHA256 == f.SHA256 && k.Size == f.Size {
		f.ETag = k.ETag
	} else {
		f.ETag = ""
	}
	return f
}

// PutNews stores news sitemap f, a fixed name rewritten in place: the
// bytes it replaces are kept, and put back if the publish fails (Abort),
// so a failed run leaves the previous news sitemaps whole. Unchanged bytes
// are skipped. It is safe for concurrent use.
func (t *Tx) PutNews(ctx context.Context, f File, data []byte) error {
	return t.putInPlace(ctx, f, data)
}

// putInPlace is put for a file with a fixed name that the live set may
// list (an intermediate index): its earlier bytes are kept so that Abort
// can put them back.
func (t *Tx) putInPlace(ctx context.Context, f File, data []byte) error {
	t.mu.Lock()
	k, ok := t.known[f.Name]
	t.mu.Unlock()
	same := ok && k.Size == f.Size && k.SHA256 == f.SHA256 && t.intact(ctx, k, data) == ""
	if !same && t.had(f.Name) {
		old, err := t.store.Get(ctx, f.Name)
		switch {
		case err == nil:
			t.mu.Lock()
			t.replaced[f.Name] = old
			t.mu.Unlock()
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("keep %s to restore it on failure: %w", f.Name, err)
		}
	}
	return t.put(ctx, f, data, false)
}

// putFixed writes a file with a fixed name: always uploaded, never deleted
// by Abort.
func (t *Tx) putFixed(ctx context.Context, name string, data []byte) error {
	if err := t.store.Put(ctx, name, data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	t.counted(sink.File{Name: name, Data: data})
	return nil
}

// counted counts f, a fixed name put in place.
func (t *Tx) counted(f sink.File) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.uploaded.add(int64(len(f.Data)), false)
}

// putRoot writes the root index: the switch. It is not canceled half way
// (a PUT canceled on the client may still land); after a failure it reads
// the root back: if the new root landed after all the publish goes on as
// switched, and if that cannot be known Abort keeps every file written.
func (t *Tx) putRoot(ctx context.Context, name string, data []byte) error {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	err := t.putFixed(pctx, name, data)
	if err == nil {
		return nil
	}
	got, gerr := t.store.Get(pctx, name)
	switch {
	case gerr == nil && bytes.Equal(got, data):
		t.log.Warn("the root index write reported an error but the new root is in place", "err", err)
		return nil
	case gerr != nil && !errors.Is(gerr, fs.ErrNotExist):
		t.mu.Lock()
		t.unsure = true
		t.mu.Unlock()
		return fmt.Errorf("%w (and whether the new root is in place is unknown: %v; its files are kept, the next run cleans up)", err, gerr)
	}
	return err
}

// Set is what Commit publishes: the shards and news sitemaps already put,
// in order, and the counts the manifest records.
type Set struct {
	Shards []File // the shards as stored (PutShard), in order
	// News are the news sitemaps as stored (PutNews), in order: the indexes
	// list them after the shards.
	News []File
	Rows int64
	URLs int64
	// Rejected rows, recorded in the manifest.
	Rejected int64
	Fanout   int    // entries per index
	Base     string // the public folder URL, normalised, ending in '/'
	// SchemaLocation: every index declares xmlns:xsi and the
	// xsi:schemaLocation of siteindex.xsd (shard.IndexHeaderSchema).
	SchemaLocation bool
}

// Result is what a Commit put in place; on error, as far as it got.
type Result struct {
	Published  bool     // the new root index is in place
	Generation int64    // the manifest's generation now published
	Indexes    int      // index files, the root included
	Root       string   // URL of the root index
	Submit     []string // index URLs for robots.txt / Search Console
	Files      []string // files published, root last
	Deleted    []string // files of older generations deleted

	// What changed against the published set.
	ShardsNew       int  // shards this set lists that the published one did not
	ShardsUnchanged int  // shards both list (same name: same bytes)
	ShardsRemoved   int  // shards only the published set listed
	RobotsChanged   bool // the Sitemap: lines differ from the published ones (or none were published)
}

// compare counts the shards of files against those of the published set.
func (t *Tx) compare(res *Result, files []File) {
	was := map[string]bool{}
	if t.prev != nil {
		for _, f := range t.prev.Files {
			if t.layout.IsShard(f.Name) {
				was[f.Name] = true
			}
		}
	}
	for _, f := range files {
		if was[f.Name] {
			res.ShardsUnchanged++
		} else {
			res.ShardsNew++
		}
	}
	res.ShardsRemoved = len(was) - res.ShardsUnchanged
}

// checkShrink refuses a set whose URL count fell by more than MaxShrink
// against the published manifest.
func (t *Tx) checkShrink(urls int64) error {
	if t.Published() == nil {
		return nil
	}
	return t.checkShrinkOf(urls, t.prev.Generations()[0])
}

// checkShrinkOf is checkShrink against generation g of the manifest.
func (t *Tx) checkShrinkOf(urls int64, g Generation) error {
	was := g.URLs
	if t.opt.Force || was == 0 || float64(urls) >= float64(was)*(1-t.opt.MaxShrink) {
		return nil
	}
	return fmt.Errorf("%w: %d URLs, the published set (generation %d) has %d: -%.1f%%, more than the allowed %g%%; nothing published (force to publish anyway)",
		ErrShrink, urls, g.Generation, was, 100*float64(was-urls)/float64(was), 100*t.opt.MaxShrink)
}

func (t *Tx) sync() error {
	if s, ok := t.store.(sink.Syncer); ok {
		if err := s.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", t.store, err)
		}
	}
	return nil
}

// Commit writes the intermediate indexes, the manifest, the root index and
// the robots lines of set, whose shards PutShard has stored, then deletes
// what neither this generation nor a kept earlier one lists. It is Prepare,
// Switch and Finish in a row.
func (t *Tx) Commit(ctx context.Context, set Set) (*Result, error) {
	res, err := t.Prepare(ctx, set)
	if err == nil {
		err = t.Switch(ctx)
	}
	if err == nil {
		err = t.Finish(ctx)
	}
	return res, err
}

// prepared is what Prepare made for Switch and Finish.
type prepared struct {
	res           *Result
	root, base    string
	rootData      []byte
	prevRoot      []byte // the root index Switch replaces (nil: none was published)
	manifest      *Manifest
	raw           []byte // the manifest's bytes
	robotsName    string
	robots        []byte
	robotsChanged bool
	// The store already holds these bytes under the root's or the robots
	// lines' name: they are not written again (a night that changes
	// nothing in a set rewrites only its manifest).
	rootSame, robotsSame bool
}

// Prepare writes the intermediate indexes of set, whose shards PutShard has
// stored, runs Options.Verify and makes the manifest: everything but the
// switch, so that the switches of several sets (Destination) can follow
// one another once every set is prepared. The Result it returns is filled
// in by Switch and Finish.
func (t *Tx) Prepare(ctx context.Context, set Set) (*Result, error) {
	res := &Result{}
	t.ready = &prepared{res: res}
	if err := t.checkShrink(set.URLs); err != nil {
		return res, err
	}
	now := t.start.UTC().Format(w3cSeconds)
	files := make([]File, 0, len(set.Shards)+len(set.News)+8)
	listed := make([]shard.Listed, 0, len(set.Shards)+len(set.News))
	for _, f := range append(set.Shards[:len(set.Shards):len(set.Shards)], set.News...) {
		f = t.stored(f)
		f.Modified = t.modified(f, now)
		files = append(files, f)
		listed = append(listed, shard.Listed{Name: f.Name, Lastmod: f.Modified})
		res.Files = append(res.Files, f.Name)
	}
	t.compare(res, files[:len(set.Shards)])
	var indexFiles []File
	describe := func(num int, data []byte) shard.Listed {
		f := Describe(t.layout.Index(num), data)
		f.Modified = t.modified(f, now)
		indexFiles = append(indexFiles, f)
		return shard.Listed{Name: f.Name, Lastmod: f.Modified}
	}
	root := t.layout.Root()
	indexes, err := shard.Indexes(listed, shard.IndexOptions{Fanout: set.Fanout, Base: set.Base, Header: shard.IndexHeaderOf(set.SchemaLocation), Root: root, Describe: describe})
	if err != nil {
		return res, err
	}
	var robots []byte
	for _, ix := range indexes {
		if ix.Direct {
			res.Submit = append(res.Submit, set.Base+ix.Name)
			robots = append(robots, "Sitemap: "+set.Base+ix.Name+"\n"...)
		}
	}
	robotsFile := Describe(t.layout.Robots(), robots)
	// The shards' names must be durable before an index names them (in a
	// Destination, every set's shards are stored before the first Prepare:
	// one sync does for all).
	if t.dest == nil {
		err = t.sync()
	} else {
		err = t.dest.syncOnce()
	}
	if err != nil {
		return res, err
	}
	rootIx := indexes[len(indexes)-1]
	if t.opt.Verify != nil {
		// Before the intermediate indexes are rewritten: the online set
		// does not change while the check reads it.
		pending := map[string][]byte{root: rootIx.Data}
		for i, ix := range indexes[:len(indexes)-1] {
			pending[indexFiles[i].Name] = ix.Data
		}
		trusted := func(name string) bool {
			t.mu.Lock()
			defer t.mu.Unlock()
			return t.trusted[name]
		}
		if err := t.opt.Verify(ctx, root, pending, trusted); err != nil {
			return res, fmt.Errorf("verify: %w", err)
		}
	}
	for i, ix := range indexes[:len(indexes)-1] {
		if err := t.putInPlace(ctx, indexFiles[i], ix.Data); err != nil {
			return res, err
		}
		files = append(files, t.stored(indexFiles[i]))
		res.Files = append(res.Files, ix.Name)
	}
	for i := range files {
		// Verified now, or reused from a night that verified it.
		files[i].Verified = t.opt.Verify != nil || t.trusted[files[i].Name]
	}
	rootFile := Describe(root, rootIx.Data)
	files = append(files, rootFile, robotsFile)
	p := t.ready
	p.root, p.base, p.rootData = root, set.Base, rootIx.Data
	// An unchanged root is not written again.
	if t.dest == nil {
		p.rootSame = t.holds(ctx, root, p.rootData)
	} else if t.had(root) {
		// A changed root in a destination is kept so that Unswitch can
		// put it back when another set of the destination fails to switch.
		if same, _ := t.listedAs(root, p.rootData); same {
			p.rootSame = true
		} else if p.prevRoot, err = t.store.Get(ctx, root); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("keep %s to restore it on failure: %w", root, err)
		} else {
			p.rootSame = p.prevRoot != nil && bytes.Equal(p.prevRoot, p.rootData)
		}
	}
	t.live = t.liveGeneration(ctx, rootFile, p.rootSame, p.prevRoot)
	if t.live > 0 {
		// A run died between its manifest and its root: crawlers see an
		// older generation, which --max-shrink protects as well (when the
		// manifest recorded its count).
		if err := t.checkShrinkOf(set.URLs, t.prev.Generations()[t.live]); err != nil {
			return res, err
		}
	}
	// Said only once the new lines are written: a failed run changes no
	// line an operator should deploy.
	robotsChanged := true
	if prev := t.livePrev(); prev != nil {
		for _, f := range prev.Files {
			if f.Name == robotsFile.Name {
				robotsChanged = f.SHA256 != robotsFile.SHA256
			}
		}
	}
	m := t.newManifest(set, files, len(indexes), res.Submit)
	raw, err := m.appendJSON(make([]byte, 0, m.jsonSize()))
	if err != nil {
		return res, fmt.Errorf("manifest: %w", err)
	}
	p.manifest, p.raw = m, append(raw, '\n')
	p.robotsName, p.robots, p.robotsChanged = robotsFile.Name, robots, robotsChanged
	res.Indexes = len(indexes)
	p.robotsSame = t.holds(ctx, robotsFile.Name, robots)
	// What the destination holds is what operators deploy from: a run that
	// died after its switch, before its robots lines, left the manifest's
	// lines unwritten, and the next run writes them.
	p.robotsChanged = p.robotsChanged || !p.robotsSame
	return res, nil
}

// liveGeneration returns which of the published manifest's generations (0:
// its current one) the store's root index is, the set crawlers see until
// this run's switch. A run that died between its manifest and its root (in
// a destination, between all the manifests and all the roots) left the
// manifest ahead of the live root: its generation never went live, but
// the older one did, and its intermediate indexes, rewritten in place,
// did too. -1: the root is none of the generations' (or could not be
// read). now is the root this run prepared; same, whether the store holds
// it; stored, the store's root where Prepare read it.
func (t *Tx) liveGeneration(ctx context.Context, now File, same bool, stored []byte) int {
	gens := t.prev.Generations()
	if len(gens) == 0 || !t.had(now.Name) || t.opt.KeepGenerations == 0 {
		// Nothing published, or no root: none was live. Or no generation
		// kept: the manifest describes none but its own.
		return 0
	}
	rootSum := func(g Generation) string {
		for _, f := range g.Files {
			if f.Name == now.Name {
				return f.SHA256
			}
		}
		return ""
	}
	if cur := rootSum(gens[0]); cur == "" || same && cur == now.SHA256 {
		return 0 // the usual night: no request
	}
	sum := now.SHA256
	if !same {
		if stored == nil {
			var err error
			if stored, err = t.store.Get(ctx, now.Name); err != nil {
				t.log.Warn("the published root could not be read: every generation the manifest describes is kept", "file", now.Name, "err", err)
				return -1
			}
		}
		sum = Describe(now.Name, stored).SHA256
	}
	for i, g := range gens {
		if rootSum(g) == sum {
			if i > 0 {
				t.log.Warn("the published manifest is ahead of the live root (a run died during its switch): the generations up to the live one are kept",
					"manifest_generation", gens[0].Generation, "live_generation", g.Generation)
			}
			return i
		}
	}
	t.log.Warn("the published root is none of the manifest's generations: every generation it describes is kept", "file", now.Name)
	return -1
}

// holds reports whether the store holds data under name (a small
// fixed-name file: a root, the robots lines): from the listing where it tells,
// else read back whole. Unknown is false.
func (t *Tx) holds(ctx context.Context, name string, data []byte) bool {
	if !t.had(name) {
		return false
	}
	if same, known := t.listedAs(name, data); known {
		return same
	}
	old, err := t.store.Get(ctx, name)
	return err == nil && bytes.Equal(old, data)
}

// listedAs tells, from the listing alone, whether the store holds data
// under name: not if the size differs; yes if the ETag is data's MD5 (S3
// tags an object put in one request so, unencrypted or SSE-S3). Otherwise
// (no listing, no ETag, or another one: SSE-KMS tags are not MD5s) known
// is false and the file must be read to tell. On S3 an unchanged set's
// root and robots lines then cost no request.
func (t *Tx) listedAs(name string, data []byte) (same, known bool) {
	in, ok := t.info[name]
	switch {
	case t.info == nil:
		return false, false
	case !ok || in.Size != int64(len(data)):
		return false, true
	case in.ETag != "" && strings.EqualFold(strings.Trim(in.ETag, `"`), md5Hex(data)):
		return true, true
	}
	return false, false
}

// md5Hex is data's MD5 in hex: the ETag S3 gives an object of data put in
// one request, unencrypted or SSE-S3 (quoted; some S3-compatible stores
// list it without the quotes).
func md5Hex(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// skipFixed counts a fixed-name file not written: the store holds its
// bytes.
func (t *Tx) skipFixed(name string, data []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.skipped.add(int64(len(data)), false)
	t.skips = append(t.skips, name)
}

// Switch puts the prepared set in place: the manifest, then the root
// index. It is PutManifest, a sync of the store, and PutRoot.
func (t *Tx) Switch(ctx context.Context) error {
	if err := t.PutManifest(ctx); err != nil {
		return err
	}
	if err := t.sync(); err != nil {
		return err
	}
	return t.PutRoot(ctx)
}

// PutManifest puts the prepared manifest in place, the first half of
// Switch. The manifest goes in before the root: should the run die between
// the two, the next run still knows the files of the published root (they
// are the manifest's previous generation) and keeps them for the grace
// period (liveGeneration). The sets of a Destination put all their manifests, sync the
// store once (Destination.Sync), then put all their roots.
func (t *Tx) PutManifest(ctx context.Context) error {
	f, err := t.manifestFile(ctx)
	if err != nil {
		return err
	}
	if err := t.putFixed(ctx, f.Name, f.Data); err != nil {
		return err
	}
	t.mu.Lock()
	t.manifest = true
	t.mu.Unlock()
	return nil
}

// manifestFile returns the prepared manifest, once the lock is confirmed.
func (t *Tx) manifestFile(ctx context.Context) (sink.File, error) {
	f, err := t.preparedManifest()
	if err != nil {
		return sink.File{}, err
	}
	if err := t.confirm(ctx); err != nil {
		return sink.File{}, err
	}
	return f, nil
}

// preparedManifest returns the prepared manifest.
func (t *Tx) preparedManifest() (sink.File, error) {
	p := t.ready
	if p == nil || p.raw == nil {
		return sink.File{}, errors.New("publish: Switch before a successful Prepare")
	}
	return sink.File{Name: t.layout.Manifest(), Data: p.raw}, nil
}

// PutRoot puts the prepared root index in place: the switch.
func (t *Tx) PutRoot(ctx context.Context) error {
	p := t.ready
	if err := t.holding(); err != nil {
		return err
	}
	if p.rootSame {
		t.skipFixed(p.root, p.rootData)
	} else if err := t.putRoot(ctx, p.root, p.rootData); err != nil {
		return err
	}
	t.rootPut()
	return nil
}

// rootPut records that the new root index is in place.
func (t *Tx) rootPut() {
	p := t.ready
	t.mu.Lock()
	t.switched = true
	t.mu.Unlock()
	res := p.res
	res.Published = true
	res.Generation = p.manifest.Generation
	res.Root = p.base + p.root
	res.Files = append(res.Files, p.root)
}

// Unswitch puts back the root index a Switch replaced (or removes the new
// one, on a first publish), so that Abort can undo the rest: the previous
// set is live again. A Destination calls it on the sets that switched
// before another one failed to.
func (t *Tx) Unswitch(ctx context.Context) error {
	t.mu.Lock()
	switched := t.switched
	t.mu.Unlock()
	if !switched {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	p := t.ready
	var err error
	switch {
	case p.rootSame: // not written: the previous root is the live one
	case p.prevRoot != nil:
		err = t.store.Put(ctx, p.root, p.prevRoot)
	default:
		err = t.store.Delete(ctx, p.root)
	}
	if err != nil {
		return fmt.Errorf("put back the previous %s: %w", p.root, err)
	}
	t.mu.Lock()
	t.switched = false
	t.mu.Unlock()
	p.res.Published, p.res.Generation, p.res.Root = false, 0, ""
	return nil
}

// Finish writes the robots lines of the switched set, calls
// Options.Switched, and deletes what no kept generation lists.
func (t *Tx) Finish(ctx context.Context) error {
	// The new set is live: finish even if the run is being cancelled, the
	// remaining steps take milliseconds.
	ctx = context.WithoutCancel(ctx)
	var err error
	if p := t.ready; p.robotsSame {
		t.skipFixed(p.robotsName, p.robots)
	} else {
		err = t.putFixed(ctx, p.robotsName, p.robots)
	}
	return t.finish(ctx, err, t.holding())
}

// robotsFile returns the prepared robots lines.
func (t *Tx) robotsFile() sink.File {
	return sink.File{Name: t.ready.robotsName, Data: t.ready.robots}
}

// finish is Finish once the robots lines are written, or failed to be
// with err; lost is what holding answered after that.
func (t *Tx) finish(ctx context.Context, err, lost error) error {
	p := t.ready
	res := p.res
	if err != nil {
		// Skip the prune: the old robots lines still name existing indexes.
		return fmt.Errorf("%w at %s, but writing %s failed (it still names the previous indexes, which are kept): %w",
			ErrPublishedIncomplete, res.Root, p.robotsName, err)
	}
	res.Files = append(res.Files, p.robotsName, t.layout.Manifest())
	res.RobotsChanged = p.robotsChanged
	if p.robotsChanged && t.prev != nil {
		t.log.Warn("the Sitemap: lines changed: deploy the new robots lines ("+robotsChange(t.livePrev().Submit, res.Submit)+")",
			"file", p.robotsName, "lines", len(res.Submit))
	}
	if t.opt.Switched != nil {
		t.opt.Switched(ctx, t.livePrev(), p.manifest)
	}
	keep := map[string]bool{}
	for _, g := range p.manifest.Generations() {
		for _, f := range g.Files {
			keep[f.Name] = true
		}
	}
	// The intermediate indexes this run rewrote in place were what crawlers
	// read until now: a run killed while it rewrote them left some listing
	// its sitemaps, which no manifest records. They keep their grace too.
	for name, old := range t.replaced {
		if t.layout.Kind(name) == IndexFile {
			for _, f := range listedFiles(old, p.base) {
				keep[f] = true
			}
		}
	}
	// A run that lost the lock does not prune: files the other run's set
	// lists could go.
	if lost != nil {
		t.log.Warn("prune skipped", "err", lost)
		t.release()
		return nil
	}
	res.Deleted, err = t.prune(ctx, keep)
	if err != nil {
		t.log.Warn("cleanup of files no kept generation lists failed; the next run retries", "err", err)
	}
	t.release()
	return nil
}

// listedFiles returns the names of the files an index file lists under
// base, the folder URL of its set.
func listedFiles(index []byte, base string) []string {
	var names []string
	for rest := index; ; {
		i := bytes.Index(rest, []byte("<loc>"))
		if i < 0 {
			return names
		}
		rest = rest[i+len("<loc>"):]
		j := bytes.Index(rest, []byte("</loc>"))
		if j < 0 {
			return names
		}
		if name, ok := strings.CutPrefix(string(rest[:j]), base); ok && name != "" && !strings.Contains(name, "/") {
			names = append(names, name)
		}
		rest = rest[j:]
	}
}

// robotsChange says why the robots lines changed, from the URLs the
// published ones named (nil: a manifest from before they were recorded) and
// the new ones.
func robotsChange(was, now []string) string {
	folder := func(u string) string { return u[:strings.LastIndexByte(u, '/')+1] }
	switch {
	case was == nil:
		return "the published manifest does not record the previous lines"
	case slices.Equal(was, now):
		return "the lines file held other lines than the published manifest records: a run stopped after its switch, before writing it"
	case len(was) != len(now):
		return fmt.Sprintf("the number of indexes that list sitemaps changed: %d -> %d", len(was), len(now))
	case len(now) > 0 && folder(was[0]) != folder(now[0]):
		return fmt.Sprintf("the public URL changed: %s -> %s", folder(was[0]), folder(now[0]))
	default:
		return "the index file names changed (--name)"
	}
}

// livePrev is the published manifest as crawlers saw it before this run's
// switch: the generation liveGeneration found in its place when a run that
// died left the manifest ahead of it.
func (t *Tx) livePrev() *Manifest {
	if t.live <= 0 {
		return t.prev
	}
	g := t.prev.Generations()[t.live]
	m := *t.prev
	m.Generation, m.Time, m.Files, m.Previous = g.Generation, g.Time, g.Files, t.prev.Previous[t.live:]
	return &m
}

// newManifest describes this generation and the earlier ones it keeps:
// Options.KeepGenerations of them, counted from the one that is live
// (t.live), or all of them when which one is live is unknown.
func (t *Tx) newManifest(set Set, files []File, indexes int, submit []string) *Manifest {
	m := &Manifest{
		Version: ManifestVersion, Generation: 1, Time: t.start.UTC().Truncate(time.Second),
		Rows: set.Rows, URLs: set.URLs, Rejected: set.Rejected,
		Shards: len(set.Shards), News: len(set.News), Indexes: indexes, Root: t.layout.Root(), Files: files,
		Submit: submit,
	}
	gens := t.prev.Generations()
	if t.prev != nil {
		m.Generation = t.prev.Generation + 1
	} else {
		// A set published without a manifest (an older sitemapgen, or the
		// first run): its files are the previous generation, kept likewise.
		var old []File
		for _, n := range t.before {
			if t.layout.Owned(n) && n[0] != '.' {
				old = append(old, File{Name: n})
			}
		}
		if len(old) > 0 {
			gens = append(gens, Generation{Files: old})
		}
	}
	keep := t.opt.KeepGenerations
	switch {
	case keep == 0: // no grace asked for
	case t.live < 0:
		keep = len(gens)
	default:
		keep += t.live
	}
	m.Previous = gens[:min(len(gens), keep)]
	return m
}

// prune deletes the owned files keep does not hold, and aborts the
// incomplete uploads of owned names.
func (t *Tx) prune(ctx context.Context, keep map[string]bool) (deleted []string, err error) {
	var names []string
	if t.dest != nil {
		names = t.dest.listedBefore(t.layout.Stem())
	} else if names, err = t.names(ctx); err != nil {
		return nil, err
	}
	var plan []string
	for _, n := range names {
		// Owned first: it rejects another set's name by its prefix, and in a
		// Destination the listing holds every set's files.
		if t.layout.Owned(n) && !keep[n] {
			plan = append(plan, n)
		}
	}
	deleted, err = deleteAll(ctx, t.store, plan)
	errs := []error{err}
	if a, ok := t.store.(sink.Aborter); ok && t.dest == nil { // else the Destination's Close does it once
		if _, err := a.AbortIncomplete(ctx, t.layout.Owned); err != nil {
			errs = append(errs, err)
		}
	}
	return deleted, errors.Join(errs...)
}

// deleteAll deletes names from store, in batches where it takes them
// (sink.BatchDeleter), and returns those deleted.
func deleteAll(ctx context.Context, store sink.Store, names []string) (deleted []string, err error) {
	if bd, ok := store.(sink.BatchDeleter); ok {
		return bd.DeleteAll(ctx, names)
	}
	var errs []error
	for _, n := range names {
		if err := store.Delete(ctx, n); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, n)
	}
	return deleted, errors.Join(errs...)
}

// names lists the store, or in a Destination takes the names of this set
// from its one listing after the switch (Abort: what a failed publish
// left).
func (t *Tx) names(ctx context.Context) ([]string, error) {
	if t.dest != nil {
		return t.dest.listAfter(ctx, t.layout.Stem())
	}
	names, err := t.store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", t.store, err)
	}
	return names, nil
}

// Abort removes the files a failed publish wrote that were not there
// before (nothing published lists them), puts the previous manifest back if
// it had been replaced, and aborts incomplete uploads; then it releases the
// lock. After the switch it only releases the lock: the new set is live.
func (t *Tx) Abort(ctx context.Context) {
	defer t.release()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	t.mu.Lock()
	written, replaced, manifest, unsure, switched := t.written, t.replaced, t.manifest, t.unsure, t.switched
	t.mu.Unlock()
	if switched {
		return
	}
	if unsure {
		t.log.Warn("cleanup after failure skipped: the new root may be in place; the next run cleans up")
		return
	}
	if err := t.holding(); err != nil {
		// Another run may have written some of the same names since.
		t.log.Warn("cleanup after failure skipped", "err", err)
		return
	}
	// Only what is there: a put that failed may have left nothing, and a
	// delete of it would fail too (a read-only folder) and warn of nothing.
	present := map[string]bool{}
	if names, err := t.names(ctx); err == nil {
		for _, n := range names {
			present[n] = true
		}
	} else {
		present = nil // unknown: try every name
	}
	for n, old := range replaced {
		if err := t.store.Put(ctx, n, old); err != nil {
			t.log.Warn("cleanup after failure: restore", "file", n, "err", err)
		}
	}
	for _, n := range written {
		if t.had(n) || (present != nil && !present[n]) {
			continue
		}
		if err := t.store.Delete(ctx, n); err != nil {
			t.log.Warn("cleanup after failure", "file", n, "err", err)
		}
	}
	if manifest {
		name := t.layout.Manifest()
		var err error
		if t.prevRaw != nil {
			err = t.store.Put(ctx, name, t.prevRaw)
		} else {
			err = t.store.Delete(ctx, name)
		}
		if err != nil {
			t.log.Warn("cleanup after failure: restore the manifest", "file", name, "err", err)
		}
	}
	if a, ok := t.store.(sink.Aborter); ok && t.dest == nil {
		if _, err := a.AbortIncomplete(ctx, t.layout.Owned); err != nil {
			t.log.Warn("cleanup after failure: abort incomplete uploads", "err", err)
		}
	}
}
