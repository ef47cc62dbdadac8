package datadog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// storedPolicy is a restriction policy as stored.
type storedPolicy struct {
	Bindings []binding `json:"bindings"`
}

// checkResourceID returns the problem with a resource id, or "". The
// texts are Datadog's.
func checkResourceID(rid string) string {
	typ, id, ok := strings.Cut(rid, ":")
	if !ok || typ == "" || id == "" {
		return fmt.Sprintf("Invalid resource: '%s' is not in a valid format", rid)
	}
	if _, ok := relations[typ]; !ok {
		return fmt.Sprintf("Invalid resource type: '%s' does not support restriction policies", typ)
	}
	return ""
}

// policyFor is the answer for the policy of rid; bindings are [] rather
// than null, which the official clients fail to decode.
func policyFor(rid string, bindings []binding) policyResponse {
	if bindings == nil {
		bindings = []binding{}
	}
	return policyResponse{Data: restrictionPolicy{ID: rid, Type: policyType, Attributes: policyAttributes{Bindings: bindings}}}
}

func (e *Emulator) restrictionPolicy(w http.ResponseWriter, r *http.Request, rid string) {
	if msg := checkResourceID(rid); msg != "" {
		writeErrors(w, http.StatusBadRequest, msg)
		return
	}
	switch r.Method {
	case http.MethodGet:
		var p storedPolicy
		if err := e.store.View(func(tx emulator.Tx) error {
			_, err := tx.Get(bucketPolicies, rid, &p)
			return err
		}); err != nil {
			writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		writeJSON(w, http.StatusOK, policyFor(rid, p.Bindings))
	case http.MethodDelete:
		if err := e.store.Update(func(tx emulator.Tx) error { return tx.Delete(bucketPolicies, rid) }); err != nil {
			writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		w.Header().Set("Content-Type", "application/json") // as Datadog's 204 has
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPost:
		allowLockout := false
		if v := r.URL.Query().Get("allow_self_lockout"); v != "" {
			var err error
			if allowLockout, err = strconv.ParseBool(v); err != nil {
				writeErrors(w, http.StatusBadRequest, fmt.Sprintf("Invalid value for allow_self_lockout: '%s'", v))
				return
			}
		}
		bindings, msg := decodePolicy(r, rid)
		if msg != "" {
			writeErrors(w, http.StatusBadRequest, msg)
			return
		}
		a, err := e.account()
		if err != nil {
			writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		var refusal string
		err = e.store.Update(func(tx emulator.Tx) error {
			var cur storedPolicy
			if _, err := tx.Get(bucketPolicies, rid, &cur); err != nil {
				return err
			}
			if refusal = selfLockout(rid, a, cur.Bindings, bindings, allowLockout); refusal != "" {
				return nil
			}
			if len(bindings) == 0 {
				return tx.Delete(bucketPolicies, rid)
			}
			return tx.Put(bucketPolicies, rid, storedPolicy{Bindings: bindings})
		})
		switch {
		case err != nil:
			writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
		case refusal != "":
			writeErrors(w, http.StatusBadRequest, refusal)
		default:
			writeJSON(w, http.StatusOK, policyFor(rid, bindings))
		}
	}
}

// principalTypes are the principal types every relation supports, in the
// order Datadog lists them.
var principalTypes = []string{"org", "role", "team", "user"}

// decodePolicy reads and checks a POST body, returning its bindings or the
// first problem found. Datadog answers one problem at a time, wrapped as
// "Invalid request: ..." where its own text is known.
func decodePolicy(r *http.Request, rid string) ([]binding, string) {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return nil, "Request body too large"
	}
	var req updateRequest
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&req); err != nil {
		return nil, fmt.Sprintf("Invalid JSON: %v", err)
	}
	switch {
	case req.Data == nil:
		return nil, "Missing required field: 'data'"
	case req.Data.Type != policyType:
		return nil, fmt.Sprintf("Invalid type: '%s', expected '%s'", req.Data.Type, policyType)
	case req.Data.Attributes == nil:
		return nil, "Missing required field: 'data.attributes'"
	}
	typ, _, _ := strings.Cut(rid, ":")
	allowed := relations[typ]
	bindings := []binding{}
	for i, b := range req.Data.Attributes.Bindings {
		switch {
		case b.Relation == nil || *b.Relation == "":
			return nil, fmt.Sprintf("Missing required field: 'bindings[%d].relation'", i)
		case !slices.Contains(allowed, *b.Relation):
			return nil, fmt.Sprintf("Invalid relation: '%s' is not a supported relation for resource type '%s' (supported: %s)",
				*b.Relation, typ, strings.Join(allowed, ", "))
		case b.Principals == nil:
			return nil, fmt.Sprintf("Missing required field: 'bindings[%d].principals'", i)
		}
		for _, p := range *b.Principals {
			if msg := checkPrincipal(p, *b.Relation); msg != "" {
				return nil, msg
			}
		}
		bindings = append(bindings, binding{Relation: *b.Relation, Principals: append([]string{}, *b.Principals...)})
	}
	return bindings, ""
}

// checkPrincipal returns the problem with principal p of a binding of
// relation rel, or "". A type no relation supports gets Datadog's text; a
// malformed principal, or one whose id is not a UUID, the emulator's.
func checkPrincipal(p, rel string) string {
	typ, id, ok := strings.Cut(p, ":")
	switch {
	case !ok || typ == "" || id == "":
		return fmt.Sprintf("Invalid principal: '%s' is not in a valid format", p)
	case !slices.Contains(principalTypes, typ):
		return fmt.Sprintf("Invalid request: [PrincipalTypeInvalidForRelation] principal %q is not supported by %q relation, supported types: %q",
			p, rel, strings.Join(principalTypes, ", "))
	case !uuidRE.MatchString(id):
		return fmt.Sprintf("Invalid principal: '%s' is not in a valid format", p)
	}
	return ""
}

// selfLockout returns Datadog's refusal of a POST that would lower the
// caller's own access to the resource rid, from what the bindings before
// give it to what the bindings after do, or "" when it would not (or when
// allow is set: the caller is an admin, with user_access_manage). The
// caller is a, with its user, role, teams and org as principals.
func selfLockout(rid string, a account, before, after []binding, allow bool) string {
	if allow {
		return ""
	}
	typ, _, _ := strings.Cut(rid, ":")
	rels := relations[typ]
	from, to := accessLevel(rels, a, before), accessLevel(rels, a, after)
	if to >= from {
		return ""
	}
	name := func(level int) string {
		if level < 0 {
			return "no access"
		}
		return rels[level]
	}
	return fmt.Sprintf("Invalid request: users cannot decrease their own level of access (from %s to %s)", name(from), name(to))
}

// accessLevel is the index in rels (least access first) of the highest
// relation bindings give the caller a, -1 for none. A resource without
// bindings has no policy: everyone has full access.
func accessLevel(rels []string, a account, bindings []binding) int {
	if len(bindings) == 0 {
		return len(rels) - 1
	}
	mine := map[string]bool{"user:" + a.UserID: true, "role:" + a.RoleID: true, "org:" + a.OrgID: true}
	for _, t := range a.Teams {
		mine["team:"+t] = true
	}
	level := -1
	for _, b := range bindings {
		i := slices.Index(rels, b.Relation)
		if i <= level {
			continue
		}
		for _, p := range b.Principals {
			if mine[strings.ToLower(p)] {
				level = i
				break
			}
		}
	}
	return level
}
