package arrowmsg

// Hooks for the external tests, which find and damage the parts of real
// messages.

// Table is a checked flatbuffer table.
type Table = fbTable

// Root returns the root table of the flatbuffer b.
func Root(b []byte) (Table, error) {
	f := &fbuf{b: b, budget: 1 << 30}
	return f.root()
}

// Sub returns the table field slot refers to; ok is false when absent.
func (t fbTable) Sub(slot int) (Table, bool, error) { return t.sub(slot) }

// Field returns the position of field slot, of n bytes, or -1 when absent.
func (t fbTable) Field(slot, n int) (int, error) { return t.field(slot, n) }

// Ref follows the offset at p.
func (t fbTable) Ref(p int) (int, error) { return t.f.ref(p) }

// ParseMessage checks the message metadata meta and returns its type and
// body length.
func ParseMessage(meta []byte) (typ, bodyLen int64, err error) {
	m, err := parseMessage(meta, 1<<62)
	return m.typ, m.bodyLen, err
}

// Message types and the continuation marker.
const (
	Continuation = continuation
	SchemaMsg    = schemaMsg
	DictMsg      = dictMsg
	BatchMsg     = batchMsg
)
