package jsonfast

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// TestInterner checks that an Interner returns the bytes asked for, every
// time, and that a string asked for again shares the memory of the first.
func TestInterner(t *testing.T) {
	in := NewInterner()
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

	first := in.String([]byte("principals"))
	if again := in.String([]byte("principals")); again != "principals" || !same(first, again) {
		t.Errorf("asked again: %q, shared %v; want the first string", again, same(first, again))
	}
	// Many more strings than the table holds: each comes back as asked,
	// whatever it displaced.
	for i := range 20 * internSlots {
		want := fmt.Sprintf("value-%d", i%(3*internSlots))
		if got := in.String([]byte(want)); got != want {
			t.Fatalf("String(%q) = %q", want, got)
		}
	}
	long := strings.Repeat("x", internMax+1)
	a, b := in.String([]byte(long)), in.String([]byte(long))
	if a != long || b != long || same(a, b) {
		t.Errorf("a string longer than %d: equal %v, shared %v; want equal, made apart", internMax, a == long && b == long, same(a, b))
	}
	var none *Interner
	if got := none.String([]byte("id")); got != "id" {
		t.Errorf("nil Interner: %q", got)
	}
}

// TestReaderInterns checks that objects read with an Interner share their
// keys and recurring values, and decode as without one.
func TestReaderInterns(t *testing.T) {
	in := NewInterner()
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
