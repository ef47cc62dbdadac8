package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/reconcile-dev/reconcile/kind"
)

// The format versions of the documents of docs/state-json.md. Additive
// changes bump the minor number, anything that can break a reader the
// major one.
const (
	StateListJSONVersion = "2.0" // state list: an object since 2.0 (a bare array before)
	RecordJSONVersion    = "2.0" // state show: snake_case since 2.0 (updated_at)
	HistoryJSONVersion   = "2.0" // state history: an object since 2.0 (a bare array before)
	VersionJSONVersion   = "2.1" // version: plan_format, a number, since 2.0; commit, go and platform since 2.1
	StacksJSONVersion    = "1.0" // stack ls
	StackInitJSONVersion = "1.0" // stack init
	MigrateJSONVersion   = "1.0" // state migrate
)

// StateInfo identifies the state a document describes: its lineage and
// its serial now.
type StateInfo struct {
	Lineage string
	Serial  int64
}

// StateNode is one node as state holds it, filled by the caller from a
// state record. Inputs and Outputs are as state holds them: secrets
// redacted or sealed, never in clear.
type StateNode struct {
	Name string
	Type string // canonical type token
	Kind kind.Kind
	ID   string

	Inputs, Outputs map[string]any
	Dependencies    []string

	Protect, RetainOnDelete, DeleteBeforeReplace bool
	// Tainted, when not empty, says why the object is unusable.
	Tainted string
	// Deposed are the ids of replaced objects whose delete has not
	// completed.
	Deposed []string

	// Serial is the state serial this version of the node was written at,
	// UpdatedAt when.
	Serial    int64
	UpdatedAt time.Time
}

// HistoryEntry is one apply, destroy, import or state edit of the state's
// history.
type HistoryEntry struct {
	Serial  int64 // the state serial after it
	Time    time.Time
	Command string
	// Counts are what it did, by name (create, delete, move, failed, ...);
	// zero counts may be left out.
	Counts map[string]int
}

// MigratedStack is what state migrate did with one stack.
type MigratedStack struct {
	Stack    string
	Lineage  string
	Serial   int64
	Records  int
	Versions int
	History  int
	Intents  int
	// Copied is false when the target held an identical copy already.
	Copied bool
}

type stateListJSON struct {
	FormatVersion string         `json:"format_version"`
	Lineage       string         `json:"lineage"`
	Serial        int64          `json:"serial"`
	Nodes         []nodeListJSON `json:"nodes"`
}

type nodeListJSON struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"`
	Kind    kind.Kind `json:"kind"`
	ID      string    `json:"id"`
	Tainted bool      `json:"tainted"`
	Protect bool      `json:"protect"`
}

type recordJSON struct {
	FormatVersion       string         `json:"format_version"`
	Name                string         `json:"name"`
	Type                string         `json:"type"`
	Kind                kind.Kind      `json:"kind"`
	ID                  string         `json:"id"`
	Inputs              map[string]any `json:"inputs"`
	Outputs             map[string]any `json:"outputs"`
	Dependencies        []string       `json:"dependencies"`
	Protect             bool           `json:"protect"`
	RetainOnDelete      bool           `json:"retain_on_delete"`
	DeleteBeforeReplace bool           `json:"delete_before_replace"`
	Tainted             bool           `json:"tainted"`
	TaintedReason       string         `json:"tainted_reason"`
	Deposed             []string       `json:"deposed"`
	Serial              int64          `json:"serial"`
	UpdatedAt           string         `json:"updated_at"`
}

type historyJSON struct {
	FormatVersion string             `json:"format_version"`
	Lineage       string             `json:"lineage"`
	Serial        int64              `json:"serial"`
	Entries       []historyEntryJSON `json:"entries"`
}

type historyEntryJSON struct {
	Serial  int64          `json:"serial"`
	Time    string         `json:"time"`
	Command string         `json:"command"`
	Counts  map[string]int `json:"counts"`
}

type versionJSON struct {
	FormatVersion string `json:"format_version"`
	Version       string `json:"version"`
	Commit        string `json:"commit"`
	Go            string `json:"go"`
	Platform      string `json:"platform"`
	PlanFormat    int    `json:"plan_format"`
}

// Version is what a binary knows of how it was built, for VersionJSON.
type Version struct {
	Version, Commit, Go, Platform string
}

type stacksJSON struct {
	FormatVersion string      `json:"format_version"`
	Backend       string      `json:"backend"`
	Stacks        []stackJSON `json:"stacks"`
}

type stackJSON struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
}

type stackInitJSON struct {
	FormatVersion string `json:"format_version"`
	Backend       string `json:"backend"`
	Stack         string `json:"stack"`
	Lineage       string `json:"lineage"`
}

type migrateJSON struct {
	FormatVersion string              `json:"format_version"`
	From          string              `json:"from"`
	To            string              `json:"to"`
	Stacks        []migratedStackJSON `json:"stacks"`
}

