package intern

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// TestTable checks that a Table returns the bytes asked for, every
// time, and that a string asked for again shares the memory of the first.
func TestTable(t *testing.T) {
	in := New()
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

	first := in.Bytes([]byte("principals"))
	if again := in.Bytes([]byte("principals")); again != "principals" || !same(first, again) {
		t.Errorf("asked again: %q, shared %v; want the first string", again, same(first, again))
	}
	// Many more strings than the table holds: each comes back as asked,
	// whatever it displaced.
	for i := range 20 * slots {
		want := fmt.Sprintf("value-%d", i%(3*slots))
		if got := in.Bytes([]byte(want)); got != want {
			t.Fatalf("String(%q) = %q", want, got)
		}
	}
	long := strings.Repeat("x", maxLen+1)
	a, b := in.Bytes([]byte(long)), in.Bytes([]byte(long))
	if a != long || b != long || same(a, b) {
		t.Errorf("a string longer than %d: equal %v, shared %v; want equal, made apart", maxLen, a == long && b == long, same(a, b))
	}
	var none *Table
	if got := none.Bytes([]byte("id")); got != "id" {
		t.Errorf("nil Interner: %q", got)
	}
}

// TestBoxed checks that Boxed and String hand out the value made before
// for an equal string, and hold each slot to one string.
func TestBoxed(t *testing.T) {
	in := New()
	a := in.Boxed(strings.Clone("viewer"))
	b := in.Boxed(strings.Clone("viewer"))
	if a != "viewer" || unsafe.StringData(a.(string)) != unsafe.StringData(b.(string)) {
		t.Errorf("Boxed twice: %q and %q, not one string", a, b)
	}
	if s := in.String(strings.Clone("viewer")); unsafe.StringData(s) != unsafe.StringData(a.(string)) {
		t.Error("String did not return the string Boxed made")
	}
	if s := in.Bytes([]byte("viewer")); unsafe.StringData(s) != unsafe.StringData(a.(string)) {
		t.Error("Bytes did not return the string Boxed made")
	}
	for i := range 3 * slots {
		want := fmt.Sprint(i)
		if got := in.String(want); got != want {
			t.Fatalf("String(%q) = %q", want, got)
		}
	}
}
