package oci

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const msgNotAuthenticated = "The required information to complete authentication was not provided or was incorrect."

// authenticate checks the request's HTTP signature the way OCI's API
// gateway does (draft-cavage-http-signatures-08, OCI version "1"): the keyId
// must be the emulator's key, the signed headers must include date (or
// x-date), (request-target) and host, plus content-length, content-type and
// x-content-sha256 for requests with a body, the body must match its hash,
// the date must be within five minutes, and the RSA-SHA256 PKCS#1 v1.5
// signature must verify against the emulator's public key.
func (e *Emulator) authenticate(r *http.Request, body []byte) error {
	if err := e.checkSignature(r, body); err != nil {
		return errorf(http.StatusUnauthorized, "NotAuthenticated", "%s (%s)", msgNotAuthenticated, err)
	}
	return nil
}

func (e *Emulator) checkSignature(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return fmt.Errorf("missing Authorization header")
	}
	rest, ok := strings.CutPrefix(auth, "Signature ")
	if !ok {
		return fmt.Errorf("authorization scheme is not Signature")
	}
	params, err := parseSignatureParams(rest)
	if err != nil {
		return err
	}
	if v := params["version"]; v != "1" {
		return fmt.Errorf("unsupported signature version %q", v)
	}
	if params["keyId"] != e.creds.OCIKeyID() {
		return fmt.Errorf("unknown keyId %q", params["keyId"])
	}
	if a := params["algorithm"]; a != "rsa-sha256" {
		return fmt.Errorf("unsupported algorithm %q", a)
	}
	if e.pub == nil {
		return fmt.Errorf("the emulator has no usable public key")
	}
	headers := strings.Fields(strings.ToLower(params["headers"]))
	if len(headers) == 0 {
		return fmt.Errorf("no signed headers")
	}
	required := []string{"(request-target)", "host"}
	hasBody := r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch
	if hasBody {
		required = append(required, "content-length", "content-type", "x-content-sha256")
	}
	for _, h := range required {
		if !slices.Contains(headers, h) {
			return fmt.Errorf("header %q is not signed", h)
		}
	}
	dateHeader := "date"
	if slices.Contains(headers, "x-date") {
		dateHeader = "x-date"
	} else if !slices.Contains(headers, "date") {
		return fmt.Errorf(`neither "date" nor "x-date" is signed`)
	}
	date, err := http.ParseTime(r.Header.Get(dateHeader))
	if err != nil {
		return fmt.Errorf("invalid %s header %q", dateHeader, r.Header.Get(dateHeader))
	}
	if skew := time.Since(date); skew > maxClockSkew || skew < -maxClockSkew {
		return fmt.Errorf("the %s header is %s away from the server clock (at most %s allowed)", dateHeader, skew.Round(time.Second), maxClockSkew)
	}
	if hasBody {
		sum := sha256.Sum256(body)
		if got, want := r.Header.Get("x-content-sha256"), base64.StdEncoding.EncodeToString(sum[:]); got != want {
			return fmt.Errorf("x-content-sha256 does not match the body")
		}
		if got := contentLength(r); got != strconv.Itoa(len(body)) {
			return fmt.Errorf("content-length %q does not match the body length %d", got, len(body))
		}
	}
	lines := make([]string, len(headers))
	for i, h := range headers {
		var v string
		switch h {
		case "(request-target)":
			uri := r.RequestURI
			if uri == "" {
				uri = r.URL.RequestURI()
			}
			v = strings.ToLower(r.Method) + " " + uri
		case "host":
			v = r.Host
		case "content-length":
			v = contentLength(r)
		default:
			if len(r.Header.Values(h)) == 0 {
				return fmt.Errorf("signed header %q is missing", h)
			}
			v = r.Header.Get(h)
		}
		lines[i] = h + ": " + v
	}
	sig, err := base64.StdEncoding.DecodeString(params["signature"])
	if err != nil {
		return fmt.Errorf("signature is not base64")
	}
	hashed := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	if err := rsa.VerifyPKCS1v15(e.pub, crypto.SHA256, hashed[:], sig); err != nil {
		return fmt.Errorf("signature does not verify")
	}
	return nil
}

func contentLength(r *http.Request) string {
	if v := r.Header.Get("Content-Length"); v != "" {
		return v
	}
	if r.ContentLength >= 0 {
		return strconv.FormatInt(r.ContentLength, 10)
	}
	return ""
}

// parseSignatureParams parses `k1="v1",k2="v2"`.
func parseSignatureParams(s string) (map[string]string, error) {
	out := map[string]string{}
	for s = strings.TrimSpace(s); s != ""; {
		k, rest, ok := strings.Cut(s, "=")
		if !ok || !strings.HasPrefix(rest, `"`) {
			return nil, fmt.Errorf("malformed Signature parameters")
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, fmt.Errorf("malformed Signature parameters")
		}
		out[strings.TrimSpace(k)] = rest[1 : 1+end]
		s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest[2+end:]), ","))
	}
	return out, nil
}
