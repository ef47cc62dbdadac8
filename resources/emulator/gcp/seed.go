package gcp

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// Seeded objects: two managed services of project acme-prod, one with a
// policy and one without, and a consumer project with a policy on the first.
const (
	SeedProducerProject = "acme-prod"
	SeedService         = "orders.endpoints.acme-prod.cloud.goog"
	SeedEmptyService    = "inventory.endpoints.acme-prod.cloud.goog"
	SeedConsumer        = "acme-consumer"
)

// Seed creates the seed services and policies that do not exist yet; it
// never overwrites, so it is safe on every start. Seeded etags are
// deterministic, so fresh emulators answer alike.
func (e *Emulator) Seed() error {
	services := []managedService{
		{
			ServiceName:       SeedService,
			ProducerProjectID: SeedProducerProject,
			Policy: &iamPolicy{
				Version: 1,
				Bindings: []iamBinding{
					{Role: "roles/servicemanagement.serviceConsumer", Members: []string{
						"group:orders-clients@acme.example",
						"user:alice@acme.example",
					}},
					{Role: "roles/servicemanagement.serviceController", Members: []string{
						"serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com",
					}},
				},
				Etag: seedEtag(SeedService),
			},
		},
		{ServiceName: SeedEmptyService, ProducerProjectID: SeedProducerProject},
	}
	consumerKey := SeedService + "/" + SeedConsumer
	consumerPolicy := iamPolicy{
		Version: 1,
		Bindings: []iamBinding{
			{Role: "roles/servicemanagement.serviceConsumer", Members: []string{
				"serviceAccount:checkout@acme-consumer.iam.gserviceaccount.com",
			}},
		},
		Etag: seedEtag(consumerKey),
	}
	return e.store.Update(func(tx emulator.Tx) error {
		for _, s := range services {
			var old managedService
			ok, err := tx.Get(bucketServices, s.ServiceName, &old)
			if err != nil {
				return err
			}
			if !ok {
				if err := tx.Put(bucketServices, s.ServiceName, s); err != nil {
					return err
				}
			}
		}
		var old iamPolicy
		ok, err := tx.Get(bucketConsumers, consumerKey, &old)
		if err != nil || ok {
			return err
		}
		return tx.Put(bucketConsumers, consumerKey, consumerPolicy)
	})
}

// SeedData is the "gcp" section of an emulator seed file: managed services
// and consumer policies to create besides those of Seed. Both lists are
// optional.
type SeedData struct {
	Services         []ServiceSeed        `json:"services,omitempty"`
	ConsumerPolicies []ConsumerPolicySeed `json:"consumerPolicies,omitempty"`
}

// ServiceSeed is a managed service of a seed file, with its IAM policy
// (none when Policy is nil).
type ServiceSeed struct {
	Name              string      `json:"name"`              // e.g. billing.endpoints.acme-prod.cloud.goog
	ProducerProjectID string      `json:"producerProjectId"` // a project id
	Policy            *PolicySeed `json:"policy,omitempty"`
}

// ConsumerPolicySeed is the IAM policy of a consumer project on a service
// of the seed file or of the data.
type ConsumerPolicySeed struct {
	Service  string     `json:"service"`
	Consumer string     `json:"consumer"` // a project id
	Policy   PolicySeed `json:"policy"`
}

// PolicySeed is an IAM policy of a seed file; its etag is derived from the
// service (and consumer), as Seed's are.
type PolicySeed struct {
	Version  int64         `json:"version,omitempty"` // 1 by default; 3 when a binding has a condition
	Bindings []BindingSeed `json:"bindings"`
}

// BindingSeed grants a role to members, as in a google.iam.v1.Policy.
type BindingSeed struct {
	Role      string         `json:"role"`
	Members   []string       `json:"members"`
	Condition *ConditionSeed `json:"condition,omitempty"`
}

// ConditionSeed is a binding's condition (a google.type.Expr).
type ConditionSeed struct {
	Expression  string `json:"expression"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

var (
	// serviceNameRE is a DNS name of at least two labels, as managed
	// service names are.
	serviceNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$`)
	// projectIDRE is a Google Cloud project id: 6 to 30 lowercase letters,
	// digits and hyphens, starting with a letter and not ending with a hyphen.
	projectIDRE = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
)

