package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/sink"
)

// Grouping splits a run's rows into sitemap sets, one per group, in one
// pass over the input (Config.Group). Every group is a complete set, named
// Config.Name-GROUP (or as its Place says), byte for byte the set a run over
// that group's rows alone would write.
type Grouping struct {
	// ByHost groups rows by the host of their normalised loc; otherwise by
	// the column Config.Columns[input.Group].
	ByHost bool
	// Default is the group of rows whose group value is empty ("": such
	// rows are rejected as encode.GroupEmpty). It must be a GroupName.
	Default string
	// Max is the most groups a run may have (0: DefaultMaxGroups): one
	// more fails the run, and nothing is published.
	Max int
	// Place returns where the set of the group named name goes (nil: every
	// group beside the others in Config.Sink, served from Config.PublicURL,
	// under Config.Scope, named Config.Name-name). It is called once per
	// group, when its first row is read.
	Place func(name string) (Place, error)
	// Vanished, when Place gives groups destinations of their own, returns
	// the groups, other than those of the run (have), whose destination
	// holds a published set (its root and manifest): gone from the input,
	// each is a shrink of 100% (refused unless Config.Force or MaxShrink
	// allows it). It may delete what a group's first publish that died
	// left in its destination. Nil: no such check.
	Vanished func(ctx context.Context, have []string) ([]string, error)
}

// Place is where one group's set is published. A field left zero takes
// the run's: the name Config.Name-GROUP, Config.PublicURL and Config.Scope,
// Config.Sink, Config.Verify.
type Place struct {
	Name      string        // the file name stem
	PublicURL *encode.Scope // the folder its files are served from
	Scope     *encode.Scope // its URLs must fall under it (nil: PublicURL)
	Sink      sink.Store    // its destination
	// Verify is Config.Verify for this set.
	Verify func(ctx context.Context, root string, pending map[string][]byte, trusted func(name string) bool) error
}

// DefaultMaxGroups is Grouping.Max's default.
const DefaultMaxGroups = 1000

// MaxGroupName is the longest group name.
const MaxGroupName = 64

// Errors of a grouped run; they fail it before anything is published.
var (
	// ErrTooManyGroups reports a run with more groups than Grouping.Max.
	ErrTooManyGroups = errors.New("too many groups")
	// ErrGroupCollision reports two group values that map to one name.
	ErrGroupCollision = errors.New("two group values share a file name")
	// ErrGroupVanished reports a group published before that the input no
	// longer holds: a shrink of 100% for that group.
	ErrGroupVanished = errors.New("a published group is not in the input")
)

// GroupName maps a group value to the name its files carry: white space
// around it is trimmed and ASCII letters are lower-cased; what is
// left must be 1..MaxGroupName ASCII letters, digits, '-', '_' or '.',
// starting with a letter or a digit, and not end like an intermediate
// index's name ("…index-0001", see publish.ValidStem). An empty value is encode.GroupEmpty,
// any other that does not map is encode.GroupUnnameable. Lower-casing is
// what keeps two groups apart on a file system that ignores case; two
// values that map to one name ("Shop", "shop") fail the run
// (ErrGroupCollision), they are never merged.
func GroupName(dst, value []byte) ([]byte, encode.Reason) {
	value = bytes.TrimSpace(value)
	switch {
	case len(value) == 0:
		return dst, encode.GroupEmpty
	case len(value) > MaxGroupName || !isAlnum(value[0]):
		return dst, encode.GroupUnnameable
	}
	start := len(dst)
	for _, c := range value {
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case isAlnum(c) || c == '-' || c == '_' || c == '.':
		default:
			return dst[:start], encode.GroupUnnameable
		}
		dst = append(dst, c)
	}
	if publish.ValidStem("x-"+string(dst[start:])) != nil {
		// "…-index-0001": NAME-GROUP.xml would be an index of set NAME.
		return dst[:start], encode.GroupUnnameable
	}
	return dst, encode.OK
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// validateGroup checks Config.Group.
func (c *Config) validateGroup() error {
	g := c.Group
	if g == nil {
		return nil
	}
	switch {
	case g.Max < 0:
		return &ConfigError{Field: "Group.Max", Name: "max groups", Value: g.Max, Rule: "must be 0 (the default) or more"}
	case !g.ByHost && c.Columns[input.Group] == "":
		return errors.New("group by a column: name it (Columns[input.Group])")
	case g.ByHost && c.Columns[input.Group] != "":
		return errors.New("group by host or by a column, not both")
	}
	if g.Default != "" {
		if name, r := GroupName(nil, []byte(g.Default)); r != encode.OK || string(name) != g.Default {
			return fmt.Errorf("default group %q: use 1..%d lower-case letters, digits, '-', '_' and '.', starting with a letter or a digit, and not ending like an intermediate index (-index-0001)", g.Default, MaxGroupName)
		}
	}
	return nil
}

