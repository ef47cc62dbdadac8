package endpointsiam

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reconcile-dev/reconcile/resources"
)

// scope says whose IAM policy a resource writes: a managed service's, or a
// consumer project's on a service.
type scope int

const (
	serviceScope   scope = iota // services/S
	consumersScope              // services/S/consumers/C
)

// target is the object whose policy is written.
type target struct {
	service  string // bare service name
	consumer string // bare consumer project; "" for a service's own policy
}

// resource is the API's resource name of the policy's object.
func (t target) resource() string {
	if t.consumer == "" {
		return "services/" + t.service
	}
	return "services/" + t.service + "/consumers/" + t.consumer
}

// attrs returns the attributes naming t, in canonical form: as the
// provider's state holds them, serviceName "services/S" for a service's
// policy; serviceName "S" and consumerProject "services/S/consumers/C" for
// a consumer's.
func (t target) attrs() resources.Attrs {
	if t.consumer == "" {
		return resources.Attrs{"serviceName": t.resource()}
	}
	return resources.Attrs{"serviceName": t.service, "consumerProject": t.resource()}
}

// targetOf reads the target from inputs: serviceName "S" or "services/S",
// and for consumers consumerProject "C", "S/C" or "services/S/consumers/C".
// Bad inputs are *resources.AttrError values.
func (s scope) targetOf(in resources.Attrs) (target, error) {
	_, service, err := serviceArg(in)
	if err != nil {
		return target{}, err
	}
	if s == serviceScope {
		return target{service: service}, nil
	}
	_, consumer, err := consumerArg(in, service)
	if err != nil {
		return target{}, err
	}
	return target{service: service, consumer: consumer}, nil
}

// parseResource reads the first part of an id: "services/S" or "S" for a
// service, "services/S/consumers/C" or "S/C" for a consumer.
func (s scope) parseResource(text string) (target, error) {
	parts := strings.Split(text, "/")
	var t target
	switch {
	case s == serviceScope && len(parts) == 1:
		t.service = parts[0]
	case s == serviceScope && len(parts) == 2 && parts[0] == "services":
		t.service = parts[1]
	case s == consumersScope && len(parts) == 2:
		t.service, t.consumer = parts[0], parts[1]
	case s == consumersScope && len(parts) == 4 && parts[0] == "services" && parts[2] == "consumers":
		t.service, t.consumer = parts[1], parts[3]
	}
	if t.service == "" || (s == consumersScope && t.consumer == "") {
		if s == serviceScope {
			return target{}, fmt.Errorf("%q is not a service: want services/NAME or NAME", text)
		}
		return target{}, fmt.Errorf("%q is not a service consumer: want services/NAME/consumers/PROJECT or NAME/PROJECT", text)
	}
	return t, nil
}

// iamID is a parsed id of an IAM resource, the form the provider imports:
// "RESOURCE", "RESOURCE ROLE [TITLE]" or "RESOURCE ROLE MEMBER [TITLE]",
// where TITLE, the title of the binding's condition, is the rest of the
// text and may hold spaces.
type iamID struct {
	target
	role, member, title string
}

// parseID reads an id with fields leading parts (1 for a policy, 2 for a
// binding, 3 for a member) before the optional condition title.
func (s scope) parseID(id string, fields int) (iamID, error) {
	rest := strings.TrimSpace(id)
	parts := make([]string, 0, fields)
	for len(parts) < fields && rest != "" {
		f, r, _ := strings.Cut(rest, " ")
		parts = append(parts, f)
		rest = strings.TrimLeft(r, " ")
	}
	want := [...]string{"", "RESOURCE", "RESOURCE ROLE [CONDITION_TITLE]", "RESOURCE ROLE MEMBER [CONDITION_TITLE]"}[fields]
	if len(parts) < fields || (fields == 1 && rest != "") {
		return iamID{}, fmt.Errorf("%q is not an id of this type: want %q", id, want)
	}
	t, err := s.parseResource(parts[0])
	if err != nil {
		return iamID{}, err
	}
	out := iamID{target: t, title: rest}
	if fields > 1 {
		out.role = parts[1]
	}
	if fields > 2 {
		out.member = parts[2]
	}
	return out, nil
}

// String is the id in canonical form.
func (id iamID) String() string {
	parts := []string{id.resource()}
	for _, p := range []string{id.role, id.member, id.title} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// errAmbiguous is matched by the error of a read whose id, naming a
// condition by its title only, matches several bindings.
var errAmbiguous = errors.New("several conditions of the role have this title")
