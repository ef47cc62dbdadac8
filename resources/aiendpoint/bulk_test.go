package aiendpoint

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/resources"
)

// listCounter counts the ListEndpoints calls a handler serves.
type listCounter struct{ n atomic.Int64 }

func (l *listCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/endpoints") {
			l.n.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

// TestReadMany lists endpoints where state records them: what it returns
// is what Read returns but timeUpdated; what it cannot vouch for (deleted,
// moved to another compartment, never there) it leaves out, for Read.
func TestReadMany(t *testing.T) {
	t.Parallel()
	var lists listCounter
	env := newEnv(t, envOptions{wrap: lists.wrap})
	ctx := t.Context()
	var ids []string
	for i := range 7 {
		id, _ := env.create(env.inputs("bulk-" + string(rune('a'+i))))
		ids = append(ids, id)
	}
	deleted, moved := ids[5], ids[6]
	if err := env.driver.Delete(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	to := env.inputs("bulk-g")
	to["compartmentId"] = env.otherCompartment
	if _, err := env.driver.Update(ctx, moved, env.inputs("bulk-g"), to); err != nil {
		t.Fatal(err)
	}
	// As state records them: all in the root compartment, and one that
	// never existed.
	never := "ocid1.ailanguageendpoint.oc1.iad.amaaaaaaneverexisted"
	var objs []resources.BulkObject
	for _, id := range append(slices.Clone(ids), never) {
		objs = append(objs, resources.BulkObject{ID: id, Attrs: resources.Attrs{"compartmentId": env.compartment, "displayName": "stale"}})
	}

	d := env.newDriver(env.config)
	d.pageLimit = 2 // 6 endpoints in the root compartment (one DELETED): 3 pages
	before := lists.n.Load()
	got, err := d.ReadMany(ctx, objs, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n := lists.n.Load() - before; n != 3 {
		t.Errorf("ReadMany made %d ListEndpoints calls, want 3 pages of 2", n)
	}
	if len(got) != 5 {
		t.Errorf("ReadMany returned %d endpoints, want the 5 live ones of the root compartment", len(got))
	}
	for _, id := range []string{deleted, moved, never} {
		if _, ok := got[id]; ok {
			t.Errorf("ReadMany returned %s, which is deleted, moved or was never there: Read must decide", id)
		}
	}
	for _, id := range ids[:5] {
		want, err := env.driver.Read(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := want[attrTimeUpdated]; !ok {
			t.Fatalf("Read(%s) has no timeUpdated", id)
		}
		delete(want, attrTimeUpdated)
		if !resources.Equal(got[id], want) {
			t.Errorf("ReadMany[%s] =\n%v\nwant what Read returns but timeUpdated:\n%v", id, got[id], want)
		}
	}
	if !slices.Equal(d.BulkOmitted(), []string{attrTimeUpdated}) {
		t.Errorf("BulkOmitted() = %v, want [timeUpdated]", d.BulkOmitted())
	}

	// No more pages than rounds of reads saved: 5 endpoints at 4 at once
	// save one round, so one page of 2, and the rest is left to Read.
	before = lists.n.Load()
	got, err = d.ReadMany(ctx, objs[:5], 4)
	if err != nil {
		t.Fatal(err)
	}
	if n := lists.n.Load() - before; n != 1 || len(got) > 2 {
		t.Errorf("ReadMany of 5 at parallelism 4: %d list calls, %d found; want 1 call, at most 2 found", n, len(got))
	}
	// A compartment holding no more than parallelism endpoints is not
	// listed: one round of reads is as fast.
	before = lists.n.Load()
	got, err = d.ReadMany(ctx, objs[:5], 5)
	if err != nil || len(got) != 0 || lists.n.Load() != before {
		t.Errorf("ReadMany of 5 at parallelism 5: %d found, %d list calls, %v; want none", len(got), lists.n.Load()-before, err)
	}

	// A compartment that cannot be listed is left to Read.
	for i := range objs {
		objs[i].Attrs = resources.Attrs{"compartmentId": "ocid1.compartment.oc1..unknown"}
	}
	if got, err := d.ReadMany(ctx, objs, 2); err != nil || len(got) != 0 {
		t.Errorf("ReadMany in an unknown compartment = %d found, %v; want none and no error", len(got), err)
	}
	// Only the end of the context is an error.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.ReadMany(cancelled, objs, 2); err == nil {
		t.Error("ReadMany with a cancelled context: no error")
	}
}

// TestFromSummaryCopiesEveryField: an EndpointSummary holds every field of
// an Endpoint but TimeUpdated (which BulkOmitted names), and fromSummary
// copies each. A field added to either by a new SDK fails here until
// ReadMany is checked against it.
func TestFromSummaryCopiesEveryField(t *testing.T) {
	t.Parallel()
	st := reflect.TypeFor[ailanguage.EndpointSummary]()
	et := reflect.TypeFor[ailanguage.Endpoint]()
	for i := range et.NumField() {
		f := et.Field(i)
		if _, ok := st.FieldByName(f.Name); !ok && f.Name != "TimeUpdated" {
			t.Errorf("Endpoint has %s, which EndpointSummary lacks: ReadMany cannot return it", f.Name)
		}
	}
	var s ailanguage.EndpointSummary
	sv := reflect.ValueOf(&s).Elem()
	for i := range st.NumField() {
		f := sv.Field(i)
		switch f.Kind() {
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Map:
			f.Set(reflect.MakeMap(f.Type()))
		case reflect.String:
			f.SetString("x")
		default:
			t.Fatalf("EndpointSummary.%s is a %s: teach this test to fill it", st.Field(i).Name, f.Kind())
		}
		if _, ok := et.FieldByName(st.Field(i).Name); !ok {
			t.Errorf("EndpointSummary has %s, which Endpoint lacks", st.Field(i).Name)
		}
	}
	ev := reflect.ValueOf(fromSummary(s))
	for i := range st.NumField() {
		name := st.Field(i).Name
		if got := ev.FieldByName(name); !reflect.DeepEqual(got.Interface(), sv.Field(i).Interface()) {
			t.Errorf("fromSummary does not copy %s", name)
		}
	}
}