// groups is the registry of a grouped run's sets: a group is added when a
// worker meets its first row. The workers keep their own caches in front
// of it, so it is locked once per group and worker, not per row.
type groups struct {
	r    *run
	ctx  context.Context
	max  int
	mu   sync.Mutex
	sets []*set            // by group index
	by   map[string]*set   // by name
	raw  map[string]string // name -> the value that first gave it
	err  error             // the first error: every later lookup fails with it
}

func newGroups(ctx context.Context, r *run) *groups {
	max := r.cfg.Group.Max
	if max == 0 {
		max = DefaultMaxGroups
	}
	return &groups{r: r, ctx: ctx, max: max, by: map[string]*set{}, raw: map[string]string{}}
}

// lookup returns the set of the group that value (as read) names as name,
// adding it if it is new.
func (gs *groups) lookup(name, value []byte) (*set, error) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.err != nil {
		return nil, gs.err
	}
	if s, ok := gs.by[string(name)]; ok {
		if first := gs.raw[string(name)]; first != string(value) && !gs.r.cfg.Group.ByHost {
			gs.err = fmt.Errorf("%w: group values %q and %q are both named %q (names are lower case); make them one value in the export",
				ErrGroupCollision, first, value, name)
			return nil, gs.err
		}
		return s, nil
	}
	if len(gs.sets) == gs.max {
		gs.err = fmt.Errorf("%w: a group %q beyond the %d allowed (--max-groups); nothing published", ErrTooManyGroups, name, gs.max)
		return nil, gs.err
	}
	s, err := gs.r.newGroupSet(gs.ctx, string(name), len(gs.sets))
	if err != nil {
		gs.err = fmt.Errorf("group %q: %w", name, err)
		return nil, gs.err
	}
	gs.sets = append(gs.sets, s)
	gs.by[s.group] = s
	gs.raw[s.group] = string(value)
	return s, nil
}

// all returns the sets in name order.
func (gs *groups) all() []*set {
	gs.mu.Lock()
	sets := slices.Clone(gs.sets)
	gs.mu.Unlock()
	slices.SortFunc(sets, func(a, b *set) int {
		switch {
		case a.group < b.group:
			return -1
		case a.group > b.group:
			return 1
		}
		return 0
	})
	return sets
}

// grouper finds the group of each row for one encoding worker: a cache of
// the values it met, and an encoder per group when the groups' scopes
// differ.
type grouper struct {
	gs     *groups
	byHost bool
	shared *encode.Encoder   // the encoder of every group, when they share a scope
	encs   []*encode.Encoder // by group index, when they do not
	newEnc func(*set) *encode.Encoder
	any    *encode.Encoder // no scope: finds the host of a loc (ByHost)
	proto  []byte          // ByHost: a "//host/…" loc given a scheme
	cache  map[string]*set // value (as read, or a host) -> its set
	recent [recentSlots]recentGroup
	name   []byte // scratch
	host   []byte // scratch
	def    []byte // Grouping.Default

	// A batch's rows by group (encodeRows): each row's group (-1: none),
	// the groups in the order of their first row, their rows' count and
	// where their rows start in rows, the row numbers sorted by group.
	rowGroup []int32
	order    []*set
	count    []int32 // by group index
	at       []int32 // by group index
	rows     []int32
	touched  byte // the sum of the bytes encodeWindow touches ahead
}

// group returns the set of row i of b, or the reason the row has none.
func (g *grouper) group(b *Batch, i int) (*set, encode.Reason, error) {
	var value []byte
	if g.byHost {
		var r encode.Reason
		if value, r = g.hostOf(b.Field(input.Loc, i)); r != encode.OK {
			return nil, r, nil
		}
	} else {
		value = b.Field(input.Group, i)
	}
	lo, hi := recentKey(value)
	slot := &g.recent[recentSlot(lo, hi, len(value))]
	if s := slot.set; s != nil && slot.lo == lo && slot.hi == hi && int(slot.n) == len(value) &&
		(len(value) <= 16 || string(slot.mid[:len(value)-16]) == string(value[8:len(value)-8])) {
		return s, encode.OK, nil
	}
	return g.lookup(value, slot, lo, hi)
}

// encoder returns the encoder of the scope of set s.
func (g *grouper) encoder(s *set) *encode.Encoder {
	if g.shared != nil {
		return g.shared
	}
	for len(g.encs) <= s.index {
		g.encs = append(g.encs, nil)
	}
	if g.encs[s.index] == nil {
		g.encs[s.index] = g.newEnc(s)
	}
	return g.encs[s.index]
}

// recentSlots is the size of a worker's cache of recent group values, a
// power of two (recentBits its logarithm). About DefaultMaxGroups slots
// (40 KiB), so that a long tail of groups mostly finds a slot each rather
// than the worker's map: BenchmarkEncodeGrouped (995 groups) finds a row's
// group in about 27 ns with 64 slots, 15 ns with 1024.
const (
	recentBits  = 10
	recentSlots = 1 << recentBits
)

