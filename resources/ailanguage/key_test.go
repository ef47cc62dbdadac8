package ailanguage_test

import (
	"crypto/rsa"
	"sync/atomic"
	"testing"

	oci "github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/ailanguage"
	"github.com/reconcile-dev/reconcile/resources/ailanguage/ailanguagetest"
)

// countingKeys counts the calls for the private key.
type countingKeys struct {
	common.ConfigurationProvider
	n atomic.Int64
}

func (p *countingKeys) PrivateRSAKey() (*rsa.PrivateKey, error) {
	p.n.Add(1)
	return p.ConfigurationProvider.PrivateRSAKey()
}

// The key is read and parsed once per client, not once per signed request.
func TestKeyParsedOnce(t *testing.T) {
	env := ailanguagetest.New(t, nil)
	keys := &countingKeys{ConfigurationProvider: common.CustomProfileConfigProvider(env.Config.ConfigFile, "DEFAULT")}
	cfg := env.Config
	cfg.ConfigFile, cfg.Provider = "", keys
	sdk, err := ailanguage.NewClient(cfg).SDK()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := sdk.GetProject(ailanguage.Ctx(t.Context()), oci.GetProjectRequest{ProjectId: &env.Project}); err != nil {
			t.Fatalf("a signed request: %v", err)
		}
	}
	if n := keys.n.Load(); n != 1 {
		t.Errorf("the key was asked for %d times for 3 requests, want once", n)
	}
}
