// Package sink stores files where they are served from: a local folder or an
// S3 bucket. It knows nothing of sitemaps: put, get, list, delete. Every Put
// is atomic: a reader sees the whole file or the previous one, never a part.
package sink

import "context"

// Store is a flat namespace of files.
type Store interface {
	// Put stores data under name, replacing any earlier file atomically.
	Put(ctx context.Context, name string, data []byte) error
	// Get returns the content of name; an error wrapping fs.ErrNotExist
	// when there is no such file.
	Get(ctx context.Context, name string) ([]byte, error)
	// List returns the names of the files present.
	List(ctx context.Context) ([]string, error)
	// Delete removes the named file; a missing file is not an error.
	Delete(ctx context.Context, name string) error
	// Connections is how many Puts are worth running at once: enough to
	// hide the store's latency, no more (each holds a file in memory).
	Connections() int
	// String describes the destination for people.
	String() string
}

// SmallPutter is a Store on which a put of a small file waits on a round
// trip, not on bandwidth or memory (an object store): many more such puts
// are worth running at once than Connections. A folder is not one: its
// files take the folder's lock one at a time, however many are written.
type SmallPutter interface {
	// SmallConnections is how many puts of files of at most SmallFile
	// bytes are worth running at once.
	SmallConnections() int
}

// SmallFile is the size up to which a put is a small one (SmallPutter):
// 128 KiB take about 2 ms at 500 Mbit/s, a tenth of a round trip to S3.
const SmallFile = 128 << 10

// Syncer is a Store that can make the files put so far durable, so that a
// file naming them is never durable before they are.
type Syncer interface {
	Sync() error
}

// Deferrer is a Syncer whose puts can leave their durability to the next
// Sync: many files then cost one sync, not one each. A crash before that
// Sync may lose such a file or leave it short, and a reader may see a new
// name before its bytes are all there, so it is only for names that no
// file names yet (new shards, listed by an index written after the Sync).
type Deferrer interface {
	Syncer
	// PutDeferred stores data under name, replacing any earlier file
	// atomically for readers; durable once Sync returns. A put that fails
	// may leave a name that was not there empty.
	PutDeferred(ctx context.Context, name string, data []byte) error
}

// File is a file's name and content, for Batcher.
type File struct {
	Name string
	Data []byte
}

// Batcher is a Store that puts many files for the cost of one: a folder
// writes them all, makes them durable in one step, and only then renames
// them into place, so that no name ever holds bytes a crash could lose.
type Batcher interface {
	// PutAll stores every file as Put would, each durable in place when
	// it returns. It returns the names put in place: all of them, or on
	// error those placed before it.
	PutAll(ctx context.Context, files []File) (placed []string, err error)
}

// Aborter is a Store that can hold incomplete uploads (S3 multipart uploads
// of a run that was killed): invisible to readers, but stored and billed.
type Aborter interface {
	// AbortIncomplete aborts the incomplete uploads of the names owned
	// accepts and returns those names.
	AbortIncomplete(ctx context.Context, owned func(name string) bool) (aborted []string, err error)
}

// BatchDeleter is a Store that deletes many files in few requests.
type BatchDeleter interface {
	// DeleteAll removes the named files and returns those it removed.
	DeleteAll(ctx context.Context, names []string) (deleted []string, err error)
}

// Info is what a listing tells of a stored file.
type Info struct {
	Name string
	Size int64
	// ETag is the entity tag an S3 listing gives, quotes included; "" for
	// a folder.
	ETag string
}

// Stater is a Store that lists its files with their sizes (and, on S3,
// their ETags) in one go: what a run checks before it trusts a file it
// would otherwise rewrite.
type Stater interface {
	ListInfo(ctx context.Context) ([]Info, error)
}

// Tailer is a Store that reads the last bytes of a file without reading
// the rest (a gzip file's trailer: its CRC-32 and length).
type Tailer interface {
	// Tail returns the last n bytes of name, or all of it when it is
	// shorter; an error wrapping fs.ErrNotExist when there is no such file.
	Tail(ctx context.Context, name string, n int) ([]byte, error)
}

// Tagger is a Store whose puts return what the store says it holds: the
// ETag a later ListInfo reports for the file.
type Tagger interface {
	PutTagged(ctx context.Context, name string, data []byte) (etag string, err error)
}
