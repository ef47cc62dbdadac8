package main

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	in := `goos: linux
BenchmarkPlanNoRefresh/bbolt/N=1000-2   	       3	  41234567 ns/op	 5000000 B/op	   60000 allocs/op	 41234 ns/resource
BenchmarkApply/bbolt/N=1000-2         	       3	 291927693 ns/op	    291926 ns/resource	        0.3307 syncs/create
some log line
ok  	reconcile/engine	1.110s
`
	var out strings.Builder
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want header, 2 rows and ok:\n%s", len(lines), out.String())
	}
	head := strings.Fields(lines[0])
	want := []string{"benchmark", "ns/op", "B/op", "allocs/op", "ns/resource", "syncs/create"}
	if strings.Join(head, " ") != strings.Join(want, " ") {
		t.Errorf("header = %q, want %q", head, want)
	}
	if !strings.Contains(lines[1], "PlanNoRefresh/bbolt/N=1000") || !strings.Contains(lines[1], "41.2 ms") || strings.Contains(lines[1], "-2 ") {
		t.Errorf("row = %q", lines[1])
	}
	if !strings.Contains(lines[2], "0.331") || !strings.Contains(lines[2], "291.9 ms") {
		t.Errorf("row = %q", lines[2])
	}
	if lines[3] != "ok  \treconcile/engine\t1.110s" {
		t.Errorf("last line = %q", lines[3])
	}
}
