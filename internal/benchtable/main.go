// Command benchtable reads the output of `go test -bench` on its standard
// input and prints the benchmarks as one table: a row per benchmark, a
// column per unit any of them reports (ns/op, B/op, allocs/op and the
// custom metrics such as ns/resource or syncs/create). Lines that are not
// benchmark results (ok, FAIL, logs) are passed through after the table.
// `make bench` uses it.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
)

// result is one line of benchmark output.
type result struct {
	name    string
	metrics map[string]float64
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	var results []result
	var units, other []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		r, ok := parse(line)
		if !ok {
			if strings.HasPrefix(line, "ok") || strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "---") || strings.HasPrefix(line, "panic") {
				other = append(other, line)
			}
			continue
		}
		for u := range r.metrics {
			if !seen[u] {
				seen[u] = true
				units = append(units, u)
			}
		}
		results = append(results, r)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	units = ordered(units)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "benchmark\t")
	for _, u := range units {
		fmt.Fprintf(tw, "%s\t", u)
	}
	fmt.Fprintln(tw)
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t", r.name)
		for _, u := range units {
			if v, ok := r.metrics[u]; ok {
				fmt.Fprintf(tw, "%s\t", format(u, v))
			} else {
				fmt.Fprint(tw, "\t")
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range other {
		fmt.Fprintln(out, l)
	}
	return nil
}

// parse reads "BenchmarkX/sub-2  3  123 ns/op  4 B/op ...".
func parse(line string) (result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return result{}, false
	}
	if _, err := strconv.Atoi(f[1]); err != nil {
		return result{}, false
	}
	name := strings.TrimPrefix(f[0], "Benchmark")
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i] // the GOMAXPROCS suffix
		}
	}
	r := result{name: name, metrics: map[string]float64{}}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return result{}, false
		}
		r.metrics[f[i+1]] = v
	}
	return r, true
}

// ordered puts the standard units first, then the others as they came.
func ordered(units []string) []string {
	var out []string
	for _, u := range []string{"ns/op", "B/op", "allocs/op"} {
		for _, v := range units {
			if v == u {
				out = append(out, u)
			}
		}
	}
	for _, u := range units {
		if u != "ns/op" && u != "B/op" && u != "allocs/op" {
			out = append(out, u)
		}
	}
	return out
}

// format shows durations in ms above a millisecond, and other figures with
// three significant digits.
func format(unit string, v float64) string {
	if unit == "ns/op" && v >= 1e6 {
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + " ms"
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
