package pgtest

import (
	"strings"
	"testing"
)

// TestMissingPrograms: without PostgreSQL's programs, the error says how
// to install them.
func TestMissingPrograms(t *testing.T) {
	defer func(old string) { debianBin = old }(debianBin)
	debianBin = t.TempDir() + "/*/bin"
	t.Setenv("PATH", t.TempDir())
	_, err := start()
	if err == nil || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Errorf("start without the programs: %v, want a message saying apt-get install postgresql", err)
	}
}
