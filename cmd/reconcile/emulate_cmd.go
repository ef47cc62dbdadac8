package main

import (
	"flag"
	"fmt"

	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/resources/emulator/datadog"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

var emulateCmd = &command{
	name: "emulate", args: "[--listen ADDR] [--data DIR] [--seed FILE] [--datadog-rate-limit N]",
	summary: "Serve a local emulator of the OCI, GCP and Datadog APIs until stopped.",
	detail: `The emulator speaks the real wire protocols under the real path prefixes:
  /20221001/...  OCI AI Language (projects, models, endpoints, work requests)
  /v1/...        GCP Service Management (services, getIamPolicy, setIamPolicy)
  /api/v2/...    Datadog (restriction_policy, current_user, users/{id}/memberships)
  /tokeninfo     Google's OAuth 2 tokeninfo (oauth2.googleapis.com/tokeninfo):
                 whose the access token is
  /oauth2/v2/tokeninfo  the same in the shape of www.googleapis.com/oauth2/v2,
                 which Google's Go client library reads
It listens on loopback only and keeps its data in DIR/emulator.db, so it
survives a restart. On start it writes DIR/credentials/: oci_config (profile
DEFAULT, key_file oci_api_key.pem beside it) and env (DD_API_KEY, DD_APP_KEY,
GOOGLE_OAUTH_ACCESS_TOKEN); requests must carry those, as the real APIs check.
The GCP access token belongs to the service account
reconcile@acme-prod.iam.gserviceaccount.com, as tokeninfo says: it is the
caller whose own IAM roles a plan refuses to remove (--allow-self-lockout), and
a seed file may grant it roles (the member
"serviceAccount:reconcile@acme-prod.iam.gserviceaccount.com", below). The
Datadog keys belong to the current user, in its org, role and teams.
Seed data: the tenancy of oci_config (the root compartment) with a project, an
ACTIVE trained model and a FAILED one; services orders.endpoints.acme-prod.cloud.goog
(with an IAM policy) and inventory.endpoints.acme-prod.cloud.goog, consumer project
acme-consumer; a Datadog current user in an org. As in a real tenancy, OCI adds
the defined tags Oracle-Tags.CreatedBy and Oracle-Tags.CreatedOn to every new
project, model and endpoint, and keeps them when an update replaces
definedTags; defined tags must name a tag namespace and key of the tenancy
(Oracle-Tags, Operations: CostCenter, Environment, Owner; Finance: Budget,
Project), or the create is refused with 400 as OCI does. New objects carry the
system tag orcl-cloud.free-tier-retained (an Always Free tenancy). Creating a
model trains it: it stays CREATING for trainingDelayMs (1s by default).

--seed FILE adds objects from a JSON file, for example:
  {"oci": {
     "compartments": [{"id": "ocid1.compartment.oc1..team", "name": "team"}],
     "projects": [{"id": "ocid1.ailanguageproject.oc1.iad.team", "displayName":
                   "team", "compartmentId": "ocid1.compartment.oc1..team"}],
     "models": [{"id": "ocid1.ailanguagemodel.oc1.iad.team", "displayName":
                 "team-model", "projectId": "ocid1.ailanguageproject.oc1.iad.team",
                 "state": "ACTIVE"}]},
   "gcp": {
     "services": [{"name": "billing.endpoints.acme-prod.cloud.goog",
                   "producerProjectId": "acme-prod", "policy": {"bindings": [
                     {"role": "roles/servicemanagement.serviceConsumer",
                      "members": ["user:a@acme.example"]},
                     {"role": "roles/servicemanagement.serviceController",
                      "members": ["serviceAccount:reconcile@acme-prod.iam.gserviceaccount.com"]}]}}],
     "consumerPolicies": [{"service": "billing.endpoints.acme-prod.cloud.goog",
                           "consumer": "acme-other", "policy": {"bindings": [
                             {"role": "roles/servicemanagement.serviceConsumer",
                              "members": ["group:other@acme.example"]}]}}]},
   "datadog": {
     "user": {"email": "dev@acme.example", "name": "Acme Dev"},
     "policies": [{"resourceId": "dashboard:made-in-the-ui", "bindings": [
                    {"relation": "viewer", "principals": ["role:<UUID>"]}]}]}}
Every section and list is optional; any other key is an error. Optional fields:
  compartments  parentId (default: the tenancy; list parents first)
  projects      compartmentId (default: the tenancy), description, state,
                freeformTags
  models        compartmentId (default: the project's), state,
                lifecycleDetails, modelType (TEXT_CLASSIFICATION, the default,
                or NAMED_ENTITY_RECOGNITION), languageCode (default "en"),
                description, version, freeformTags
  services      policy (default: none)
  gcp policy    version (default 1; 3 when a binding has a condition),
                bindings[].condition {"expression", "title", "description"}
  datadog user  every field: id, email, handle, name, orgId, orgName, roleId,
                roleName, teamIds (ids are UUIDs; unset ones keep the
                built-in values; the user is in no team by default)
OCI states are CREATING, ACTIVE (the default), UPDATING, DELETING, DELETED and
FAILED. References may name built-in objects too (the tenancy, the built-in
project, orders.endpoints.acme-prod.cloud.goog). Every entry is checked as the
APIs check values (OCIDs, project ids, roles, members, relations, principals);
a bad one stops the emulator before it listens, with an error naming the file
and the entry (e.g. oci.models[0]), and nothing of the file is written.
Seeding is idempotent: an object that exists already is left as it is, so a
restart with the same file keeps the changes made since. The user only applies
to a data directory without one (its first start), and a Datadog policy
deleted after it was seeded is not made again.

Admin API (for tests):
  GET /_emulator/credentials  {"ociConfig", "ociPrivateKeyPem", "env"}: what
                              --emulator=URL uses
  GET /_emulator/settings     the settings below
  PUT /_emulator/settings     {"latencyMs": 50, "faultRate": 0.2,
                               "faultStatuses": [429, 500, 503, 0],
                               "createDelayMs": 2000, "updateDelayMs": 1000,
                               "deleteDelayMs": 1000, "datadogRateLimit": 1000,
                               "trainingDelayMs": 1000, "trainingFailure": ""}
                              latency is added to every cloud call; a share
                              faultRate of calls fails with one of
                              faultStatuses (0 drops the connection); the
                              delays set how long an endpoint or project stays
                              CREATING, UPDATING and DELETING (and a model
                              UPDATING and DELETING); trainingDelayMs how long
                              a model trains (0 or left out: 1000; negative:
                              no delay); a trainingFailure text makes every
                              training started afterwards end FAILED with it
                              as the model's lifecycleDetails;
                              datadogRateLimit is how many Datadog calls a
                              minute each route takes before answering 429
                              (0 or left out: the --datadog-rate-limit the
                              emulator started with; negative: no limit).
                              Every field left out is reset to its default;
                              the answer is the settings now in force
  GET /_emulator/stats        {"requests", "faultsInjected", "connections"}:
                              cloud calls served, faults injected, TCP
                              connections accepted
  GET /_emulator/health       {"status": "ok"}
Out-of-band changes, as another user would make them, go through the real APIs.
The Datadog API knows one user, the one reconcile's keys belong to, and, as
Datadog does, refuses a restriction policy that would lower that user's own
access to the resource unless the POST carries allow_self_lockout=true: a
change made as someone else that leaves the user out needs it.

Other commands reach it with --emulator=http://ADDR.`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "loopback address to listen on")
		fs.StringVar(&o.data, "data", ".reconcile/emulator", "directory for the emulator's data and credentials")
		fs.StringVar(&o.seed, "seed", "", "JSON `file` of objects to add to the seed data (format above)")
		fs.IntVar(&o.ddRateLimit, "datadog-rate-limit", datadog.DefaultRateLimit, "take `N` Datadog calls a minute on each route (restriction_policy, current_user), then answer 429 until the next minute; 0 means the default, a negative value no limit")
	},
	run: func(c *cli, o *cmdOpts, args []string) int {
		if len(args) > 0 {
			return c.errorf("emulate takes no arguments, got %q", args)
		}
		srv, err := server.Start(server.Options{Listen: o.listen, DataDir: o.data, SeedFile: o.seed, DatadogRateLimit: o.ddRateLimit})
		if err != nil {
			return c.errorf("%v", err)
		}
		if o.seed != "" {
			fmt.Fprintf(c.stdout, "Seeded from %s: %s added, %d already there (left as they are).\n", o.seed, render.Count(srv.Seeded.Added, "object", "objects"), srv.Seeded.Kept)
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