// policyFrom checks a seed policy as setIamPolicy would and returns it as
// stored, with etag.
func policyFrom(p PolicySeed, etag string) (iamPolicy, error) {
	out := iamPolicy{Version: p.Version}
	for _, b := range p.Bindings {
		nb := iamBinding{Role: b.Role, Members: b.Members}
		if c := b.Condition; c != nil {
			nb.Condition = &iamExpr{Expression: c.Expression, Title: c.Title, Description: c.Description}
		}
		out.Bindings = append(out.Bindings, nb)
	}
	if err := validatePolicy(&out); err != nil {
		// Name the field, as the google.rpc.BadRequest detail does.
		var g *gerr
		if errors.As(err, &g) && len(g.details) == 1 {
			br, _ := g.details[0].(map[string]any)
			fv, _ := br["fieldViolations"].([]any)
			if len(fv) == 1 {
				if f, ok := fv[0].(map[string]string); ok {
					return out, fmt.Errorf("%s: %s", f["field"], g.msg)
				}
			}
			return out, errors.New(g.msg)
		}
		return out, err
	}
	out.Version = max(out.Version, 1)
	if hasConditions(out.Bindings) && out.Version != 3 {
		return out, errors.New("policy.version: Policies with conditional role bindings must have version 3.")
	}
	out.Etag = etag
	return out, nil
}

// SeedFrom checks d and creates, inside the caller's transaction tx, each
// service and consumer policy of d that does not exist yet; an existing one
// is left as it is (with the policy it has now), so seeding again with the
// same data changes nothing. It reports how many it added and how many it
// left. Policies are checked as setIamPolicy checks them; a consumer policy
// may name a service of d or one already in the data, such as Seed's. The
// first problem is returned naming the entry, as in `services[0] "NAME":
// ...`, and nothing should then be committed.
func (e *Emulator) SeedFrom(tx emulator.Tx, d SeedData) (added, kept int, err error) {
	seen := map[string]int{}
	for i, s := range d.Services {
		at := func(err error) error { return fmt.Errorf("services[%d] %q: %w", i, s.Name, err) }
		switch {
		case !serviceNameRE.MatchString(s.Name):
			return 0, 0, at(errors.New("name must be a DNS name such as billing.endpoints.PROJECT.cloud.goog"))
		case !projectIDRE.MatchString(s.ProducerProjectID):
			return 0, 0, at(fmt.Errorf("producerProjectId %q is not a project id (6 to 30 lowercase letters, digits and hyphens, starting with a letter)", s.ProducerProjectID))
		}
		if j, dup := seen[s.Name]; dup {
			return 0, 0, at(fmt.Errorf("the same name as services[%d]", j))
		}
		seen[s.Name] = i
		ms := managedService{ServiceName: s.Name, ProducerProjectID: s.ProducerProjectID}
		if s.Policy != nil {
			p, err := policyFrom(*s.Policy, seedEtag(s.Name))
			if err != nil {
				return 0, 0, at(err)
			}
			ms.Policy = &p
		}
		var old managedService
		found, err := tx.Get(bucketServices, s.Name, &old)
		if err != nil {
			return 0, 0, at(err)
		}
		if found {
			kept++
			continue
		}
		if err := tx.Put(bucketServices, s.Name, ms); err != nil {
			return 0, 0, at(err)
		}
		added++
	}
	seenConsumer := map[string]int{}
	for i, c := range d.ConsumerPolicies {
		key := c.Service + "/" + c.Consumer
		at := func(err error) error { return fmt.Errorf("consumerPolicies[%d] %q: %w", i, key, err) }
		if !projectIDRE.MatchString(c.Consumer) {
			return 0, 0, at(fmt.Errorf("consumer %q is not a project id (6 to 30 lowercase letters, digits and hyphens, starting with a letter)", c.Consumer))
		}
		if j, dup := seenConsumer[key]; dup {
			return 0, 0, at(fmt.Errorf("the same service and consumer as consumerPolicies[%d]", j))
		}
		seenConsumer[key] = i
		var svc managedService
		found, err := tx.Get(bucketServices, c.Service, &svc)
		if err == nil && !found {
			err = fmt.Errorf("service %q is no service of the seed file or of the emulator's data", c.Service)
		}
		if err != nil {
			return 0, 0, at(err)
		}
		p, err := policyFrom(c.Policy, seedEtag(key))
		if err != nil {
			return 0, 0, at(err)
		}
		var old iamPolicy
		found, err = tx.Get(bucketConsumers, key, &old)
		if err != nil {
			return 0, 0, at(err)
		}
		if found {
			kept++
			continue
		}
		if err := tx.Put(bucketConsumers, key, p); err != nil {
			return 0, 0, at(err)
		}
		added++
	}
	return added, kept, nil
}

func seedEtag(name string) string {
	sum := sha256.Sum256([]byte("seed:" + name))
	return base64.StdEncoding.EncodeToString(sum[:8])
}
