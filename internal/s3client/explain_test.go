package s3client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"testing"

	"github.com/aws/smithy-go"
)

func TestExplain(t *testing.T) {
	api := func(code string) error {
		return fmt.Errorf("operation GetObject: %w", &smithy.GenericAPIError{Code: code, Message: "the server's words"})
	}
	unreachable := fmt.Errorf("send: %w", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")})
	for _, c := range []struct {
		name      string
		err       error
		key, need string
		msg       string // a part of the message
		kind      error  // nil: no *Error at all when msg is ""
	}{
		{"no such bucket", api("NoSuchBucket"), "", "", `bucket "b" does not exist (NoSuchBucket)`, fs.ErrNotExist},
		{"no such key", api("NoSuchKey"), "k", "", "no such object (NoSuchKey)", fs.ErrNotExist},
		{"HEAD on the bucket", api("NotFound"), "", "", `bucket "b" not found (NotFound)`, fs.ErrNotExist},
		{"HEAD on an object", api("NotFound"), "k", "", "no such object or bucket (NotFound)", fs.ErrNotExist},
		{"bad key", api("InvalidAccessKeyId"), "k", "", "refused the credentials (InvalidAccessKeyId): check AWS_ACCESS_KEY_ID", fs.ErrPermission},
		{"versitygw's bad key", api("XAdminUserNotFound"), "", "", "refused the credentials", fs.ErrPermission},
		{"denied on the bucket", api("AccessDenied"), "", "", `access denied to bucket "b" (AccessDenied): check the credentials and the bucket policy`, fs.ErrPermission},
		{"denied on an object", api("AccessDenied"), "k", "s3:GetObject", "access denied (AccessDenied): check the credentials and the bucket policy (s3:GetObject)", fs.ErrPermission},
		{"other code", api("SlowDown"), "", "", "SlowDown: the server's words", nil},
		{"unreachable", unreachable, "", "", "cannot reach the S3 endpoint: dial tcp: connection refused", nil},
		{"no credentials", errors.New("failed to retrieve credentials: no EC2 IMDS role found"), "", "", "no AWS credentials found", fs.ErrPermission},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Explain(c.err, "b", c.key, c.need)
			var e *Error
			if !errors.As(got, &e) {
				t.Fatalf("Explain = %v (%T), want an *Error", got, got)
			}
			if !strings.Contains(e.Msg, c.msg) || e.Error() != e.Msg {
				t.Errorf("message %q, want it to hold %q", e.Msg, c.msg)
			}
			if e.Kind != c.kind {
				t.Errorf("Kind = %v, want %v", e.Kind, c.kind)
			}
			if !errors.Is(got, c.err) {
				t.Errorf("%v does not wrap the SDK's error", got)
			}
			if c.kind != nil && errors.Is(got, c.kind) {
				t.Errorf("%v is %v: Kind must be joined by the caller, not wrapped", got, c.kind)
			}
			if again := Explain(got, "other", "", ""); again != got {
				t.Errorf("Explain of an *Error = %v, want it back as it is", again)
			}
		})
	}
	for _, err := range []error{context.Canceled, fmt.Errorf("get: %w", context.Canceled), errors.New("something else")} {
		if got := Explain(err, "b", "k", ""); got != err {
			t.Errorf("Explain(%v) = %v, want it back as it is", err, got)
		}
	}
}
