package s3client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
)

// Error is a failed S3 request said in one line for people: what is wrong
// and what to check.
type Error struct {
	Msg string
	// Kind is what the failure means to a caller: fs.ErrNotExist,
	// fs.ErrPermission, or nil. Errors.Is does not see it: a caller that
	// wants it tested joins it (the sink keeps its errors as they were).
	Kind error
	Err  error // the SDK's error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Explain turns the SDK's layered error from a request on bucket into an
// *Error that says what is wrong and what to check. key is the object asked
// for, "" when the caller names it itself; need names the permissions the
// request takes ("s3:GetObject"), "" for none. A cancelled context, and an
// error that is neither the SDK's nor the network's, come back as they are.
func Explain(err error, bucket, key, need string) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return explainAPI(err, ae, bucket, key, need)
	}
	var re *retry.MaxAttemptsError
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ne) || errors.As(err, &ue) || errors.As(err, &re) {
		msg := err.Error()
		var oe *net.OpError
		if errors.As(err, &oe) {
			msg = oe.Error()
		}
		return &Error{"cannot reach the S3 endpoint: " + msg, nil, err}
	}
	if strings.Contains(err.Error(), "retrieve credentials") {
		return &Error{"no AWS credentials found (environment, shared config, profile, IMDS): " + err.Error(), fs.ErrPermission, err}
	}
	return err
}

// explainAPI is Explain for an error the store answered with.
func explainAPI(err error, ae smithy.APIError, bucket, key, need string) error {
	code := ae.ErrorCode()
	switch code {
	case "NoSuchKey":
		return &Error{"no such object (NoSuchKey)", fs.ErrNotExist, err}
	case "NotFound": // HEAD has no body, so no code but the status
		if key == "" {
			return &Error{fmt.Sprintf("bucket %q not found (NotFound)", bucket), fs.ErrNotExist, err}
		}
		return &Error{"no such object or bucket (NotFound)", fs.ErrNotExist, err}
	case "NoSuchBucket":
		return &Error{fmt.Sprintf("bucket %q does not exist (NoSuchBucket)", bucket), fs.ErrNotExist, err}
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "InvalidClientTokenId",
		"XAdminUserNotFound": // versitygw's InvalidAccessKeyId
		return &Error{fmt.Sprintf("the store refused the credentials (%s): check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the profile", code), fs.ErrPermission, err}
	case "AccessDenied", "Forbidden":
		msg := fmt.Sprintf("access denied to bucket %q (%s): check the credentials and the bucket policy", bucket, code)
		if key != "" {
			msg = fmt.Sprintf("access denied (%s): check the credentials and the bucket policy", code)
		}
		if need != "" {
			msg += " (" + need + ")"
		}
		return &Error{msg, fs.ErrPermission, err}
	}
	return &Error{fmt.Sprintf("%s: %s", code, ae.ErrorMessage()), nil, err}
}
