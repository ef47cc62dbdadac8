package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

// OutputsJSONVersion is the version of the document OutputsJSON writes,
// documented in docs/output-json.md.
const OutputsJSONVersion = "1.0"

// OutputValue is one stack output as 'reconcile output' shows it.
type OutputValue struct {
	// Value is the output's value: a secret that is not to be shown is
	// sealed (or a value.Secret), and shows as (sensitive value) or null.
	Value any
	// Sensitive says that the output is or holds a secret, shown or not.
	Sensitive bool
}

// Recorded says when the outputs were recorded.
type Recorded struct {
	Serial  int64
	Time    time.Time
	Command string
}

// OutputsText writes outputs as "name = value" lines, sorted by name and
// aligned, as the end of an apply shows them: names as untrusted.Name
// shows them, strings quoted, a secret not shown as (sensitive value).
func OutputsText(w io.Writer, outputs map[string]OutputValue) error {
	width := 0
	for k := range outputs {
		width = max(width, textWidth(untrusted.Name(k)))
	}
	var b bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(outputs)) {
		name := untrusted.Name(k)
		fmt.Fprintf(&b, "%s%*s = %s\n", name, width-textWidth(name), "", DisplayValue(outputs[k].Value))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// OutputText writes the value of one output on a line, as OutputsText
// shows it.
func OutputText(w io.Writer, o OutputValue) error {
	_, err := fmt.Fprintln(w, DisplayValue(o.Value))
	return err
}

// outputsDoc is the document of docs/output-json.md.
type outputsDoc struct {
	FormatVersion string                `json:"format_version"`
	Recorded      bool                  `json:"recorded"`
	Serial        int64                 `json:"serial"`
	RecordedAt    *time.Time            `json:"recorded_at"`
	Command       string                `json:"command"`
	Outputs       map[string]outputJSON `json:"outputs"`
}

type outputJSON struct {
	Value     any  `json:"value"`
	Sensitive bool `json:"sensitive"`
}

// OutputsJSON writes the outputs recorded (nil: none were) in the format
// of docs/output-json.md: each output's value, null for a secret not
// shown, and whether it is sensitive.
func OutputsJSON(w io.Writer, rec *Recorded, outputs map[string]OutputValue) error {
	doc := outputsDoc{FormatVersion: OutputsJSONVersion, Outputs: map[string]outputJSON{}}
	if rec != nil {
		at := rec.Time.UTC()
		doc.Recorded, doc.Serial, doc.RecordedAt, doc.Command = true, rec.Serial, &at, rec.Command
	}
	for k, o := range outputs {
		doc.Outputs[k] = outputJSON{Value: JSONValue(o.Value), Sensitive: o.Sensitive}
	}
	return writeJSONDoc(w, doc)
}

// OutputJSON writes the value of one output as a JSON document of its
// own: null for a secret not shown.
func OutputJSON(w io.Writer, o OutputValue) error {
	return writeJSONDoc(w, JSONValue(o.Value))
}

// writeJSONDoc writes v indented, HTML characters as they are.
func writeJSONDoc(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("render json: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
