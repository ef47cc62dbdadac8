package main

import (
	"flag"
	"fmt"

	"reconcile/resources/emulator/server"
)

var emulateCmd = &command{
	name: "emulate", args: "[--listen ADDR] [--data DIR]",
	summary: "Serve a local emulator of the OCI, GCP and Datadog APIs until stopped.",
	detail: `The emulator speaks the real wire protocols under the real path prefixes:
  /20221001/...  OCI AI Language (endpoints, work requests, models, projects)
  /v1/...        GCP Service Management (services, getIamPolicy, setIamPolicy)
  /api/v2/...    Datadog (restriction_policy, current_user)
It listens on loopback only and keeps its data in DIR/emulator.db, so it
survives a restart. On start it writes DIR/credentials/: oci_config (profile
DEFAULT, key_file oci_api_key.pem beside it) and env (DD_API_KEY, DD_APP_KEY,
GOOGLE_OAUTH_ACCESS_TOKEN); requests must carry those, as the real APIs check.
Seed data: the tenancy of oci_config (the root compartment) with a project, an
ACTIVE trained model and a FAILED one; services orders.endpoints.acme-prod.cloud.goog
(with an IAM policy) and inventory.endpoints.acme-prod.cloud.goog, consumer project
acme-consumer; a Datadog current user in an org. As in a real tenancy, OCI adds
the defined tags Oracle-Tags.CreatedBy and Oracle-Tags.CreatedOn to every new
endpoint, and keeps them when an update replaces definedTags.

Admin API (for tests):
  GET /_emulator/credentials  {"ociConfig", "ociPrivateKeyPem", "env"}: what
                              --emulator=URL uses
  GET /_emulator/settings     the settings below
  PUT /_emulator/settings     {"latencyMs": 50, "faultRate": 0.2,
                               "faultStatuses": [429, 500, 503, 0],
                               "createDelayMs": 2000, "updateDelayMs": 1000,
                               "deleteDelayMs": 1000}
                              latency is added to every cloud call; a share
                              faultRate of calls fails with one of
                              faultStatuses (0 drops the connection); the
                              delays set how long an endpoint stays
                              CREATING, UPDATING and DELETING
  GET /_emulator/stats        {"requests", "faultsInjected"}
  GET /_emulator/health       {"status": "ok"}
Out-of-band changes, as another user would make them, go through the real APIs.

Other commands reach it with --emulator=http://ADDR.`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "loopback address to listen on")
		fs.StringVar(&o.data, "data", ".reconcile/emulator", "directory for the emulator's data and credentials")
	},
	run: func(c *cli, o *cmdOpts, args []string) int {
		if len(args) > 0 {
			return c.errorf("emulate takes no arguments, got %q", args)
		}
		srv, err := server.Start(server.Options{Listen: o.listen, DataDir: o.data})
		if err != nil {
			return c.errorf("%v", err)
		}
		fmt.Fprintf(c.stdout, "Emulator listening on %s (data in %s). Stop it with Ctrl-C.\nUse it from other commands with --emulator=%s\n", srv.URL, o.data, srv.URL)
		<-c.ctx.Done()
		if err := srv.Close(); err != nil {
			return c.errorf("%v", err)
		}
		fmt.Fprintln(c.stdout, "Emulator stopped.")
		return exitOK
	},
}