type migratedStackJSON struct {
	Stack    string `json:"stack"`
	Lineage  string `json:"lineage"`
	Serial   int64  `json:"serial"`
	Records  int    `json:"records"`
	Versions int    `json:"versions"`
	History  int    `json:"history"`
	Intents  int    `json:"intents"`
	Copied   bool   `json:"copied"`
}

// StateListJSON writes the nodes of a state (state list) in the format of
// docs/state-json.md: the state's lineage and serial and one entry per
// node, in the order given ([] when the state is empty).
func StateListJSON(w io.Writer, st StateInfo, nodes []StateNode) error {
	doc := stateListJSON{FormatVersion: StateListJSONVersion, Lineage: st.Lineage, Serial: st.Serial, Nodes: []nodeListJSON{}}
	for _, n := range nodes {
		doc.Nodes = append(doc.Nodes, nodeListJSON{Name: n.Name, Type: n.Type, Kind: n.Kind, ID: n.ID, Tainted: n.Tainted != "", Protect: n.Protect})
	}
	return writeDoc(w, doc)
}

// RecordJSON writes one node as state holds it (state show) in the format
// of docs/state-json.md: its inputs and outputs with secrets as null
// (JSONValue), lists as [] and maps as {} when empty.
func RecordJSON(w io.Writer, n StateNode) error {
	return writeDoc(w, recordJSON{
		FormatVersion: RecordJSONVersion, Name: n.Name, Type: n.Type, Kind: n.Kind, ID: n.ID,
		Inputs: jsonObject(n.Inputs), Outputs: jsonObject(n.Outputs), Dependencies: nonNil(n.Dependencies),
		Protect: n.Protect, RetainOnDelete: n.RetainOnDelete, DeleteBeforeReplace: n.DeleteBeforeReplace,
		Tainted: n.Tainted != "", TaintedReason: n.Tainted, Deposed: nonNil(n.Deposed),
		Serial: n.Serial, UpdatedAt: jsonTime(n.UpdatedAt),
	})
}

// HistoryJSON writes the history of a state (state history) in the format
// of docs/state-json.md: the state's lineage and serial and its entries,
// oldest first ([] when none), each with its non-zero counts.
func HistoryJSON(w io.Writer, st StateInfo, entries []HistoryEntry) error {
	doc := historyJSON{FormatVersion: HistoryJSONVersion, Lineage: st.Lineage, Serial: st.Serial, Entries: []historyEntryJSON{}}
	for _, h := range entries {
		counts := map[string]int{}
		for k, n := range h.Counts {
			if n != 0 {
				counts[k] = n
			}
		}
		doc.Entries = append(doc.Entries, historyEntryJSON{Serial: h.Serial, Time: jsonTime(h.Time), Command: h.Command, Counts: counts})
	}
	return writeDoc(w, doc)
}

// VersionJSON writes the version of reconcile and of the plan files it
// writes and reads (version) in the format of docs/state-json.md.
func VersionJSON(w io.Writer, v Version, planFormat int) error {
	return writeDoc(w, versionJSON{FormatVersion: VersionJSONVersion, Version: v.Version, Commit: v.Commit, Go: v.Go, Platform: v.Platform, PlanFormat: planFormat})
}

// StacksJSON writes the stacks of a backend (stack ls) in the format of
// docs/state-json.md, marking current.
func StacksJSON(w io.Writer, backend, current string, stacks []string) error {
	doc := stacksJSON{FormatVersion: StacksJSONVersion, Backend: backend, Stacks: []stackJSON{}}
	for _, s := range stacks {
		doc.Stacks = append(doc.Stacks, stackJSON{Name: s, Current: s == current})
	}
	return writeDoc(w, doc)
}

// StackInitJSON writes the stack stack init created on backend, with the
// lineage of its new state, in the format of docs/state-json.md.
func StackInitJSON(w io.Writer, backend, stack, lineage string) error {
	return writeDoc(w, stackInitJSON{FormatVersion: StackInitJSONVersion, Backend: backend, Stack: stack, Lineage: lineage})
}

// MigrateJSON writes what state migrate copied from one backend to another
// in the format of docs/state-json.md.
func MigrateJSON(w io.Writer, from, to string, stacks []MigratedStack) error {
	doc := migrateJSON{FormatVersion: MigrateJSONVersion, From: from, To: to, Stacks: []migratedStackJSON{}}
	for _, m := range stacks {
		doc.Stacks = append(doc.Stacks, migratedStackJSON(m))
	}
	return writeDoc(w, doc)
}

// jsonObject returns m in JSON shape (JSONValue), {} rather than null when
// it is empty.
func jsonObject(m map[string]any) map[string]any {
	if len(m) == 0 {
		return map[string]any{}
	}
	out, ok := JSONValue(m).(map[string]any)
	if !ok {
		return map[string]any{}
	}
	return out
}

// jsonTime writes t in RFC 3339, in UTC, to the second; "" for the zero
// time.
func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// writeDoc writes one JSON document, indented, in one write.
func writeDoc(w io.Writer, doc any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("render json: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
