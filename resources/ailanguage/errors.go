package ailanguage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources"
)

// APIErr turns an SDK service error into *resources.APIError. Other errors
// (transport, context) are returned unchanged.
func APIErr(err error) error {
	var se common.ServiceError
	if errors.As(err, &se) {
		return &resources.APIError{Service: "oci", Status: se.GetHTTPStatusCode(), Code: se.GetCode(), Message: se.GetMessage()}
	}
	return err
}

// ObjectErr is APIErr for calls on one object: a 404 also matches
// resources.ErrNotFound.
func ObjectErr(err error) error {
	err = APIErr(err)
	var ae *resources.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return fmt.Errorf("%w: %w", resources.ErrNotFound, ae)
	}
	return err
}

// Refusal marks err with resources.Refused when it is the API's refusal of
// the request (see resources.RefusalStatus).
func Refusal(err error) error {
	var ae *resources.APIError
	if errors.As(err, &ae) && resources.RefusalStatus(ae.Status) {
		return resources.Refused(err)
	}
	return err
}

// HasStatus reports whether err is an *resources.APIError with status.
func HasStatus(err error, status int) bool {
	var ae *resources.APIError
	return errors.As(err, &ae) && ae.Status == status
}

// RetryTokenLifetime is how long OCI remembers an opc-retry-token. A create
// older than this, less a margin, is not replayed: the replay would make a
// second object instead of returning the first.
const RetryTokenLifetime = 24 * time.Hour

// RetryToken fits the engine's token to OCI's opc-retry-token (at most 64
// characters of letters, digits, '-' and '_'), hashing it when it does not.
func RetryToken(tok string) string {
	ok := len(tok) <= 64
	for _, r := range tok {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			ok = false
		}
	}
	if ok {
		return tok
	}
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// RetryTokenPtr is RetryToken of the context's idempotency token, as the
// OpcRetryToken of a create request: nil when there is none.
func RetryTokenPtr(tok string) *string {
	if t := RetryToken(tok); t != "" {
		return &t
	}
	return nil
}

// CanReplay says why the interrupted create req cannot be replayed, or
// returns nil: its inputs held a secret (state keeps only a digest of it),
// it has no token, or it is older than RetryTokenLifetime. kind names the
// object ("endpoint", "model").
func CanReplay(kind string, req resources.RecoverRequest) error {
	switch {
	case len(req.Hidden) > 0:
		return fmt.Errorf("cannot replay the create: its inputs %s were secret, and state keeps no secret value", strings.Join(req.Hidden, ", "))
	case req.Token == "":
		return errors.New("cannot replay the create: it has no retry token")
	case !req.Time.IsZero() && time.Since(req.Time) > RetryTokenLifetime-time.Hour:
		return fmt.Errorf("cannot replay the create of %s: OCI keeps retry tokens for %s, so a replay could make a second %s",
			req.Time.UTC().Format(time.RFC3339), RetryTokenLifetime, kind)
	}
	return nil
}

// Replayed interprets what a replayed create answered (id, got, err as
// Create returned them) for Recover. When OCI refused the replay with 400
// or 404 the first create, which had the same body, made nothing either,
// and neither did the replay; the same goes for a token whose object was
// deleted since (409 InvalidatedRetryToken): Replayed returns no id and no
// error. Other failures without an id (401, 403: the credentials or
// permissions changed since; an outage) say nothing of the first create:
// they come back as errors. With an id, the create's answer is returned.
func Replayed(id string, got resources.Attrs, err error) (string, resources.Attrs, error) {
	var ae *resources.APIError
	if id == "" && errors.As(err, &ae) {
		switch {
		case ae.Status == http.StatusConflict && ae.Code == "InvalidatedRetryToken",
			ae.Status == http.StatusBadRequest, ae.Status == http.StatusNotFound:
			return "", nil, nil
		}
	}
	if id == "" && err != nil {
		return "", nil, fmt.Errorf("replay the create: %w", err)
	}
	return id, got, err
}
