package jsonfast

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/reconcile-dev/reconcile/internal/intern"
)

// TestReaderInterns checks that objects read with an Interner share their
// keys and recurring values, and decode as without one.
func TestReaderInterns(t *testing.T) {
	in := intern.New()
	read := func(text string) map[string]any {
		t.Helper()
		r := Reader{Data: []byte(text), Strings: in}
		m, ok := r.Object(0)
		if !ok || r.I != len(text) {
			t.Fatalf("did not read %s", text)
		}
		return m
	}
	a := read(`{"relation":"viewer","principals":["role:1"]}`)
	b := read(`{"relation":"viewer","principals":["role:2"]}`)
	if fmt.Sprint(a) != "map[principals:[role:1] relation:viewer]" || fmt.Sprint(b) != "map[principals:[role:2] relation:viewer]" {
		t.Fatalf("read %v and %v", a, b)
	}
	if unsafe.StringData(a["relation"].(string)) != unsafe.StringData(b["relation"].(string)) {
		t.Error("the value both objects hold was made twice")
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Fatalf("key %q", k)
		}
		for ka := range a {
			if ka == k && unsafe.StringData(ka) != unsafe.StringData(k) {
				t.Errorf("key %q was made twice", k)
			}
		}
	}
}