// recentGroup is a slot of grouper.recent: a group value of up to 31
// bytes, kept inline, and its set. The value is its length, its first and
// last 8 bytes (recentKey) and the bytes between them: most values are
// 16 bytes or shorter, and compare in two words.
type recentGroup struct {
	lo, hi uint64
	set    *set
	n      uint8
	mid    [15]byte // value[8:n-8]
}

// recentKey returns value's first and last 8 bytes as words (little
// endian), or a packing of its bytes when it is shorter: with its length,
// they are the whole value when it is 16 bytes or shorter.
func recentKey(value []byte) (lo, hi uint64) {
	n := len(value)
	switch {
	case n >= 8:
		lo, hi = binary.LittleEndian.Uint64(value), binary.LittleEndian.Uint64(value[n-8:])
	case n >= 4:
		lo = uint64(binary.LittleEndian.Uint32(value)) | uint64(binary.LittleEndian.Uint32(value[n-4:]))<<32
	case n > 0:
		lo = uint64(value[0]) | uint64(value[n/2])<<8 | uint64(value[n-1])<<16
	}
	return lo, hi
}

// recentSlot returns the slot of grouper.recent that a value of length n
// and key lo, hi (recentKey) goes to.
func recentSlot(lo, hi uint64, n int) int {
	h := (lo ^ bits.RotateLeft64(hi, 29) ^ uint64(n)) * 0x9e3779b97f4a7c15
	return int(h >> (64 - recentBits))
}

// lookup returns the set of value from the worker's map, or from the
// groups (adding it), and keeps it in slot; or the reason value names no
// group, or the run's error.
func (g *grouper) lookup(value []byte, slot *recentGroup, lo, hi uint64) (*set, encode.Reason, error) {
	s, ok := g.cache[string(value)] // no allocation: the compiler reads the map with the bytes
	if !ok {
		var r encode.Reason
		g.name, r = GroupName(g.name[:0], value)
		raw := bytes.TrimSpace(value)
		if r == encode.GroupEmpty && len(g.def) > 0 {
			// The default group is the value it names: rows that give
			// that value are in it too, not a second value of its name.
			g.name, r, raw = append(g.name[:0], g.def...), encode.OK, g.def
		}
		if r != encode.OK {
			return nil, r, nil
		}
		var err error
		if s, err = g.gs.lookup(g.name, raw); err != nil {
			return nil, 0, err
		}
		g.cache[string(value)] = s
	}
	if n := len(value); n <= 16+len(slot.mid) {
		slot.lo, slot.hi, slot.n, slot.set = lo, hi, uint8(n), s
		if n > 16 {
			copy(slot.mid[:], value[8:n-8])
		}
	}
	return s, encode.OK, nil
}

// hostOf returns the host of loc as the encoder writes it (lower case,
// punycode); nil for a path, which has none (its group is the default
// group, if any); or the reason loc is no URL at all (not http, a bad host,
// a control character...), which is the row's reason to be rejected, not
// that it has no group.
func (g *grouper) hostOf(loc []byte) ([]byte, encode.Reason) {
	if t := bytes.TrimSpace(loc); len(t) > 0 && t[0] == '/' {
		if len(t) == 1 || t[1] != '/' {
			return nil, encode.OK // a path: resolved against its group's scope
		}
		// "//host/…" takes its scope's scheme; its host is its own.
		g.proto = append(append(g.proto[:0], "https:"...), t...)
		loc = g.proto
	}
	out, r := g.any.AppendLoc(g.host[:0], loc)
	g.host = out
	if r != encode.OK {
		return nil, r
	}
	_, rest, ok := bytes.Cut(out, []byte("://"))
	if !ok {
		return nil, encode.OK
	}
	for k, c := range rest {
		if c == '/' || c == ':' {
			return rest[:k], encode.OK
		}
	}
	return rest, encode.OK
}

// groupPlace returns where group name goes: Grouping.Place's answer, or
// beside the others.
func (r *run) groupPlace(name string) (Place, error) {
	cfg := &r.cfg
	var p Place
	if cfg.Group.Place != nil {
		var err error
		if p, err = cfg.Group.Place(name); err != nil {
			return p, err
		}
	}
	if p.Name == "" {
		p.Name = cfg.Name + "-" + name
	}
	if p.PublicURL == nil {
		p.PublicURL, p.Scope = cfg.PublicURL, cfg.Scope
	}
	if p.Scope == nil {
		p.Scope = p.PublicURL
	}
	if p.Sink == nil {
		p.Sink = cfg.Sink
	}
	if p.Verify == nil {
		p.Verify = cfg.Verify
	}
	if p.Sink == nil || p.PublicURL == nil {
		return p, errors.New("no destination or public URL")
	}
	if err := publish.ValidStem(p.Name); err != nil {
		return p, err
	}
	return p, nil
}
