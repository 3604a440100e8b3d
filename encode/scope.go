package encode

import (
	"bytes"
	"fmt"
)

// Scope is a parsed, normalised --scope (or --public-url) URL: a folder
// whose URLs a sitemap may list.
type Scope struct {
	uri    string // normalised URL; its path ends in '/'
	origin []byte // scheme://host[:port], as at the start of uri
	auth   []byte // host[:port], as in origin
	path   []byte // starts and ends with '/'
	https  bool
	// plain: path holds neither '&' nor an apostrophe, so it reads the same
	// XML-escaped, which appendLocFast's prefix check relies on.
	plain bool
}

// ParseScope parses an absolute http or https URL as a scope. It is
// normalised like a loc (see Encoder.AppendLoc): lower-case scheme and host,
// punycode host, default port dropped, percent-encoding and dot segments
// normalised. The scope is a folder, so its path is made to end in "/":
// "https://ex.com/catalog" means "https://ex.com/catalog/". A URL with a
// query, a fragment or user info is an error.
func ParseScope(raw string) (*Scope, error) {
	var e Encoder
	b, _, r := e.appendURI(nil, []byte(raw), nil)
	if r != OK {
		return nil, &ScopeError{raw, scopeReasons[r]}
	}
	originEnd := bytes.Index(b, []byte("://")) + len("://")
	originEnd += bytes.IndexByte(b[originEnd:], '/')
	switch i := bytes.IndexAny(b[originEnd:], "?#"); {
	case i < 0:
	case b[originEnd+i] == '?':
		return nil, &ScopeError{raw, "has a query"}
	default:
		return nil, &ScopeError{raw, "has a fragment"}
	}
	if b[len(b)-1] != '/' {
		b = append(b, '/')
	}
	s := &Scope{
		uri:    string(b),
		origin: b[:originEnd],
		path:   b[originEnd:],
		https:  b[4] == 's',
	}
	s.auth = s.origin[bytes.Index(s.origin, []byte("://"))+len("://"):]
	s.plain = !bytes.ContainsAny(s.path, "&'")
	return s, nil
}

// ScopeError reports a URL that cannot be a scope.
type ScopeError struct {
	URL string // as given
	Why string // what is wrong with it
}

// Error returns the message, e.g. `scope "https://ex.com/?q": has a query`.
func (e *ScopeError) Error() string {
	return fmt.Sprintf("scope %q: %s", e.URL, e.Why)
}

var scopeReasons = [NumReasons]string{
	EmptyLoc:    "is empty",
	InvalidUTF8: "is not valid UTF-8",
	ControlChar: "holds a control character",
	NotHTTP:     "is not an absolute http or https URL",
	BadHost:     "has a missing or malformed host",
	BadPort:     "has a port that is not a number in 1..65535",
	UserInfo:    "has user info (user:password@)",
	TooLong:     "is 2,048 bytes or more",
}

// String returns the normalised scope URL, e.g. "https://example.com/catalog/".
func (s *Scope) String() string { return s.uri }
