package restrictionpolicy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
)

// capture answers every request with 204 and records the last one.
type capture struct{ req *http.Request }

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	c.req = r
	return &http.Response{StatusCode: http.StatusNoContent, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}, Request: r}, nil
}

func TestClientURLAndHeaders(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cfg     restrictionpolicy.Config
		wantURL string // "" when the call must fail before sending
	}{
		"default site":     {restrictionpolicy.Config{}, "https://api.datadoghq.com/api/v2/restriction_policy/dashboard:a-b"},
		"EU site":          {restrictionpolicy.Config{Site: "datadoghq.eu"}, "https://api.datadoghq.eu/api/v2/restriction_policy/dashboard:a-b"},
		"US5 site":         {restrictionpolicy.Config{Site: "us5.datadoghq.com"}, "https://api.us5.datadoghq.com/api/v2/restriction_policy/dashboard:a-b"},
		"base URL wins":    {restrictionpolicy.Config{Site: "datadoghq.eu", BaseURL: "http://127.0.0.1:8126/"}, "http://127.0.0.1:8126/api/v2/restriction_policy/dashboard:a-b"},
		"site with scheme": {restrictionpolicy.Config{Site: "https://datadoghq.eu"}, ""},
		"bad base URL":     {restrictionpolicy.Config{BaseURL: "127.0.0.1:8126"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var c capture
			cfg := tc.cfg
			cfg.APIKey, cfg.AppKey, cfg.Version = "api-key-value", "app-key-value", "1.2.3"
			cfg.HTTPClient = &http.Client{Transport: &c}
			err := restrictionpolicy.NewClient(cfg).DeleteRestrictionPolicy(t.Context(), "dashboard:a-b")
			if tc.wantURL == "" {
				if err == nil || c.req != nil {
					t.Errorf("Delete with %+v: error %v, sent %v; want an error before sending", tc.cfg, err, c.req != nil)
				}
				return
			}
			if err != nil {
				t.Fatalf("Delete with %+v: %v", tc.cfg, err)
			}
			if got := c.req.URL.String(); got != tc.wantURL {
				t.Errorf("Delete with %+v sent to %s, want %s", tc.cfg, got, tc.wantURL)
			}
			for h, want := range map[string]string{
				"DD-API-KEY":         "api-key-value",
				"DD-APPLICATION-KEY": "app-key-value",
				"User-Agent":         "github.com/reconcile-dev/reconcile/1.2.3",
				"Accept":             "*/*",
			} {
				if got := c.req.Header.Get(h); got != want {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("DD_API_KEY", "from-env-api")
	t.Setenv("DD_APP_KEY", "from-env-app")
	t.Setenv("DD_SITE", "datadoghq.eu")
	got := restrictionpolicy.ConfigFromEnv()
	if got.APIKey != "from-env-api" || got.AppKey != "from-env-app" || got.Site != "datadoghq.eu" || got.BaseURL != "" {
		t.Errorf("ConfigFromEnv() = %+v", got)
	}
}
