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

	"reconcile/resources/emulator"
)

// storedPolicy is a restriction policy as stored.
type storedPolicy struct {
	Bindings []binding `json:"bindings"`
}

// checkResourceID returns the problems with a resource id, or nil.
func checkResourceID(rid string) []string {
	typ, id, ok := strings.Cut(rid, ":")
	if !ok || typ == "" || id == "" {
		return []string{fmt.Sprintf("Invalid resource: '%s' is not in a valid format", rid)}
	}
	if _, ok := relations[typ]; !ok {
		return []string{fmt.Sprintf("Invalid resource: '%s' has an unsupported resource type '%s'", rid, typ)}
	}
	return nil
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
	if errs := checkResourceID(rid); errs != nil {
		writeErrors(w, http.StatusBadRequest, errs...)
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
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPost:
		if v := r.URL.Query().Get("allow_self_lockout"); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				writeErrors(w, http.StatusBadRequest, fmt.Sprintf("Invalid value for allow_self_lockout: '%s'", v))
				return
			}
		}
		bindings, errs := decodePolicy(r, rid)
		if errs != nil {
			writeErrors(w, http.StatusBadRequest, errs...)
			return
		}
		err := e.store.Update(func(tx emulator.Tx) error {
			if len(bindings) == 0 {
				return tx.Delete(bucketPolicies, rid)
			}
			return tx.Put(bucketPolicies, rid, storedPolicy{Bindings: bindings})
		})
		if err != nil {
			writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		writeJSON(w, http.StatusOK, policyFor(rid, bindings))
	}
}

// decodePolicy reads and checks a POST body, returning its bindings or the
// list of problems.
func decodePolicy(r *http.Request, rid string) ([]binding, []string) {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return nil, []string{"Request body too large"}
	}
	var req updateRequest
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&req); err != nil {
		return nil, []string{fmt.Sprintf("Invalid JSON: %v", err)}
	}
	switch {
	case req.Data == nil:
		return nil, []string{"Missing required field: 'data'"}
	case req.Data.Type != policyType:
		return nil, []string{fmt.Sprintf("Invalid type: '%s', expected '%s'", req.Data.Type, policyType)}
	case req.Data.Attributes == nil:
		return nil, []string{"Missing required field: 'data.attributes'"}
	}
	typ, _, _ := strings.Cut(rid, ":")
	allowed := relations[typ]
	var errs []string
	bindings := []binding{}
	for i, b := range req.Data.Attributes.Bindings {
		if b.Relation == nil || *b.Relation == "" {
			errs = append(errs, fmt.Sprintf("Missing required field: 'bindings[%d].relation'", i))
		} else if !slices.Contains(allowed, *b.Relation) {
			errs = append(errs, fmt.Sprintf("Invalid relation: '%s' is not a supported relation for resource type '%s' (supported: %s)",
				*b.Relation, typ, strings.Join(allowed, ", ")))
		}
		if b.Principals == nil {
			errs = append(errs, fmt.Sprintf("Missing required field: 'bindings[%d].principals'", i))
			continue
		}
		for _, p := range *b.Principals {
			if !principalRE.MatchString(p) {
				errs = append(errs, fmt.Sprintf("Invalid principal: '%s' is not in a valid format", p))
			}
		}
		if b.Relation != nil {
			bindings = append(bindings, binding{Relation: *b.Relation, Principals: append([]string{}, *b.Principals...)})
		}
	}
	return bindings, errs
}
